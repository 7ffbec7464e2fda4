package policy

import (
	"strings"
	"testing"
)

// FuzzClusterLetters: any word, however short, splits without a panic, and
// the letters are a prefix of what follows the dash.
func FuzzClusterLetters(f *testing.F) {
	for _, s := range []string{"", "-", "-x", "-so/f", "--long", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := clusterLetters(s)
		if l != "" && !strings.HasPrefix(s[1:], l) {
			t.Fatalf("clusterLetters(%q) = %q", s, l)
		}
	})
}
