package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hangs around the pause of leftovers (shim/leftovers.go), with the built
// shims as an agent runs them.

// startWaiting starts `sh slow.sh` (allowlisted, unconfined; slow.sh is
// body) and, once it holds the workspace, a confined python3 quick.py,
// which waits for it; it returns both, the second's stderr, and a channel
// closed when the second ends.
func startWaiting(t *testing.T, ctx context.Context, body string) (slow, quick *exec.Cmd, quickErr *syncBuffer, quickDone chan struct{}) {
	t.Helper()
	e, python := leftoversEnv(t)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "slow.sh"), []byte(body), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "quick.py"), []byte("print('quick')\n"), 0o644))
	slow = e.command(ctx, e.shim("bash"), "bash", "-c", "sh slow.sh")
	require.NoError(t, slow.Start())
	t.Cleanup(func() { syscall.Kill(-slow.Process.Pid, syscall.SIGKILL); slow.Wait() })
	require.Eventually(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(e.state, "execgate", "confined", "holders", "*"))
		return len(m) == 1
	}, 10*time.Second, 5*time.Millisecond)

	quick = e.command(ctx, e.shim("bash"), "bash", "-c", python+" quick.py")
	quickErr = &syncBuffer{}
	quick.Stderr = quickErr
	require.NoError(t, quick.Start())
	quickDone = make(chan struct{})
	go func() { quick.Wait(); close(quickDone) }()
	t.Cleanup(func() { syscall.Kill(-quick.Process.Pid, syscall.SIGKILL); <-quickDone })
	require.Eventually(t, func() bool { return bytes.Contains([]byte(quickErr.String()), []byte("execgate: waiting")) },
		10*time.Second, 5*time.Millisecond, "the confined command waits")
	return slow, quick, quickErr, quickDone
}

// The agent kills an unconfined command on its timeout (SIGKILL to its
// process group, as Codex does): a confined command that was waiting for
// it must go on, not wait for the next command to lift the pause.
func TestWaitingConfinedGoesOnWhenUnconfinedIsKilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	slow, _, quickErr, quickDone := startWaiting(t, ctx, "sleep 30\n")
	require.NoError(t, syscall.Kill(-slow.Process.Pid, syscall.SIGKILL))
	slow.Wait()
	select {
	case <-quickDone:
	case <-time.After(10 * time.Second):
		t.Fatalf("the confined command still waits for an unconfined one killed 10 s ago: %s", quickErr)
	}
}

// A waiting confined command is stopped as bash would be: SIGTERM to the
// shim alone (an agent that kills the process it started) ends it.
func TestWaitingConfinedStopsOnSIGTERM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, quick, quickErr, quickDone := startWaiting(t, ctx, "sleep 20\n")
	require.NoError(t, quick.Process.Signal(syscall.SIGTERM))
	select {
	case <-quickDone:
	case <-time.After(5 * time.Second):
		t.Fatalf("SIGTERM did not stop a waiting confined command in 5 s: %s", quickErr)
	}
	ws, ok := quick.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGTERM || ws.ExitStatus() == 143, "%v", ws)
}

// An unconfined script runs a confined command in the background and,
// meanwhile, another allowlisted unconfined command (npm-run-all
// --parallel, a Makefile's recipes through the shims on PATH): the inner
// one pauses the confined command, and at its end leaves it paused for the
// outer one, which waits for it.
func TestNestedUnconfinedDoesNotDeadlock(t *testing.T) {
	e, python := leftoversEnv(t)
	// The real sh runs the script: its bash -c go through the shims.
	require.NoError(t, os.WriteFile(e.config, []byte(`{"version": 1, "agents": {"*": {"allowlist": [{"pattern": "/bin/sh outer.sh"}, {"pattern": "sh slow.sh"}]}}}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "slow.py"),
		[]byte("import time\ntime.sleep(1.5)\nprint('slow')\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "outer.sh"),
		[]byte("bash -c '"+python+" slow.py' &\nsleep 0.5\nbash -c 'sh slow.sh'\nwait\necho done\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "slow.sh"), []byte("echo inner\n"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := e.command(ctx, e.shim("bash"), "bash", "-c", "/bin/sh outer.sh")
	start := time.Now()
	o := runOutcome(t, cmd, "")
	require.Less(t, time.Since(start), 15*time.Second, "deadlocked: %+v", o)
	assert.Equal(t, 0, o.status, "%+v", o)
	assert.Equal(t, "inner\nslow\ndone\n", o.stdout)
}
