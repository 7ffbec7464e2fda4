package config

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sandbox object of the wrong shape is not replaced: the edit fails and
// the file is left as the user wrote it.
func TestSandboxEditWrongShape(t *testing.T) {
	for _, body := range []string{
		`{"version": 1, "agents": {"*": {"sandbox": "x"}}}`,
		`{"version": 1, "agents": {"*": {"sandbox": {"read": "/x"}}}}`,
	} {
		path := filepath.Join(t.TempDir(), "c.json")
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
		_, err := (&Store{Path: path}).Update(context.Background(), "", func(d *Document) error {
			_, err := d.AddSandboxPath("", "read", "/opt/x")
			return err
		})
		assert.Error(t, err, body)
		after, _ := os.ReadFile(path)
		assert.Equal(t, body, string(after))
	}
}

// Every path CheckSandboxPath accepts, the parser keeps; every one it
// refuses, the parser drops.
func TestCheckSandboxPathAgreesWithParser(t *testing.T) {
	for _, p := range []string{"~/.m2", "/srv/data", "/usr/share/x", "~/.ssh", "~", "/", "/tmp", "a/b", "/a/../b", "~/.config/git/x", "/x*", "~/.cache/pip"} {
		for _, kind := range []string{"read", "write"} {
			err := CheckSandboxPath(kind, p)
			var pr parser
			got := pr.sandboxPaths("sandbox."+kind, []any{p}, kind == "write")
			assert.Equal(t, err == nil, len(got) == 1, "%s %q: %v", kind, p, err)
		}
	}
}
