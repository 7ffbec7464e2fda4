package jsonstrict

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name, in, err string
		offset        int64
	}{
		{"object", `{"a": 1, "b": [1, {"a": 2}]}`, "", 0},
		{"scalar", `"x"`, "", 0},
		{"top-level duplicate", "{\"a\": 1,\n \"a\": 2}", `duplicate key "a" at the top level`, 10},
		{"nested duplicate", `{"agents": {"codex": {"x": 1, "x": 2}}}`, `duplicate key "x" in agents.codex`, 30},
		{"in an array", `{"l": [{}, {"k": 1, "k": 1}]}`, `duplicate key "k" in l.[1]`, 20},
		{"same key in siblings is fine", `[{"k": 1}, {"k": 2}]`, "", 0},
		{"two values", `{} {}`, "data after the value", 0},
		{"unterminated", `{"a": `, io.ErrUnexpectedEOF.Error(), 0},
		{"empty", ``, io.ErrUnexpectedEOF.Error(), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.in))
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tc.err)
			var dup *DuplicateKeyError
			if errors.As(err, &dup) {
				assert.Equal(t, tc.offset, dup.Offset)
				assert.Equal(t, `"`+dup.Key+`"`, tc.in[dup.Offset:dup.Offset+int64(len(dup.Key))+2])
			}
		})
	}
}

func TestDeepNesting(t *testing.T) {
	// Far deeper than a recursive walk's stack would take.
	deep := strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20)
	assert.NoError(t, Check([]byte(deep)))
	assert.Error(t, Check([]byte(deep[:len(deep)-1])))
}

// FuzzCheck: Check never panics, and whatever it accepts is one valid JSON
// value.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"a": {"b": [1, 2]}, "c": "d"}`))
	f.Add([]byte(`{"a": 1, "a": 2}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		// encoding/json's scanner stops at 10,000 levels; Check does not.
		shallow := bytes.Count(raw, []byte("["))+bytes.Count(raw, []byte("{")) < 10000
		if Check(raw) == nil && shallow && !json.Valid(raw) {
			t.Fatalf("Check accepted %q, which is not one JSON value", raw)
		}
	})
}
