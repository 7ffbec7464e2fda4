package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/checkpoint"
	"github.com/execgate/execgate/internal/state"
)

// TestApproveUndoInTmux: the terminal approver lists the user's recent
// checkpoints (u), shows what undoing one would change, changes nothing
// unless y confirms, and then undoes it as execgate undo does, saying so
// in the same words.
func TestApproveUndoInTmux(t *testing.T) {
	bin := wiredBinary(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	e := newHubCLIEnv(t)
	e.startHub(t)
	ctx := context.Background()

	// A workspace with two commands' checkpoints: "edit a" changed a,
	// then "rm b" removed b.
	work := t.TempDir()
	write := func(name, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(work, name), []byte(data), 0o644))
	}
	write("a", "a0\n")
	write("b", "b0\n")
	sd, err := state.Dir(os.Getenv)
	require.NoError(t, err)
	st, err := checkpoint.Open(sd, work, checkpoint.Limits{})
	require.NoError(t, err)
	_, err = st.Take(ctx, "edit-a", "")
	require.NoError(t, err)
	write("a", "a1\n")
	_, err = st.Take(ctx, "rm-b", "")
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(work, "b")))

	sockDir, err := os.MkdirTemp("", "approve-undo-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	p := &tmuxPane{t: t, sock: filepath.Join(sockDir, "sock"), env: append(os.Environ(), "TERM=xterm-256color")}
	t.Cleanup(func() { p.tmux("kill-server") })
	_, err = p.tmux("-f", "/dev/null", "new-session", "-d", "-s", "gate", "-x", "120", "-y", "30", bin, "approve", "--no-bell")
	require.NoError(t, err)
	p.waitFor("no pending requests", 1)
	keys := func(k ...string) {
		t.Helper()
		_, err := p.tmux(append([]string{"send-keys", "-t", "gate"}, k...)...)
		require.NoError(t, err)
	}

	keys("u")
	p.waitFor("rm-b", 1)
	p.waitFor("edit-a", 1)
	p.waitFor("in "+work, 1)

	// Enter previews; any key but y goes back, changing nothing.
	keys("Enter")
	p.waitFor("undo checkpoint 2 would restore 0, recreate 1 and remove 0 path", 1)
	p.waitFor("y: undo it", 1)
	keys("n")
	p.waitFor("undo cancelled: nothing changed", 1)
	require.NoFileExists(t, filepath.Join(work, "b"))

	keys("Enter")
	p.waitFor("y: undo it", 1)
	keys("y")
	p.waitFor("undid checkpoint 2: 0 restored, 1 recreated, 0 removed (execgate undo 3 takes this back)", 1)
	data, err := os.ReadFile(filepath.Join(work, "b"))
	require.NoError(t, err)
	require.Equal(t, "b0\n", string(data))

	// The older command, under the undo's own checkpoint: a merge.
	p.waitFor("execgate undo 2", 1)
	keys("j")
	keys("j")
	time.Sleep(300 * time.Millisecond) // keys that come together decide nothing
	keys("Enter")
	p.waitFor("undo checkpoint 1 would restore 1, recreate 0 and remove 0 path; merged: keeps", 1)
	keys("y")
	p.waitFor("undid checkpoint 1: 1 restored", 1)
	data, err = os.ReadFile(filepath.Join(work, "a"))
	require.NoError(t, err)
	require.Equal(t, "a0\n", string(data))
	require.FileExists(t, filepath.Join(work, "b"), "the later undo's work is kept")
}
