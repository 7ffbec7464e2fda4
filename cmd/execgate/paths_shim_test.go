package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hookproto"
)

// TestShimJudgesLinksByTarget runs the attack of issue 22 item 2 for
// real: a repository whose notes.txt is a link to ~/.ssh/id_rsa and whose
// todo.md is a link to ~/.bashrc, in a canary home, nobody to approve. The
// real bash reaches both through the links; through the shim and the hook
// neither runs, while the workspace's own files still do, byte for byte.
func TestShimJudgesLinksByTarget(t *testing.T) {
	e := newShimEnv(t, `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny"},
  "agents": {"*": {"allowlist": [{"pattern": "echo **"}]}}}`)
	home := filepath.Join(t.TempDir(), "home")
	e.work = filepath.Join(home, "src", "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.MkdirAll(e.work, 0o755))
	const key = "-----BEGIN OPENSSH PRIVATE KEY-----\nCANARY-KEY\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte(key), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# canary\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "README.md"), []byte("# repo\n"), 0o644))
	require.NoError(t, os.Symlink("../../.ssh/id_rsa", filepath.Join(e.work, "notes.txt")))
	require.NoError(t, os.Symlink("../../.bashrc", filepath.Join(e.work, "todo.md")))
	e.env = append(slices.DeleteFunc(e.env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }), "HOME="+home)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	run := func(script string) outcome {
		return runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", script), "")
	}
	for _, script := range []string{"cat notes.txt", "head -n 2 notes.txt", "grep -R CANARY .", "echo pwned >> todo.md"} {
		o := run(script)
		assert.Equal(t, 126, o.status, "%s: %+v", script, o)
		assert.NotContains(t, o.stdout, "CANARY", script)
		assert.True(t, strings.HasPrefix(o.stderr, "execgate: denied: "), "%s: %q", script, o.stderr)
	}
	rc, err := os.ReadFile(filepath.Join(home, ".bashrc"))
	require.NoError(t, err)
	assert.Equal(t, "# canary\n", string(rc), "the start-up file is untouched")

	o := run("cat README.md")
	assert.Equal(t, outcome{stdout: "# repo\n"}, o)
	o = run("echo note >> plain.md && cat plain.md")
	assert.Equal(t, outcome{stdout: "note\n"}, o)

	// The hook judges in the directory its input names, on the same disk.
	h := newHookEnv(t, `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny"}}`)
	h.env = append(slices.DeleteFunc(h.env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }), "HOME="+home)
	p, _ := hookproto.ByName("claude")
	// Claude Code asks its user when nobody on the hub could answer.
	assert.Equal(t, "ask", answerOf(t, "claude", h.hook(t, p.Input("cat notes.txt", e.work), "hook", "claude")))
	assert.Equal(t, "allow", answerOf(t, "claude", h.hook(t, p.Input("cat README.md", e.work), "hook", "claude")))
}
