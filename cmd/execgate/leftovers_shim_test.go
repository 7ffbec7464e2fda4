package main

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

	"github.com/execgate/execgate/sandbox"
)

// While a command runs unconfined in a workspace (the user's allowlist let
// it through), confined commands there pause, so that none can change the
// hooks git is about to run for it (shim/leftovers.go). Tested with the
// built shims, as separate processes.

// leftoversEnv is a shim environment whose allowlist lets sh outer.sh and
// sh slow.sh through unconfined, with the real python3 for confined code;
// it skips where commands cannot be confined or grouped.
func leftoversEnv(t *testing.T, allow ...string) (*shimEnv, string) {
	t.Helper()
	realBash(t)
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("this machine cannot confine commands (%s): nothing runs confined here", st.Reason)
	}
	if _, err := sandbox.ProbeGroups(); err != nil {
		t.Skipf("no cgroup for a command's leftovers here: %v", err)
	}
	py, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("needs python3 for confined code")
	}
	patterns := `{"pattern": "sh outer.sh"}, {"pattern": "sh slow.sh"}`
	for _, a := range allow {
		patterns += `, {"pattern": "` + a + `"}`
	}
	e := newShimEnv(t, `{"version": 1, "agents": {"*": {"allowlist": [`+patterns+`]}}}`)
	t.Cleanup(func() { killGroups(e.state) })
	for i, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			e.env[i] = "PATH=" + filepath.Join(e.dir, "shims") + ":" + v
		}
	}
	return e, strings.TrimSpace(string(py))
}

// An unconfined command that itself runs confined code through the shims
// on PATH (a script's `bash -c`) is not paused by its own hold: it would
// wait for itself.
func TestUnconfinedRunsNestedConfined(t *testing.T) {
	e, python := leftoversEnv(t)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "quick.py"), []byte("print('quick')\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "outer.sh"), []byte("bash -c '"+python+" quick.py'\n"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "sh outer.sh"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	assert.Equal(t, "quick\n", o.stdout)
	assert.NotContains(t, o.stderr, "waiting")
	var confined bool
	for _, ev := range e.readAudit() {
		if strings.Contains(ev.Command, "quick.py") && ev.Event == "exec.finished" {
			confined = ev.Confined != ""
		}
	}
	assert.True(t, confined, "the nested command ran confined")
}

// A confined command started while another runs unconfined in the same
// workspace waits, paused, until it ends, and says so on one line.
func TestConfinedWaitsForUnconfined(t *testing.T) {
	e, python := leftoversEnv(t)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "slow.sh"),
		[]byte("sleep 1.5\ndate +%s.%N > slow.done\necho slow\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "quick.py"),
		[]byte("import time\nopen('quick.at', 'w').write('%f' % time.time())\nprint('quick')\n"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	slow := e.command(ctx, e.shim("bash"), "bash", "-c", "sh slow.sh")
	require.NoError(t, slow.Start())
	// Running once its hold is recorded.
	require.Eventually(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(e.state, "execgate", "confined", "holders", "*"))
		return len(m) == 1
	}, 10*time.Second, 5*time.Millisecond)

	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", python+" quick.py"), "")
	require.NoError(t, slow.Wait())
	require.Equal(t, 0, o.status, "%+v", o)
	assert.Equal(t, "quick\n", o.stdout)
	assert.Contains(t, o.stderr, "execgate: waiting: a command runs unconfined (pid")
	done := readFloat(t, filepath.Join(e.work, "slow.done"))
	at := readFloat(t, filepath.Join(e.work, "quick.at"))
	assert.GreaterOrEqual(t, at, done, "the confined command ran while the unconfined one did")
}

func readFloat(t *testing.T, path string) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	require.NoError(t, err)
	return f
}

