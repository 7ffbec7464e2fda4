package shim

import (
	"regexp"
	"testing"
)

// Event ids join an audit line to the lines of the same command; they
// must not repeat.
func TestNewIDUnique(t *testing.T) {
	hex12 := regexp.MustCompile(`^[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 10000 {
		id := newID()
		if !hex12.MatchString(id) {
			t.Fatalf("id %q is not 12 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("id %q repeated", id)
		}
		seen[id] = true
	}
}
