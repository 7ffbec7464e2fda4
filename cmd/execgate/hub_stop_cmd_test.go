package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// runBin runs the built binary with args in the test's environment.
func runBin(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), o.String(), e.String()
	}
	require.NoError(t, err)
	return 0, o.String(), e.String()
}

// TestHubStop stops a detached hub: the command returns once the process
// has exited and the socket is gone, and stopping again finds no hub and
// succeeds, so that an uninstall can always run it.
func TestHubStop(t *testing.T) {
	bin := wiredBinary(t)
	e := newHubCLIEnv(t)
	code, stdout, stderr := runBin(t, bin, "hub", "--detach")
	require.Equal(t, 0, code, stderr)
	pid, err := strconv.Atoi(strings.TrimSpace(stdout))
	require.NoError(t, err, "stdout %q", stdout)
	t.Cleanup(func() { unix.Kill(pid, unix.SIGKILL) })
	require.False(t, processGone(pid), "the hub runs")

	code, stdout, stderr = runBin(t, bin, "hub", "stop")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "hub stopped (pid "+strconv.Itoa(pid)+")\n", stdout)
	assert.True(t, processGone(pid), "hub stop returned before the hub exited")
	_, err = os.Lstat(e.socket)
	assert.ErrorIs(t, err, os.ErrNotExist, "the hub removed its socket")

	code, stdout, stderr = runBin(t, bin, "hub", "stop")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "hub not running (socket "+e.socket+")\n", stdout)
}

// TestProcessGone: a running process is not gone; one that has exited is,
// even before anybody reaps it (a detached hub's new parent may never).
func TestProcessGone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("zombies are told from /proc, which only Linux has")
	}
	running := exec.Command("sleep", "60")
	require.NoError(t, running.Start())
	t.Cleanup(func() { running.Process.Kill(); running.Wait() })
	assert.False(t, processGone(running.Process.Pid))

	exited := exec.Command("true")
	require.NoError(t, exited.Start())
	// Wait for the exit without reaping: the child stays a zombie.
	var info unix.Siginfo
	require.NoError(t, unix.Waitid(unix.P_PID, exited.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil))
	assert.True(t, processGone(exited.Process.Pid), "a zombie has exited")
	require.NoError(t, exited.Wait())
	assert.True(t, processGone(exited.Process.Pid))
}
