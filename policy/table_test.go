package policy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// set puts v under key (tests mutate copies of the rule table).
func (t *table[V]) set(key string, v V) {
	i, ok := slices.BinarySearchFunc(*t, key, func(e entry[V], k string) int { return strings.Compare(e.Key, k) })
	if ok {
		(*t)[i].Val = v
		return
	}
	*t = slices.Insert(*t, i, entry[V]{key, v})
}

// del removes key.
func (t *table[V]) del(key string) {
	i, ok := slices.BinarySearchFunc(*t, key, func(e entry[V], k string) int { return strings.Compare(e.Key, k) })
	if ok {
		*t = slices.Delete(*t, i, i+1)
	}
}

// TestTable: a table answers as the map it replaces, and reads and
// writes the same JSON.
func TestTable(t *testing.T) {
	m := map[string]int{"b": 2, "a": 1, "c": 3, "": 0}
	tb := tableOf(m)
	for k, v := range m {
		got, ok := tb.lookup(k)
		assert.True(t, ok, k)
		assert.Equal(t, v, got)
	}
	assert.False(t, tb.has("d"))
	assert.Equal(t, 0, tb.get("zz"))
	var keys []string
	for k := range tb.all() {
		keys = append(keys, k)
	}
	assert.Equal(t, []string{"", "a", "b", "c"}, keys)

	raw, err := json.Marshal(tb)
	require.NoError(t, err)
	var back table[int]
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.Equal(t, tb, back)
	tb.set("d", 4)
	tb.del("a")
	assert.Equal(t, []string{"", "b", "c", "d"}, tableKeys(tb))
	assert.Error(t, json.Unmarshal([]byte(`{"a":"x"}`), &back))

	s := setOf([]string{"y", "x", "y"})
	assert.Equal(t, nameSet{"x", "y"}, s)
	assert.True(t, s.has("x"))
	assert.False(t, s.has("z"))
}
