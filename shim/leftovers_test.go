package shim

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/sandbox"
)

// Processes a confined command leaves running, tested with real ones: a
// daemon that outlives its command, in a cgroup the shim made for it.

// daemonPy starts a daemon (double fork, new session, streams closed)
// that runs body, a Python block indented by four spaces, then exits.
func daemonPy(body string) []byte {
	return []byte(`import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        for i in range(3):
            os.dup2(fd, i)
` + body + `
        os._exit(0)
    os._exit(0)
print("started")
`)
}

// tickerBody, for daemonPy, appends a byte to ./tick every 5 ms for 15 s.
const tickerBody = `        for i in range(3000):
            with open("tick", "a") as f:
                f.write(".")
            time.sleep(0.005)`

// allow writes the user's policy: pattern allowlisted for every agent.
func (w *confinedWorld) allow(t *testing.T, pattern string) {
	t.Helper()
	cfgDir := filepath.Join(w.env["XDG_CONFIG_HOME"], "execgate")
	require.NoError(t, os.MkdirAll(cfgDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "exec-approvals.json"),
		[]byte(`{"version": 1, "agents": {"*": {"allowlist": [{"pattern": "`+pattern+`"}]}}}`), 0o600))
}

// requireGroups skips where no cgroup can be made for a command, and
// kills whatever the test's commands left running when it ends.
func requireGroups(t *testing.T, w *confinedWorld) {
	t.Helper()
	requireSandbox(t)
	if _, err := sandbox.ProbeGroups(); err != nil {
		t.Skipf("no cgroup for a command's leftovers here: %v", err)
	}
	t.Cleanup(func() {
		marks, _ := filepath.Glob(filepath.Join(w.env["XDG_STATE_HOME"], "execgate", "confined", "*.groups", "*"))
		for _, m := range marks {
			b, _ := os.ReadFile(m)
			dir, _, _ := strings.Cut(string(b), "\n")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			sandbox.KillGroup(ctx, dir)
			cancel()
		}
	})
}

// lastRecord is the audit log's last line.
func (w *confinedWorld) lastRecord(t *testing.T) Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.env["XDG_STATE_HOME"], "execgate", "audit.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var ev Event
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &ev))
	return ev
}

// ticks is the size of the daemon's tick file, 0 before the daemon made
// it. (It is polled from Eventually's goroutine, where a failed require
// would end the test at the first look on a busy machine.)
func (w *confinedWorld) ticks(t *testing.T) int64 {
	fi, err := os.Stat(filepath.Join(w.ws, "tick"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	require.NoError(t, err)
	return fi.Size()
}

// A daemon left by a confined command is paused while a command the
// user's allowlist lets through runs unconfined in the same workspace, and
// runs on afterwards; the records name it.
func TestLeftoverPausedDuringUnconfined(t *testing.T) {
	w := newConfinedWorld(t)
	requireGroups(t, w)
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "daemon.py"), daemonPy(tickerBody), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "count.sh"),
		[]byte("a=$(wc -c < tick); sleep 0.3; b=$(wc -c < tick); echo \"$a $b\"\n"), 0o600))
	w.allow(t, "sh count.sh")

	status, out, errOut := w.run(t, "python3 daemon.py")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "started\n", out)
	require.Equal(t, 0, w.asked)
	left := w.lastRecord(t).LeftRunning
	require.Len(t, left, 1, "the finished record names the daemon")
	assert.Contains(t, left[0], "python3")
	require.Eventually(t, func() bool { return w.ticks(t) > 0 }, 5*time.Second, 10*time.Millisecond)

	status, out, errOut = w.run(t, "sh count.sh")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, 0, w.asked, "the allowlist lets it through")
	ev := w.lastRecord(t)
	assert.Empty(t, ev.Confined, "it ran unconfined")
	assert.Equal(t, left, ev.Paused)
	f := strings.Fields(out)
	require.Len(t, f, 2, out)
	assert.Equal(t, f[0], f[1], "the daemon wrote while an unconfined command ran")

	// Resumed once it ended.
	after := w.ticks(t)
	assert.Eventually(t, func() bool { return w.ticks(t) > after }, 5*time.Second, 10*time.Millisecond)
	st, err := sandbox.ReadGroup(pausedDir(t, w))
	require.NoError(t, err)
	assert.False(t, st.Frozen)
}

