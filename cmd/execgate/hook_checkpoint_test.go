package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/sandbox"
)

// hookWriteConfig lets `rm notes.txt` run unasked: a command that may write
// the workspace, allowed by policy.
const hookWriteConfig = `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny"},
  "agents": {"*": {"allowlist": [{"pattern": "rm notes.txt"}, {"pattern": "cat **"}]}}}`

// hookGitWorkspace makes e's workspace a git repository with a committed
// file and an untracked one.
func hookGitWorkspace(t *testing.T, e *shimEnv) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, args := range [][]string{{"init", "-q"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.work
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("the notes\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "main.go"), []byte("package main\n"), 0o644))
	for _, args := range [][]string{{"add", "main.go"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.work
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
}

// TestHookCheckpointsBeforeAllow: a hook that lets a writing command go
// takes a checkpoint first, so that what the agent then runs can be
// undone; a read-only command takes none.
func TestHookCheckpointsBeforeAllow(t *testing.T) {
	for _, agent := range []string{"claude", "codex", "gemini"} {
		t.Run(agent, func(t *testing.T) {
			e := newHookEnv(t, hookWriteConfig)
			hookGitWorkspace(t, e)
			want := workTree(t, e.work)

			o := e.hook(t, withCommand(t, agent, e.work, "cat main.go"), "hook", agent)
			require.Contains(t, []string{"allow", "silent"}, answerOf(t, agent, o))
			list := e.undo(t, "--list")
			require.Equal(t, fmt.Sprintf("execgate: no checkpoints of %s\n", e.work), list.stdout, "a read-only command pays nothing")

			o = e.hook(t, withCommand(t, agent, e.work, "rm notes.txt"), "hook", agent)
			require.Contains(t, []string{"allow", "silent"}, answerOf(t, agent, o))
			// The agent runs it.
			require.NoError(t, os.Remove(filepath.Join(e.work, "notes.txt")))
			u := e.undo(t)
			require.Equal(t, 0, u.status, "%+v", u)
			assert.Equal(t, want, workTree(t, e.work), u.stdout)
		})
	}
}

// TestHookCheckpointFailsClosed: when no checkpoint can be taken, a hook
// does not let a writing command go: it leaves it to the agent's own
// prompt where the protocol has one (Claude Code's ask), saying why, and
// refuses it otherwise.
func TestHookCheckpointFailsClosed(t *testing.T) {
	want := map[string]string{"claude": "ask", "codex": "deny", "gemini": "deny"}
	for _, agent := range []string{"claude", "codex", "gemini"} {
		t.Run(agent, func(t *testing.T) {
			e := newHookEnv(t, hookWriteConfig)
			hookGitWorkspace(t, e)
			// The checkpoints' directory is a file: none can be stored.
			require.NoError(t, os.MkdirAll(filepath.Join(e.state, "execgate"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(e.state, "execgate", "checkpoints"), nil, 0o600))

			o := e.hook(t, withCommand(t, agent, e.work, "rm notes.txt"), "hook", agent)
			require.Equal(t, want[agent], answerOf(t, agent, o))
			if agent == "claude" {
				var out struct {
					HookSpecificOutput struct{ PermissionDecisionReason string }
				}
				require.NoError(t, json.Unmarshal([]byte(o.stdout), &out))
				assert.Contains(t, out.HookSpecificOutput.PermissionDecisionReason, "no checkpoint could be taken")
			}
			o = e.hook(t, withCommand(t, agent, e.work, "cat main.go"), "hook", agent)
			require.Contains(t, []string{"allow", "silent"}, answerOf(t, agent, o), "a read-only command is still allowed")
		})
	}
}

// TestHookCheckpointsBeforeDeferredAsk: a writing command Claude Code's own
// prompt is left to decide runs if the person says yes, so the hook takes
// its checkpoint before answering ask. (rm -r: notes.txt, untracked and
// just made, is a scratch file a plain rm deletes confined, unasked.)
func TestHookCheckpointsBeforeDeferredAsk(t *testing.T) {
	e := newHookEnv(t, hookWriteConfig)
	hookGitWorkspace(t, e)
	want := workTree(t, e.work)
	o := e.hook(t, withCommand(t, "claude", e.work, "rm -r main.go notes.txt"), "hook", "claude")
	require.Equal(t, "ask", answerOf(t, "claude", o))
	// The person says yes in Claude Code; the agent runs it.
	require.NoError(t, os.Remove(filepath.Join(e.work, "notes.txt")))
	require.NoError(t, os.Remove(filepath.Join(e.work, "main.go")))
	u := e.undo(t)
	require.Equal(t, 0, u.status, "%+v", u)
	assert.Equal(t, want, workTree(t, e.work), u.stdout)
}

// TestHookCheckpointsAllowedConfinable: a writing command the policy
// allows outright (an allowlist entry) is answered allow as it is, not
// rewritten to run through the shim, even where it would fit the sandbox:
// the agent runs it itself, so the hook takes its checkpoint — the hook
// leaves the checkpoint to the shim only for a command it rewrites.
func TestHookCheckpointsAllowedConfinable(t *testing.T) {
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("this machine cannot confine commands (%s): no command is rewritten here", st.Reason)
	}
	const config = `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny"},
  "agents": {"*": {"allowlist": [{"pattern": "echo hi"}]}}}`
	for _, agent := range []string{"claude", "codex"} {
		t.Run(agent, func(t *testing.T) {
			e := newHookEnv(t, config)
			hookGitWorkspace(t, e)
			want := workTree(t, e.work)
			o := e.hook(t, withCommand(t, agent, e.work, "echo hi > new.txt"), "hook", agent)
			require.Contains(t, []string{"allow", "silent"}, answerOf(t, agent, o), "%+v", o)
			require.NotContains(t, o.stdout, "updatedInput", "allowed by the policy, it runs as it is")
			// The agent runs it.
			require.NoError(t, os.WriteFile(filepath.Join(e.work, "new.txt"), []byte("hi\n"), 0o644))
			u := e.undo(t)
			require.Equal(t, 0, u.status, "%+v", u)
			assert.Equal(t, want, workTree(t, e.work), u.stdout)
		})
	}
}
