package main

import (
	"context"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/internal/proctest"
)

// TestShimStopEndsCommand is the agent's timeout, end to end: the agent
// spawns the shim in a process group of its own with its output on a pipe
// (so the shim runs bash as a child and caps the output) and kills the
// group, or only the shim. Every process of the command must end, as under
// bash, and the shim must die of the signal as bash would have. Before the
// fix bash ran in a group of its own, and a group-wide SIGKILL left the
// pipeline's processes running.
func TestShimStopEndsCommand(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, fullConfig)
	for _, tc := range []struct {
		name  string
		group bool
		sig   syscall.Signal
	}{
		{"killpg KILL", true, syscall.SIGKILL},
		{"killpg TERM", true, syscall.SIGTERM},
		{"kill TERM", false, syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			a, b := proctest.SleepArg(), proctest.SleepArg()
			cmd := e.command(ctx, e.shim("bash"), "bash", "-c", "sleep "+a+" | sleep "+b)
			cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
			require.NoError(t, cmd.Start())
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			t.Cleanup(func() { cmd.Process.Kill(); <-done })
			sleeps := proctest.Sleeps(t, a, b)

			target := cmd.Process.Pid
			if tc.group {
				target = -target
			}
			require.NoError(t, syscall.Kill(target, tc.sig))
			select {
			case <-done:
			case <-ctx.Done():
				t.Fatal("the shim did not exit")
			}
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			assert.True(t, ws.Signaled() && ws.Signal() == tc.sig, "shim ended with %v", cmd.ProcessState)
			for _, pid := range sleeps {
				assert.True(t, proctest.Eventually(5*time.Second, func() bool { return proctest.Gone(pid) }),
					"process %d of the command outlived the shim", pid)
			}
		})
	}
}