// pausedDir is the one group the workspace's records name.
func pausedDir(t *testing.T, w *confinedWorld) string {
	marks, _ := filepath.Glob(filepath.Join(w.env["XDG_STATE_HOME"], "execgate", "confined", "*.groups", "*"))
	require.Len(t, marks, 1)
	b, err := os.ReadFile(marks[0])
	require.NoError(t, err)
	dir, _, _ := strings.Cut(string(b), "\n")
	return dir
}

// The race the pause closes: a daemon left by a confined command waits
// for the user's allowlisted `git push` to start — after the shim has
// compared git's hooks — and plants a pre-push hook, which that push
// then runs unconfined. The receiving end is slow, as a real remote is.
func TestLeftoverCannotPlantDuringPush(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	w := newConfinedWorld(t)
	requireGroups(t, w)
	remote := filepath.Join(filepath.Dir(w.home), "remote.git")
	stolen := filepath.Join(filepath.Dir(w.home), "stolen")
	require.NoError(t, os.RemoveAll(filepath.Join(w.ws, ".git")))
	setup := exec.Command("/bin/sh", "-c", `git init -q --bare "$1" && git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x &&
git remote add origin "$1" && git config remote.origin.receivepack "sleep 0.5; git-receive-pack"`, "sh", remote)
	setup.Dir = w.ws
	out, err := setup.CombinedOutput()
	require.NoError(t, err, "%s", out)
	w.allow(t, "git push origin HEAD")
	w.env["STOLEN"] = stolen
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "daemon.py"), daemonPy(`        def pushing():
            for p in os.listdir("/proc"):
                try:
                    if b"receive-pack" in open("/proc/%s/cmdline" % p, "rb").read():
                        return True
                except OSError:
                    pass
            return False
        for i in range(20000):
            if pushing() or os.path.exists("now"):
                h = os.path.join(".git", "hooks", "pre-push")
                open(h, "w").write('#!/bin/sh\ncat ~/.ssh/id_rsa > "$STOLEN"\n')
                os.chmod(h, 0o755)
                break
            time.sleep(0.001)`), 0o600))

	status, _, errOut := w.run(t, "python3 daemon.py")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, 0, w.asked)
	require.NotEmpty(t, w.lastRecord(t).LeftRunning)

	status, _, errOut = w.run(t, "git push origin HEAD")
	assert.Equal(t, 0, status, errOut)
	assert.Equal(t, 0, w.asked)
	assert.NoFileExists(t, stolen, "a hook planted during the push ran unconfined")

	// Resumed (and told to), the daemon plants its hook now; the next
	// command sees it.
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "now"), nil, 0o600))
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(w.ws, ".git", "hooks", "pre-push"))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	status, _, errOut = w.run(t, "git push origin HEAD")
	assert.Equal(t, ExitDenied, status, errOut)
	assert.Contains(t, errOut, ".git/hooks/pre-push")
	assert.NoFileExists(t, stolen)
}

// A confined command that leaves nothing running leaves no group behind.
func TestNoLeftoverNoGroup(t *testing.T) {
	w := newConfinedWorld(t)
	requireGroups(t, w)
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "quick.py"), []byte("print('hi')\n"), 0o600))
	status, out, errOut := w.run(t, "python3 quick.py")
	require.Equal(t, 0, status, errOut)
	assert.Equal(t, "hi\n", out)
	assert.Empty(t, w.lastRecord(t).LeftRunning)
	marks, _ := filepath.Glob(filepath.Join(w.env["XDG_STATE_HOME"], "execgate", "confined", "*.groups", "*"))
	assert.Empty(t, marks)
}

