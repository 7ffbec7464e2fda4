package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLazy: a lazy value is built once, on first use; if building it
// panicked, later uses panic as well instead of returning a zero value
// (for the rules, that would redact nothing).
func TestLazy(t *testing.T) {
	builds := 0
	l := &lazy[int]{build: func() int { builds++; return 7 }}
	assert.Zero(t, builds)
	assert.Equal(t, 7, l.get())
	assert.Equal(t, 7, l.get())
	assert.Equal(t, 1, builds)

	bad := &lazy[[]rule]{build: func() []rule { panic("bad expression") }}
	assert.PanicsWithValue(t, "bad expression", func() { bad.get() })
	assert.Panics(t, func() { bad.get() }, "a failed build must not yield a zero value")
}