// tickDaemonPy starts a daemon (new session, streams closed) that appends
// a byte to ./tick every 5 ms for 30 s, and returns once it has written
// the first.
const tickDaemonPy = `import os, time
if os.fork() == 0:
    os.setsid()
    fd = os.open(os.devnull, os.O_RDWR)
    for i in range(3):
        os.dup2(fd, i)
    for i in range(6000):
        open("tick", "a").write(".")
        time.sleep(0.005)
    os._exit(0)
while not os.path.exists("tick"):
    time.sleep(0.005)
`

// killGroups kills what the commands of a test whose state directory is
// state left running, and removes their groups.
func killGroups(state string) {
	marks, _ := filepath.Glob(filepath.Join(state, "execgate", "confined", "*.groups", "*"))
	for _, m := range marks {
		b, _ := os.ReadFile(m)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		dir, _, _ := strings.Cut(string(b), "\n")
		sandbox.KillGroup(ctx, dir)
		cancel()
	}
}

// groupsFrozen says whether every group the commands of a test whose state
// directory is state left running is paused, and that there is one.
func groupsFrozen(state string) bool {
	marks, _ := filepath.Glob(filepath.Join(state, "execgate", "confined", "*.groups", "*"))
	for _, m := range marks {
		b, _ := os.ReadFile(m)
		dir, _, _ := strings.Cut(string(b), "\n")
		st, err := sandbox.ReadGroup(dir)
		if err != nil || !st.Frozen {
			return false
		}
	}
	return len(marks) > 0
}

// A shim killed while it holds the workspace (SIGKILL: nothing of its own
// runs) leaves the daemons it paused paused; the next confined command
// there neither waits for it nor leaves them so.
func TestKilledHolderReleases(t *testing.T) {
	e, python := leftoversEnv(t)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "slow.sh"), []byte("sleep 30\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "daemon.py"), []byte(tickDaemonPy), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "quick.py"), []byte("print('quick')\n"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", python+" daemon.py"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	size := func() int64 {
		fi, err := os.Stat(filepath.Join(e.work, "tick"))
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	require.Eventually(t, func() bool { return size() > 0 }, 10*time.Second, 5*time.Millisecond)

	slow := e.command(ctx, e.shim("bash"), "bash", "-c", "sh slow.sh")
	require.NoError(t, slow.Start())
	require.Eventually(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(e.state, "execgate", "confined", "holders", "*"))
		return len(m) == 1
	}, 10*time.Second, 5*time.Millisecond)
	// The hold is recorded before the pause takes effect (the command
	// itself starts only after it has).
	require.Eventually(t, func() bool { return groupsFrozen(e.state) }, 10*time.Second, 5*time.Millisecond, "the daemon is paused")
	paused := size()
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, paused, size(), "paused while sh slow.sh runs")
	// The shim and what it runs (a group of their own: Setsid).
	require.NoError(t, syscall.Kill(-slow.Process.Pid, syscall.SIGKILL))
	slow.Wait()

	o = runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", python+" quick.py"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	assert.Equal(t, "quick\n", o.stdout)
	assert.NotContains(t, o.stderr, "waiting", "a killed holder holds nothing")
	assert.Eventually(t, func() bool { return size() > paused }, 10*time.Second, 10*time.Millisecond, "the daemon runs again")
}

// A script the allowlist runs unconfined starts confined code through the
// shims on PATH that leaves a daemon, then goes on (to a git push, say):
// the daemon is paused from the moment its command ends, as any leftover
// is while an unconfined command holds. (Its command itself is not: the
// script waits for it.)
func TestLeftoverOfNestedPausedForScript(t *testing.T) {
	e, python := leftoversEnv(t, "/bin/sh script.sh")
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "daemon.py"), []byte(tickDaemonPy), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "script.sh"), []byte("bash -c '"+python+" daemon.py'\n"+
		"a=$(wc -c < tick); sleep 0.3; b=$(wc -c < tick); echo \"$a $b\"\n"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "/bin/sh script.sh"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	f := strings.Fields(o.stdout)
	require.Len(t, f, 2, "%+v", o)
	assert.Equal(t, f[0], f[1], "the daemon wrote while the script held")
}
