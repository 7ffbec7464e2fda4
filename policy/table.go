package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// table maps names to values. It is a slice sorted by name rather than a
// map because a Go map literal is built when the package is initialised,
// and the shim is a new process for every command an agent runs: the
// rule table as maps cost each run 0.4 ms before main. A generated
// literal of tables, slices, strings and pointers (rules_gen.go) is laid
// out by the linker instead, and building it costs nothing.
type table[V any] []entry[V]

// entry is one name of a table with its value.
type entry[V any] struct {
	Key string
	Val V
}

// lookup returns the value under key.
func (t table[V]) lookup(key string) (V, bool) {
	i, ok := slices.BinarySearchFunc(t, key, func(e entry[V], k string) int { return strings.Compare(e.Key, k) })
	if !ok {
		var zero V
		return zero, false
	}
	return t[i].Val, true
}

// get returns the value under key, or the zero value.
func (t table[V]) get(key string) V {
	v, _ := t.lookup(key)
	return v
}

// has reports whether key is in the table.
func (t table[V]) has(key string) bool {
	_, ok := t.lookup(key)
	return ok
}

// all yields the entries in order of their names.
func (t table[V]) all() iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		for _, e := range t {
			if !yield(e.Key, e.Val) {
				return
			}
		}
	}
}

// tableOf returns m as a table.
func tableOf[V any](m map[string]V) table[V] {
	t := make(table[V], 0, len(m))
	for k, v := range m {
		t = append(t, entry[V]{k, v})
	}
	slices.SortFunc(t, func(a, b entry[V]) int { return strings.Compare(a.Key, b.Key) })
	return t
}

// UnmarshalJSON reads a JSON object, refusing fields its values do not
// have, as the decoder of rules.json does everywhere else.
func (t *table[V]) UnmarshalJSON(b []byte) error {
	var m map[string]V
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	if m == nil {
		*t = nil
		return nil
	}
	*t = tableOf(m)
	return nil
}

// MarshalJSON writes the table as the JSON object it was read from.
func (t table[V]) MarshalJSON() ([]byte, error) {
	if t == nil {
		return []byte("null"), nil
	}
	m := make(map[string]V, len(t))
	for _, e := range t {
		m[e.Key] = e.Val
	}
	return json.Marshal(m)
}

// nameSet is a set of names kept sorted, for the same reason as table.
type nameSet []string

// setOf returns the names as a nameSet.
func setOf(names []string) nameSet {
	s := slices.Clone(names)
	slices.Sort(s)
	return slices.Compact(s)
}

// has reports whether name is in the set.
func (s nameSet) has(name string) bool {
	_, ok := slices.BinarySearch(s, name)
	return ok
}