// An unconfined command that runs long (a server the allowlist lets
// through) holds the others for HoldMax at most: then what it paused runs
// on, and its record says so.
func TestHoldEndsAfterHoldMax(t *testing.T) {
	w := newConfinedWorld(t)
	requireGroups(t, w)
	// Long enough that a busy machine reads a and b inside it.
	w.holdMax = 1500 * time.Millisecond
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "daemon.py"), daemonPy(tickerBody), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "long.sh"),
		[]byte("a=$(wc -c < tick); sleep 0.2; b=$(wc -c < tick); sleep 2.5; c=$(wc -c < tick); echo \"$a $b $c\"\n"), 0o600))
	w.allow(t, "sh long.sh")
	status, _, errOut := w.run(t, "python3 daemon.py")
	require.Equal(t, 0, status, errOut)
	require.Eventually(t, func() bool { return w.ticks(t) > 0 }, 5*time.Second, 10*time.Millisecond)

	status, out, errOut := w.run(t, "sh long.sh")
	require.Equal(t, 0, status, errOut)
	f := strings.Fields(out)
	require.Len(t, f, 3, out)
	assert.Equal(t, f[0], f[1], "paused at first")
	assert.NotEqual(t, f[1], f[2], "still paused after HoldMax")
	paused := w.lastRecord(t).Paused
	require.NotEmpty(t, paused)
	assert.Equal(t, "(resumed after 1.5s, while it still ran)", paused[len(paused)-1])
}

// parseStat reads what the kernel writes, whatever name a process gave
// itself; this process's own stat agrees with os.Getppid.
func TestParseStat(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	require.NoError(t, err)
	ppid, start, ok := parseStat(string(b))
	require.True(t, ok)
	assert.Equal(t, os.Getppid(), ppid)
	assert.NotZero(t, start)
	tail := " S 77 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 123456 0 0"
	for name, want := range map[string]bool{"(bash)": true, "(a) 1 2 3 (b)": true, "()": true, "(x\n)": true, "": false} {
		ppid, start, ok := parseStat("42 " + name + tail)
		if !want {
			assert.False(t, ok, name)
			continue
		}
		assert.True(t, ok, name)
		assert.Equal(t, 77, ppid, name)
		assert.Equal(t, uint64(123456), start, name)
	}
	for _, bad := range []string{"42 (x) S", "42 (x) S -5 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 9 0", "42 (x) S 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 -9 0"} {
		_, _, ok := parseStat(bad)
		assert.False(t, ok, bad)
	}
}

// FuzzParseStat: no text makes it panic, and what it accepts has the
// fields it returns where it says.
func FuzzParseStat(f *testing.F) {
	f.Add("1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0")
	f.Add("42 (a) 1) S 7 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0")
	f.Add(")")
	f.Fuzz(func(t *testing.T, stat string) {
		ppid, start, ok := parseStat(stat)
		if !ok {
			return
		}
		f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
		if n, err := strconv.Atoi(f[1]); err != nil || n != ppid || ppid < 0 {
			t.Fatalf("ppid %d from %q", ppid, f[1])
		}
		if n, err := strconv.ParseUint(f[19], 10, 64); err != nil || n != start {
			t.Fatalf("start %d from %q", start, f[19])
		}
	})
}

// The waiting line names how long the hold it waits for may still last,
// not the longest any hold lasts: a hold taken 20 s ago leaves 10.
func TestWaitLeftNamesTheRest(t *testing.T) {
	w := newConfinedWorld(t)
	s := worldSession(w)
	assert.Equal(t, holdMax, s.waitLeft(), "nothing read yet: the longest a hold lasts")
	dir, err := s.holderDir()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	_, self, ok := statOf(os.Getpid())
	require.True(t, ok)
	until := time.Now().Add(9500 * time.Millisecond).UnixNano()
	require.NoError(t, os.WriteFile(filepath.Join(dir, strconv.Itoa(self.pid)),
		[]byte(self.String()+" "+strconv.FormatInt(until, 10)), 0o600))
	require.Equal(t, []procID{self}, s.holders())
	assert.Equal(t, 10*time.Second, s.waitLeft())
}
