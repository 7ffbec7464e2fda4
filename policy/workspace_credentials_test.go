package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHoldsCredentials: a directory in or above a credentials place is no
// workspace for the sandbox; a project is.
func TestHoldsCredentials(t *testing.T) {
	e := testEngine(t)
	req := Request{Home: testHome}
	for dir, want := range map[string]bool{
		testHome + "/.ssh":            true,
		testHome + "/.kube":           true,
		testHome + "/.config/gh":      true,
		testHome + "/.config":         true,
		testHome + "/.aws":            true,
		testHome + "/.password-store": true,
		testHome + "/.gnupg/private":  true,
		testWorkspace:                 false,
		testHome + "/src/app":         false,
		testHome + "/.config/nvim":    false,
		"/srv/app":                    false,
	} {
		assert.Equal(t, want, e.HoldsCredentials(req, dir), dir)
	}
}
