package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoginPage: the browser is handed a file only this user can read,
// which forwards to the login link, so the link never sits on a command
// line other users can read.
func TestLoginPage(t *testing.T) {
	url := "http://127.0.0.1:7780/login?token=abc&x=<y>"
	page, err := loginPage(url)
	require.NoError(t, err)
	defer os.RemoveAll(filepath.Dir(page))
	fi, err := os.Stat(page)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	dir, err := os.Stat(filepath.Dir(page))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dir.Mode().Perm())
	raw, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `content="0;url=http://127.0.0.1:7780/login?token=abc&amp;x=&lt;y&gt;"`)
	assert.False(t, strings.Contains(string(raw), "<y>"), "escaped")
}
