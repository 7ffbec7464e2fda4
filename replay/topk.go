package replay

import (
	"cmp"
	"container/heap"
	"slices"
)

// topK counts keys in bounded memory: the Space-Saving algorithm (Metwally,
// Agrawal and El Abbadi, 2005). Up to its capacity it counts exactly;
// beyond it, a new key takes the place of the least counted one and
// inherits that count as its possible error, so that every key counted
// more often than total/capacity is still there, and count-err is a count
// it certainly had.
type topK[V any] struct {
	capacity int
	seq      int
	entries  map[string]*topEntry[V]
	byCount  countHeap[V]
}

type topEntry[V any] struct {
	key   string
	count int
	err   int
	seq   int // when the key came, for a stable order among equals
	index int // in the heap
	value V
}

func newTopK[V any](capacity int) *topK[V] {
	return &topK[V]{capacity: capacity, entries: map[string]*topEntry[V]{}}
}

// add counts key once; fresh starts the entry's value when the key is new
// (or takes an evicted key's place). It returns the entry.
func (t *topK[V]) add(key string, fresh func() V) *topEntry[V] {
	if e, ok := t.entries[key]; ok {
		e.count++
		heap.Fix(&t.byCount, e.index)
		return e
	}
	t.seq++
	e := &topEntry[V]{key: key, count: 1, seq: t.seq}
	if len(t.entries) >= t.capacity {
		least := heap.Pop(&t.byCount).(*topEntry[V])
		delete(t.entries, least.key)
		e.count, e.err = least.count+1, least.count
	}
	e.value = fresh()
	t.entries[key] = e
	heap.Push(&t.byCount, e)
	return e
}

// sorted returns the entries by the count they certainly had, most first;
// among equals the one that came first comes first.
func (t *topK[V]) sorted() []*topEntry[V] {
	out := make([]*topEntry[V], 0, len(t.entries))
	for _, e := range t.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *topEntry[V]) int {
		if c := cmp.Compare(b.count-b.err, a.count-a.err); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return out
}

// countHeap orders entries by count, least first.
type countHeap[V any] []*topEntry[V]

func (h countHeap[V]) Len() int { return len(h) }
func (h countHeap[V]) Less(i, j int) bool {
	if h[i].count != h[j].count {
		return h[i].count < h[j].count
	}
	return h[i].seq < h[j].seq
}
func (h countHeap[V]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *countHeap[V]) Push(x any) {
	e := x.(*topEntry[V])
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *countHeap[V]) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
