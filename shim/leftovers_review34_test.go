package shim

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/execgate/execgate/sandbox"
)

// Review 34: attacks on the one hold for the whole user.

// nestedGroup makes a group named as the shim of a confined command that
// the unconfined command (this test's process) started would name it: its
// maker is a live child of this process.
func nestedGroup(t *testing.T, w *confinedWorld, s *session) *sandbox.Group {
	t.Helper()
	maker := exec.Command("sleep", "30")
	require.NoError(t, maker.Start())
	t.Cleanup(func() { maker.Process.Kill(); maker.Wait() })
	_, id, ok := statOf(maker.Process.Pid)
	require.True(t, ok)
	marks, err := s.groupMarks(w.ws)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(marks, 0o700))
	name := workspaceKey(w.ws) + "-" + strconv.Itoa(id.pid) + "-" + strconv.FormatUint(id.start, 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	g, err := sandbox.NewGroup(name, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(marks, name), []byte(g.Dir), 0o600))
	return g
}

// grows reports whether the file at path grows within d.
func grows(t *testing.T, path string, d time.Duration) bool {
	t.Helper()
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	time.Sleep(d)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	return len(after) != len(before)
}

// A confined command an unconfined script started ends and leaves a
// daemon; endGroup pauses it for the script's hold. Its shim still runs a
// moment longer (the record, its own watchHeld ticking): a resumeFree in
// that moment — that shim's watchHeld, any other confined command's, an
// inner unconfined command's end — must not take the ended group for one
// whose command still runs, and resume the daemon for the rest of the
// hold.
func TestEndedNestedGroupStaysPausedWhileItsShimFinishes(t *testing.T) {
	w := newConfinedWorld(t)
	requireGroups(t, w)
	s := worldSession(w)
	release, _, err := s.holdLeftovers(context.Background())
	require.NoError(t, err)
	defer release()

	g := nestedGroup(t, w, s)
	tick := filepath.Join(w.ws, "tick")
	startInto(t, g.Dir, "/bin/sh", "-c", `while :; do echo . >> "$1"; sleep 0.01; done`, "sh", tick)
	require.Eventually(t, func() bool { _, err := os.Stat(tick); return err == nil }, 5*time.Second, 10*time.Millisecond)

	// Its command has ended; the daemon is what is left.
	left := s.endGroup(w.ws, g)
	require.NotEmpty(t, left)
	require.False(t, grows(t, tick, 100*time.Millisecond), "endGroup paused it")

	lock, err := s.lockHolds()
	require.NoError(t, err)
	s.resumeFree(s.holders())
	lock.Close()
	assert.False(t, grows(t, tick, 200*time.Millisecond), "a nested command's leftover ran while the script held")
}

// An unconfined command stopped (^Z, a debugger) while it holds the lock
// every change to the pauses is made under must not hang every other
// command of the user's for good: a confined one waiting to start still
// stops when it is told to, and an unconfined one is refused, not stuck.
func TestStoppedLockHolderHangsNobody(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1)")
	}
	w := newConfinedWorld(t)
	requireGroups(t, w)
	s := worldSession(w)
	f, err := s.openHoldLock()
	require.NoError(t, err)
	f.Close()
	holder := exec.Command("flock", f.Name(), "sleep", "30")
	require.NoError(t, holder.Start())
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	require.Eventually(t, func() bool {
		g, err := os.Open(f.Name())
		require.NoError(t, err)
		defer g.Close()
		return unix.Flock(int(g.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil
	}, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, holder.Process.Signal(syscall.SIGSTOP))

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	waited := make(chan syscall.Signal, 1)
	go func() { waited <- s.waitHeld(ctx, nil) }()
	select {
	case sig := <-waited:
		assert.Equal(t, syscall.SIGTERM, sig, "it starts only once it knows nothing holds")
	case <-time.After(10 * time.Second):
		t.Fatal("a confined command waits for good behind a stopped holder of the lock")
	}
}
