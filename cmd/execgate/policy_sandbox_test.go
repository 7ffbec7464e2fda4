package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// policy sandbox add/remove/list edit agents.NAME.sandbox through the
// locked store, all or nothing, refusing what the parser would drop; the
// file loads back without warnings and grants what was added.
func TestPolicySandbox(t *testing.T) {
	cfgEnv(t)
	path := cfgPath(t)
	code, out, errs := cfgRun(t, path, "policy", "sandbox", "add", "read", "~/.m2", "/srv/data", "--agent", "claude-code")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "added read ~/.m2 for agent claude-code")
	code, _, errs = cfgRun(t, path, "policy", "sandbox", "add", "write", "~/.gradle/caches")
	require.Equal(t, 0, code, errs)
	cfg := loadCfg(t, path)
	assert.Equal(t, []string{"~/.m2", "/srv/data"}, cfg.Agents["claude-code"].Sandbox.Read)
	assert.Equal(t, []string{"~/.gradle/caches"}, cfg.Agents["*"].Sandbox.Write)

	// Adding twice changes nothing.
	code, out, _ = cfgRun(t, path, "policy", "sandbox", "add", "read", "~/.m2", "--agent", "claude-code")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "there already")
	assert.Len(t, loadCfg(t, path).Agents["claude-code"].Sandbox.Read, 2)

	// Refused, and nothing of the same command is written.
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, args := range [][]string{
		{"add", "read", "/opt/tools", "~/.ssh/id_rsa"},
		{"add", "write", "/usr/local/lib"},
		{"add", "read", "~"},
		{"add", "read", "relative/dir"},
		{"add", "read", "/tmp"},
		{"add", "read", "~/x/../.aws"},
		{"add", "write", "/data/*"},
		{"add", "exec", "/x"},
		{"remove", "read", "/not/there"},
	} {
		code, _, errs := cfgRun(t, path, append([]string{"policy", "sandbox"}, args...)...)
		assert.NotEqual(t, 0, code, "%q", args)
		assert.Contains(t, errs, "execgate: ", "%q", args)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after), "%q changed the file", args)
	}

	code, out, _ = cfgRun(t, path, "policy", "sandbox", "list", "--agent", "claude-code")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "read   /srv/data")
	assert.Contains(t, out, "write  ")

	code, _, errs = cfgRun(t, path, "policy", "sandbox", "remove", "read", "/srv/data", "~/.m2", "--agent", "claude-code")
	require.Equal(t, 0, code, errs)
	code, _, errs = cfgRun(t, path, "policy", "sandbox", "remove", "write", "~/.gradle/caches")
	require.Equal(t, 0, code, errs)
	cfg = loadCfg(t, path)
	assert.Empty(t, cfg.Agents["claude-code"].Sandbox)
	assert.Empty(t, cfg.Agents["*"].Sandbox)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "sandbox", "emptied lists are removed")
}
