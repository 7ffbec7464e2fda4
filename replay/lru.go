package replay

import "container/list"

// lru remembers the latest values put, up to its capacity.
type lru[V any] struct {
	capacity int
	order    *list.List // most recent first; elements hold *lruEntry
	entries  map[string]*list.Element
}

type lruEntry[V any] struct {
	key   string
	value V
}

func newLRU[V any](capacity int) *lru[V] {
	return &lru[V]{capacity: capacity, order: list.New(), entries: map[string]*list.Element{}}
}

func (l *lru[V]) get(key string) (V, bool) {
	if e, ok := l.entries[key]; ok {
		l.order.MoveToFront(e)
		return e.Value.(*lruEntry[V]).value, true
	}
	var zero V
	return zero, false
}

func (l *lru[V]) put(key string, value V) {
	if e, ok := l.entries[key]; ok {
		e.Value.(*lruEntry[V]).value = value
		l.order.MoveToFront(e)
		return
	}
	if l.order.Len() >= l.capacity {
		last := l.order.Back()
		l.order.Remove(last)
		delete(l.entries, last.Value.(*lruEntry[V]).key)
	}
	l.entries[key] = l.order.PushFront(&lruEntry[V]{key: key, value: value})
}
