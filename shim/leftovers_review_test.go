package shim

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	release, _, err := unconfined.holdLeftovers(context.Background())
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

// A repository inside the workspace (a nested clone, a vendored one) is a
// workspace of its own for a command run in it, but a confined command of
// the outer one may write it. A daemon the outer one left must not plant
// the inner repository's pre-push hook while the user's allowlisted push
// runs there unconfined.
func TestOuterLeftoverCannotPlantDuringNestedPush(t *testing.T) {
	leftoverPlantsDuringPush(t, "inner", true, "", "inner", "git push origin HEAD")
}

// The workspace an unconfined command pauses is its shim's working
// directory's; the command may cd elsewhere (an agent whose shell starts
// in a directory of several repositories). Here the person approves the
// push (the allowlist does not cover it after a cd): what they saw was
// the hooks before it ran.
func TestLeftoverCannotPlantDuringPushAfterCd(t *testing.T) {
	leftoverPlantsDuringPush(t, "sub", false, "sub", "", "cd sub && git push origin HEAD")
}

// leftoverPlantsDuringPush leaves a daemon from a confined command run in
// the directory daemonIn (relative to the workspace, which is a
// repository if outerRepo); it plants a pre-push hook in the repository
// at rel once a push is under way, which command, allowlisted and run
// from pushIn, makes.
func leftoverPlantsDuringPush(t *testing.T, rel string, outerRepo bool, daemonIn, pushIn, command string) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	w := newConfinedWorld(t)
	requireGroups(t, w)
	repo := filepath.Join(w.ws, rel)
	require.NoError(t, os.RemoveAll(filepath.Join(w.ws, ".git")))
	require.NoError(t, os.MkdirAll(repo, 0o700))
	remote := filepath.Join(filepath.Dir(w.home), "remote.git")
	stolen := filepath.Join(filepath.Dir(w.home), "stolen")
	if outerRepo {
		require.NoError(t, exec.Command("git", "init", "-q", w.ws).Run())
	}
	setup := exec.Command("/bin/sh", "-c", `git init -q --bare "$1" && git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x &&
git remote add origin "$1"`, "sh", remote)
	setup.Dir = repo
	// A slow remote, as a real one is (in the user's own configuration).
	require.NoError(t, os.WriteFile(filepath.Join(w.home, ".gitconfig"),
		[]byte("[remote \"origin\"]\n\treceivepack = \"sleep 0.5; git-receive-pack\"\n"), 0o600))
	out, err := setup.CombinedOutput()
	require.NoError(t, err, "%s", out)
	w.allow(t, "git push origin HEAD")
	w.env["STOLEN"] = stolen
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, daemonIn, "daemon.py"), daemonPy(`        def pushing():
            for p in os.listdir("/proc"):
                try:
                    if b"receive-pack" in open("/proc/%s/cmdline" % p, "rb").read():
                        return True
                except OSError:
                    pass
            return False
        for i in range(20000):
            if pushing():
                h = os.path.join(`+"\""+repo+"\""+`, ".git", "hooks", "pre-push")
                open(h, "w").write('#!/bin/sh\ncat ~/.ssh/id_rsa > "$STOLEN"\n')
                os.chmod(h, 0o755)
                break
            time.sleep(0.001)`), 0o600))

	status, _, errOut := w.runIn(t, filepath.Join(w.ws, daemonIn), "python3 daemon.py")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, 0, w.asked)
	require.NotEmpty(t, w.lastRecord(t).LeftRunning)

	w.approve = true
	status, _, errOut = w.runIn(t, filepath.Join(w.ws, pushIn), command)
	assert.Equal(t, 0, status, errOut)
	assert.NoFileExists(t, stolen, "a hook planted during the push ran unconfined (status %d)", status)
}

// A group whose shim is gone outlives it (a daemon); its name keeps the
// shim's PID, which the system may give to a process the unconfined
// command starts. That process is not what made the group: the group
// stays paused while the unconfined command runs.
func TestHoldIgnoresReusedCreatorPID(t *testing.T) {
	w := newConfinedWorld(t)
	requireGroups(t, w)
	s := worldSession(w)
	// Started by this process, which runs unconfined below: the PID the
	// group's gone shim had.
	reuser := exec.Command("sleep", "30")
	require.NoError(t, reuser.Start())
	t.Cleanup(func() { reuser.Process.Kill(); reuser.Wait() })

	marks, err := s.groupMarks(w.ws)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(marks, 0o700))
	// A group named as the shim names them, but for the PID.
	made := s.newGroup(w.ws)
	require.NotNil(t, made)
	made.Close()
	require.NoError(t, sandbox.RemoveGroup(made.Dir))
	require.NoError(t, os.Remove(filepath.Join(marks, filepath.Base(made.Dir))))
	parts := strings.Split(filepath.Base(made.Dir), "-")
	parts[1] = strconv.Itoa(reuser.Process.Pid)
	name := strings.Join(parts, "-")
	g, err := sandbox.NewGroup(name, nil)
	require.NoError(t, err)
	g.Close()
	require.NoError(t, os.WriteFile(filepath.Join(marks, name), []byte(g.Dir), 0o600))
	tick := filepath.Join(w.ws, "tick")
	startInto(t, g.Dir, "/bin/sh", "-c", `while :; do echo . >> "$1"; sleep 0.01; done`, "sh", tick)
	require.Eventually(t, func() bool { _, err := os.Stat(tick); return err == nil }, 5*time.Second, 10*time.Millisecond)

	release, paused, err := s.holdLeftovers(context.Background())
	require.NoError(t, err)
	defer release()
	require.NotEmpty(t, paused)
	// What a watching confined command, or another unconfined one's end,
	// does meanwhile.
	lock, err := s.lockHolds()
	require.NoError(t, err)
	s.resumeFree(s.holders())
	lock.Close()
	before, err := os.ReadFile(tick)
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond)
	after, err := os.ReadFile(tick)
	require.NoError(t, err)
	assert.Equal(t, len(before), len(after), "a leftover ran while an unconfined command did")
}
