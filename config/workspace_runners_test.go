package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAutoAllowWorkspaceRunners: the switch is off by default, set per
// level like autoAllowSafe, and a value that is not a boolean turns it off
// with one warning naming the key.
func TestAutoAllowWorkspaceRunners(t *testing.T) {
	assert.False(t, BuiltinPolicy().AutoAllowWorkspaceRunners, "off unless set")

	cfg, warns, err := ParseConfig([]byte(`{"version": 1,
		"defaults": {"autoAllowWorkspaceRunners": true},
		"agents": {"codex": {"autoAllowWorkspaceRunners": false}}}`))
	require.NoError(t, err)
	assert.Empty(t, warns)
	assert.True(t, cfg.Resolve("claude-code").Policy.AutoAllowWorkspaceRunners)
	assert.False(t, cfg.Resolve("codex").Policy.AutoAllowWorkspaceRunners, "the agent's level wins")

	for _, bad := range []string{`"yes"`, `1`, `["workspace-runners"]`} {
		cfg, warns, err := ParseConfig([]byte(`{"version": 1, "defaults": {"autoAllowWorkspaceRunners": ` + bad + `}}`))
		require.NoError(t, err, bad)
		require.Len(t, warns, 1, bad)
		assert.Contains(t, warns[0], "autoAllowWorkspaceRunners", bad)
		assert.False(t, cfg.Resolve("x").Policy.AutoAllowWorkspaceRunners, "%s: an invalid value is the strictest, off", bad)
	}

	d := newDocument()
	require.NoError(t, d.SetPolicyField("", "autoAllowWorkspaceRunners", "true"))
	assert.True(t, docConfig(t, d).Resolve("x").Policy.AutoAllowWorkspaceRunners)
	err = d.SetPolicyField("", "autoAllowWorkspaceRunners", "on")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "autoAllowWorkspaceRunners: ")
}
