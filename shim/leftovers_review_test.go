package shim

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/execgate/execgate/sandbox"
)

// Attacks on the pause of leftovers (leftovers.go), with real cgroups and
// real processes.

// worldSession is a session of w's environment, as a shim started in it
// would have.
func worldSession(w *confinedWorld) *session {
	return newSession(Options{Getenv: func(k string) string { return w.env[k] }, Stderr: os.Stderr})
}

// startInto starts argv inside the cgroup at dir, as the shim starts a
// confined command into its group (CLONE_INTO_CGROUP). Into a paused
// group the start itself waits (vfork) until it is resumed: it is made in
// the background.
func startInto(t *testing.T, dir string, argv ...string) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	started := make(chan error, 1)
	go func() {
		err := cmd.Start()
		unix.Close(fd)
		started <- err
		if err == nil {
			cmd.Wait()
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		sandbox.KillGroup(ctx, dir)
		<-started
	})
}

// A confined command's shim makes its group, finds no unconfined command
// running, and starts its command into the group a moment later. An
// unconfined command that starts in that moment must pause that group
// too: the command is about to run in it, and would then run, unpaused,
// beside the unconfined one (writing .git/hooks while a push reads them).
func TestHoldPausesGroupAboutToTakeItsCommand(t *testing.T) {
	w := newConfinedWorld(t)
	requireGroups(t, w)
	confined := worldSession(w)
	g := confined.newGroup(w.ws)
	require.NotNil(t, g)
	defer g.Close()

	unconfined := worldSession(w)
	release, _, err := unconfined.holdLeftovers(context.Background(), w.ws)
	require.NoError(t, err)
	defer release()

	// The confined command starts now, into its group.
	planted := filepath.Join(w.ws, ".git", "hooks-planted")
	startInto(t, g.Dir, "/bin/sh", "-c", `echo x > "$1"`, "sh", planted)
	time.Sleep(300 * time.Millisecond)
	assert.NoFileExists(t, planted, "a confined command ran while an unconfined one did")
	release()
	assert.Eventually(t, func() bool { _, err := os.Stat(planted); return err == nil },
		5*time.Second, 10*time.Millisecond, "resumed once the unconfined command ended")
}
