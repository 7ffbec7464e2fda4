package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxConfig: an agent's sandbox additions are read strictly —
// anything that is not a clean path, or that would open the home, /, a
// secret, a start-up file or the system's files to writing, is dropped
// with one warning each — and merged "*" first, ~ made the home.
func TestSandboxConfig(t *testing.T) {
	cfg, warnings, err := ParseConfig([]byte(`{"version": 1, "agents": {
		"*": {"sandbox": {"read": ["~/.m2"], "write": ["~/.gradle/caches"]}},
		"claude-code": {"sandbox": {
			"read": ["/srv/data", "~/.ssh", "~", "~/", "/", "relative/x", "~/a/../.ssh", "/home", "~/.config", "~/x*", 3, "/home/ada/.aws/credentials", "/home/ada"],
			"write": ["~/.cache/bazel", "/etc/hosts", "/usr/local", "~/.bashrc", "/tmp", "/srv/out"],
			"hosts": ["example.com"]}}}}`))
	require.NoError(t, err)
	joined := strings.Join(warnings, "\n")
	for _, dropped := range []string{`"~/.ssh"`, `"~"`, `"~/"`, `"/"`, `"relative/x"`, `"~/a/../.ssh"`, `"/home"`, `"~/.config"`, `"~/x*"`, "want a path, got", `"/etc/hosts"`, `"/usr/local"`, `"~/.bashrc"`, `"/tmp"`, "hosts"} {
		assert.Contains(t, joined, dropped)
	}
	sb := cfg.SandboxFor("claude-code", "/home/ada")
	// /home/ada/.aws/credentials and /home/ada are absolute, yet the home
	// and its secrets: SandboxFor drops them, knowing the home.
	assert.Equal(t, []string{"/home/ada/.m2", "/srv/data"}, sb.Read)
	assert.Equal(t, []string{"/home/ada/.cache/bazel", "/home/ada/.gradle/caches", "/srv/out"}, sb.Write)
	other := cfg.SandboxFor("codex", "/home/ada")
	assert.Equal(t, []string{"/home/ada/.m2"}, other.Read)
	none := cfg.SandboxFor("codex", "")
	assert.Empty(t, none.Read, "no home: nothing under it")

	_, warnings, err = ParseConfig([]byte(`{"version": 1, "agents": {"x": {"sandbox": ["~/.m2"]}}}`))
	require.NoError(t, err)
	assert.Contains(t, strings.Join(warnings, "\n"), "agents.x.sandbox: want an object")
}
