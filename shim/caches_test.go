package shim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGoModStatDir(t *testing.T) {
	home := "/home/u"
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cases := []struct {
		gomod string
		env   map[string]string
		want  string
	}{
		{"module example.com/calc\n", nil, "/home/u/go/pkg/mod/cache/download/example.com/calc/@v"},
		// Capitals are escaped as go escapes them on disk.
		{"module github.com/Foo/Bar // x\n\ngo 1.21\n", nil, "/home/u/go/pkg/mod/cache/download/github.com/!foo/!bar/@v"},
		{"module example.com/calc\n", map[string]string{"GOMODCACHE": "/m"}, "/m/cache/download/example.com/calc/@v"},
		{"module example.com/calc\n", map[string]string{"GOPATH": "/g1:/g2"}, "/g1/pkg/mod/cache/download/example.com/calc/@v"},
		// Nothing that would lead elsewhere in the cache.
		{"module ../../escape\n", nil, ""},
		{"module example.com/a/../../b\n", nil, ""},
		{"go 1.21\n", nil, ""},
		{"", nil, ""},
	}
	for _, c := range cases {
		ws := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(ws, "go.mod"), []byte(c.gomod), 0o600))
		assert.Equal(t, c.want, goModStatDir(env(c.env), home, ws), "%q %v", c.gomod, c.env)
	}
	assert.Empty(t, goModStatDir(env(nil), home, t.TempDir()), "no go.mod")
	assert.Empty(t, goModStatDir(env(nil), home, ""), "no workspace")
}
