package gitconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hooksPath is the last core.hooksPath c holds ("" for none).
func hooksPath(c *Config) string {
	var v string
	for _, e := range c.Entries {
		if e.Name == "core.hookspath" {
			v = e.Value
		}
	}
	return v
}

// TestCacheKeepsUntilStopped: a second Load asked the same is answered
// from the cache (a change on disk is not seen: the cache is for one
// command's judging); one whose environment differs in a variable Load
// read is not; after Stop every Load reads the disk.
func TestCacheKeepsUntilStopped(t *testing.T) {
	env := newTestEnv(t)
	dir := t.TempDir()
	env.mustGit(t, dir, "init", "-q")
	env.mustGit(t, dir, "config", "core.hooksPath", "one")
	o := Options{Dir: dir, Getenv: env.get}

	var c Cache
	first, err := c.Load(o)
	require.NoError(t, err)
	assert.Equal(t, "one", hooksPath(first))
	env.mustGit(t, dir, "config", "core.hooksPath", "two")
	kept, err := c.Load(o)
	require.NoError(t, err)
	assert.Equal(t, "one", hooksPath(kept), "answered from the cache")

	// Another global file: another answer.
	global := filepath.Join(t.TempDir(), "global")
	require.NoError(t, os.WriteFile(global, []byte("[core]\n\thooksPath = global\n"), 0o600))
	other := testEnv{}
	for k, v := range env {
		other[k] = v
	}
	other["GIT_CONFIG_GLOBAL"] = global
	fresh, err := c.Load(Options{Dir: dir, Getenv: other.get})
	require.NoError(t, err)
	assert.Equal(t, "two", hooksPath(fresh), "the repository's own file comes last")
	assert.Contains(t, fresh.files, global)

	c.Stop()
	now, err := c.Load(o)
	require.NoError(t, err)
	assert.Equal(t, "two", hooksPath(now), "read again once stopped")
	env.mustGit(t, dir, "config", "core.hooksPath", "three")
	now, err = c.Load(o)
	require.NoError(t, err)
	assert.Equal(t, "three", hooksPath(now), "and never kept after")

	var none *Cache
	got, err := none.Load(o)
	require.NoError(t, err)
	assert.Equal(t, "three", hooksPath(got))
}
