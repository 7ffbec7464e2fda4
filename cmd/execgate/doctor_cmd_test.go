package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doctor runs `execgate doctor` in e's home and returns its lines by area.
func (e *setupEnv) doctor() (code int, lines map[string]string, out string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.exe, "doctor")
	cmd.Env = append(e.env, "XDG_CONFIG_HOME="+filepath.Join(e.home, ".config"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(e.t, err, stderr.String())
	}
	lines = map[string]string{}
	for _, l := range strings.Split(stdout.String(), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[1] != "fix:" {
			lines[f[1]] = l
		}
	}
	return code, lines, stdout.String()
}

// TestDoctor wires agents the way setup does and breaks them the ways
// people do; doctor must tell live from silent by running each route.
func TestDoctor(t *testing.T) {
	realBash(t)
	e := newSetupEnv(t)
	code, lines, out := e.doctor()
	assert.Equal(t, 0, code, out)
	for _, agent := range []string{"claude", "codex", "gemini"} {
		assert.Contains(t, lines[agent], "absent", out)
	}

	// Claude Code, both routes: live.
	for _, args := range [][]string{{"claude", "--apply", "--shims", e.shims}, {"claude", "--hook", "--apply", "--shims", e.shims}} {
		c, _, errOut := e.run(args...)
		require.Equal(t, 0, c, errOut)
	}
	code, lines, out = e.doctor()
	assert.Equal(t, 0, code, out)
	assert.Contains(t, lines["claude"], "ok    claude  live: hook", out)
	assert.Contains(t, lines["claude"], "CLAUDE_CODE_SHELL=", out)

	// Codex's hook fires but Codex has not trusted it: not live.
	c, _, errOut := e.run("codex", "--apply", "--shims", e.shims)
	require.Equal(t, 0, c, errOut)
	code, lines, out = e.doctor()
	assert.Equal(t, 1, code, out)
	assert.Contains(t, lines["codex"], "registered but not firing", out)
	assert.Contains(t, lines["codex"], "has not trusted it", out)
	// Trusted in config.toml: live.
	hooks := filepath.Join(e.home, ".codex", "hooks.json")
	require.NoError(t, os.WriteFile(filepath.Join(e.home, ".codex", "config.toml"),
		[]byte("[hooks.state.\""+hooks+":pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:x\"\n"), 0o600))
	code, lines, out = e.doctor()
	assert.Equal(t, 0, code, out)
	assert.Contains(t, lines["codex"], "live: hook", out)

	// Gemini CLI's hook (settings with comments): live.
	c, _, errOut = e.run("gemini", "--apply", "--shims", e.shims)
	require.Equal(t, 0, c, errOut)
	code, lines, out = e.doctor()
	assert.Equal(t, 0, code, out)
	assert.Contains(t, lines["gemini"], "live: hook", out)

	// Claude's shell replaced by the real bash: the probe runs, so the
	// route is silent, whatever the settings look like.
	settings := filepath.Join(e.home, ".claude", "settings.json")
	raw, err := os.ReadFile(settings)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(settings, bytes.ReplaceAll(raw, []byte(filepath.Join(e.shims, "bash")), []byte(realBash(t))), 0o600))
	code, lines, out = e.doctor()
	assert.Equal(t, 1, code, out)
	assert.Contains(t, lines["claude"], "registered but not firing: CLAUDE_CODE_SHELL="+realBash(t), out)
	assert.Contains(t, lines["claude"], "it ran a command it had to refuse (exit 0)", out)

	// The hook names a binary that is gone.
	raw, err = os.ReadFile(settings)
	require.NoError(t, err)
	gone := filepath.Join(t.TempDir(), "old", "execgate")
	require.NoError(t, os.WriteFile(settings, bytes.ReplaceAll(raw, []byte(e.exe+" hook"), []byte(gone+" hook")), 0o600))
	code, lines, out = e.doctor()
	assert.Equal(t, 1, code, out)
	assert.Contains(t, lines["claude"], gone+" does not exist", out)

	// An unusable configuration fails the config check.
	cfg := filepath.Join(e.home, ".config", "execgate", "exec-approvals.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	require.NoError(t, os.WriteFile(cfg, []byte("{"), 0o600))
	code, lines, out = e.doctor()
	assert.Equal(t, 1, code, out)
	assert.Contains(t, lines["config"], "FAIL", out)
}

// TestDoctorZshShim: Claude Code given the zsh shim (a zsh login shell) is
// live when the shim refuses doctor's probe through the real zsh, and
// silent when the settings name the real zsh instead; the shims line
// checks the zsh link too.
func TestDoctorZshShim(t *testing.T) {
	realZsh(t)
	e := newSetupEnv(t)
	e.env = append(e.env, "SHELL=/bin/zsh")
	c, _, errOut := e.run("claude", "--apply", "--shims", e.shims)
	require.Equal(t, 0, c, errOut)
	code, lines, out := e.doctor()
	assert.Equal(t, 0, code, out)
	assert.Contains(t, lines["claude"], "live: CLAUDE_CODE_SHELL="+filepath.Join(e.shims, "zsh"), out)
	assert.Contains(t, lines["shims"], "zsh", out) // checked beside bash and sh

	// The same settings with the link pointing at the real zsh: the probe
	// runs, so the route is silent.
	settings := filepath.Join(e.home, ".claude", "settings.json")
	raw, err := os.ReadFile(settings)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(settings, bytes.ReplaceAll(raw, []byte(filepath.Join(e.shims, "zsh")), []byte(realZsh(t))), 0o600))
	code, lines, out = e.doctor()
	assert.Equal(t, 1, code, out)
	assert.Contains(t, lines["claude"], "registered but not firing: CLAUDE_CODE_SHELL="+realZsh(t), out)
}
