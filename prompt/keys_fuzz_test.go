package prompt

import (
	"bytes"
	"testing"
)

// FuzzDecide: whatever one read from the terminal returns (a paste, an
// escape sequence, a key repeated), only a single o or a allows, and any
// read holding Ctrl-C or Ctrl-D denies.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{"o", "a", "A", "d", "\x1b", "\x03", "oa", "\x1b[A", "yes\n", "o\x03", "\x04", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, keys []byte) {
		d, ok := decide(keys)
		if !ok {
			if d != "" {
				t.Fatalf("decide(%q) = %q without a decision", keys, d)
			}
			return
		}
		switch d {
		case AllowOnce, AllowAlways:
			if len(keys) != 1 || !bytes.ContainsAny(keys, "oOaA") {
				t.Fatalf("decide(%q) allows", keys)
			}
		case Deny:
		default:
			t.Fatalf("decide(%q) = %q", keys, d)
		}
		if bytes.ContainsAny(keys, "\x03\x04") && d != Deny {
			t.Fatalf("decide(%q) = %q, want deny for Ctrl-C/Ctrl-D", keys, d)
		}
	})
}
