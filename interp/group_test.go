package interp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/internal/proctest"
)

// How an agent stops a command: the shim's whole process group (agents
// spawn the shim detached and kill the group on a timeout), or the shim's
// pid alone. The helper runs in a session of its own, so it leads its group
// as a detached shim would.
type stopBy struct {
	name  string
	group bool
	sig   syscall.Signal
}

func (s stopBy) send(t *testing.T, pid int) {
	t.Helper()
	if s.group {
		pid = -pid
	}
	require.NoError(t, syscall.Kill(pid, s.sig))
}

// startRun starts the helper in "run" mode on script, with stdin from r.
func startRun(t *testing.T, script string, r io.Reader) *exec.Cmd {
	t.Helper()
	cmd := helper(t, "run", scriptEnv+"="+script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, io.Discard, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// TestStopEndsCommand checks that stopping the shim, by its group or by its
// pid, ends every process of the command, as killing bash's group does
// under bash. A group-wide SIGKILL reaches only processes in the group,
// so before the fix (the command in a group of its own, and only the shell
// tied to the shim by Pdeathsig) the pipeline's sleeps survived it.
func TestStopEndsCommand(t *testing.T) {
	bash(t)
	scripts := []struct {
		name   string
		script func(a, b string) string
	}{
		{"pipeline", func(a, b string) string { return "sleep " + a + " | sleep " + b }},
		{"background and wait", func(a, b string) string { return "sleep " + a + " & sleep " + b + " & wait" }},
		{"subshell", func(a, b string) string { return "( sleep " + a + "; : ) & ( sleep " + b + "; : )" }},
	}
	stops := []stopBy{
		{"killpg TERM", true, syscall.SIGTERM},
		{"killpg KILL", true, syscall.SIGKILL},
		{"killpg HUP", true, syscall.SIGHUP},
		{"kill TERM", false, syscall.SIGTERM},
		{"kill HUP", false, syscall.SIGHUP},
	}
	for _, sc := range scripts {
		for _, stop := range stops {
			t.Run(sc.name+"/"+stop.name, func(t *testing.T) {
				a, b := proctest.SleepArg(), proctest.SleepArg()
				cmd := startRun(t, sc.script(a, b), nil)
				sleeps := proctest.Sleeps(t, a, b)
				stop.send(t, cmd.Process.Pid)
				assert.Equal(t, 128+int(stop.sig), waitExit(t, cmd))
				for _, pid := range sleeps {
					assert.True(t, proctest.Eventually(5*time.Second, func() bool { return proctest.Gone(pid) }),
						"process %d of the command outlived the shim", pid)
				}
			})
		}
	}
}

// TestStopLeavesDetachedJobs checks the background jobs of a stopped
// command against what bash does, found by running bash -c the same way: a
// job under nohup survives SIGHUP to the group but not SIGTERM; one under
// setsid is in another session and survives both; a plain one dies of
// either, and no job of a non-interactive shell gets SIGINT. A signal to the
// shim alone is passed on as to the group. After a normal exit all keep
// running.
func TestStopLeavesDetachedJobs(t *testing.T) {
	bash(t)
	cases := []struct {
		stop      *stopBy // nil: the command ends by itself
		jobDies   bool    // a plain background job
		nohupDies bool
	}{
		{&stopBy{"killpg TERM", true, syscall.SIGTERM}, true, true},
		{&stopBy{"killpg KILL", true, syscall.SIGKILL}, true, true},
		{&stopBy{"killpg HUP", true, syscall.SIGHUP}, true, false},
		{&stopBy{"killpg INT", true, syscall.SIGINT}, false, false}, // async jobs ignore SIGINT
		{&stopBy{"kill TERM", false, syscall.SIGTERM}, true, true},
		{&stopBy{"kill HUP", false, syscall.SIGHUP}, true, false},
		{nil, false, false},
	}
	for _, tc := range cases {
		name := "exit"
		if tc.stop != nil {
			name = tc.stop.name
		}
		t.Run(name, func(t *testing.T) {
			fg, nh, ss := proctest.SleepArg(), proctest.SleepArg(), proctest.SleepArg()
			// The command waits on stdin, so that it ends only when told
			// to, after all its processes have been found.
			stdin, w, err := os.Pipe()
			require.NoError(t, err)
			defer w.Close()
			cmd := startRun(t, fmt.Sprintf("nohup sleep %s >/dev/null 2>&1 & setsid sleep %s & sleep %s & read -r x; exit 0", nh, ss, fg), stdin)
			stdin.Close()
			sleeps := proctest.Sleeps(t, fg, nh, ss)
			fgPid, nohupPid, setsidPid := sleeps[0], sleeps[1], sleeps[2]

			sig := syscall.SIGTERM // what a wrongly relayed signal would be
			if tc.stop != nil {
				sig = tc.stop.sig
				tc.stop.send(t, cmd.Process.Pid)
				assert.Equal(t, 128+int(sig), waitExit(t, cmd))
			} else {
				w.Close()
				assert.Equal(t, 0, waitExit(t, cmd))
			}
			alive := func(pid int) bool { return !proctest.Gone(pid) && !struck(pid, sig) }
			dies := func(pid int) bool {
				return proctest.Eventually(5*time.Second, func() bool { return proctest.Gone(pid) })
			}
			if tc.jobDies {
				assert.True(t, dies(fgPid), "the plain background job survived")
			} else {
				assert.True(t, alive(fgPid), "the plain background job was killed")
			}
			if tc.nohupDies {
				assert.True(t, dies(nohupPid), "the nohup job survived")
			} else {
				assert.True(t, alive(nohupPid), "the nohup job was killed")
			}
			assert.True(t, alive(setsidPid), "the setsid job was killed")
		})
	}
}

// counterScript counts the SIGTERMs it gets and writes the count to $OUT on
// SIGWINCH. bash's own handler counts each delivery, and runs the trap once
// for each.
const counterScript = `n=0
trap 'n=$((n+1))' TERM
trap 'echo $n > "$OUT"; exit 0' WINCH
echo counting $$
while :; do sleep 5 & wait $!; done
`

// TestGroupSignalOnce checks that a signal sent to the whole group is not
// relayed on top: a process that catches SIGTERM counts one, as under bash.
// The counter reports on SIGWINCH, which is delivered after any SIGTERM
// already sent to it (standard signals go lowest first), so a relayed
// second copy is counted unless the kernel merged the two while the first
// was still pending, or the shell had died and orphaned the subshell before
// the relay looked for the command's processes: with the check taken out
// this test failed in 3 of 6 runs of 3 tries, hence 5 tries. The check
// itself is tested exactly in TestStruck.
func TestGroupSignalOnce(t *testing.T) {
	bash(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "count.sh")
	require.NoError(t, os.WriteFile(script, []byte(counterScript), 0o600))
	for try := range 5 {
		out := filepath.Join(dir, fmt.Sprint(try))
		// The subshell between the shell and the counter catches SIGTERM
		// and lives on, so that the counter stays in the command's tree
		// after the shell dies and a relayed copy would reach it.
		cmd, fields := startShim(t, fmt.Sprintf("( trap : TERM; OUT=%q bash %q; : ) & wait", out, script))
		require.Len(t, fields, 2)
		require.Equal(t, "counting", fields[0])
		counter, err := strconv.Atoi(fields[1])
		require.NoError(t, err)
		killLater(t, counter)

		require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM))
		assert.Equal(t, 128+int(syscall.SIGTERM), waitExit(t, cmd))
		// The shim has exited: whatever it relayed has been sent.
		require.NoError(t, syscall.Kill(counter, syscall.SIGWINCH))
		var got []byte
		require.True(t, proctest.Eventually(5*time.Second, func() bool {
			got, err = os.ReadFile(out)
			return err == nil && strings.HasSuffix(string(got), "\n")
		}), "the counter did not report")
		require.Equal(t, "1\n", string(got), "try %d", try)
	}
}

// TestForegroundInterrupt checks the terminal case: ^C typed at a terminal
// whose foreground is the shim reaches every process of the command, and
// the shim ends with status 130, as bash would.
func TestForegroundInterrupt(t *testing.T) {
	bash(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	a, b := proctest.SleepArg(), proctest.SleepArg()
	cmd := helper(t, "run", scriptEnv+"=sleep "+a+" | sleep "+b)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	go io.Copy(io.Discard, ptmx) // drain the echo so the terminal never blocks
	sleeps := proctest.Sleeps(t, a, b)
	for _, pid := range sleeps {
		st, ok := proctest.ReadStat(pid)
		require.True(t, ok)
		assert.Equal(t, cmd.Process.Pid, st.Pgid, "the command is in the terminal's foreground group")
	}
	_, err = ptmx.Write([]byte{0x03}) // ^C
	require.NoError(t, err)
	assert.Equal(t, 130, waitExit(t, cmd))
	for _, pid := range sleeps {
		assert.True(t, proctest.Eventually(5*time.Second, func() bool { return proctest.Gone(pid) }), "process %d survived ^C", pid)
	}
}

// TestCommandTree checks which processes a relayed signal goes to: the
// shell and its descendants in the group, not the group's other members
// nor descendants that left it.
func TestCommandTree(t *testing.T) {
	const group, other = 100, 200
	procs := []procEntry{
		{pid: 100, ppid: 1, pgid: group},   // the shim
		{pid: 101, ppid: 100, pgid: group}, // the shell
		{pid: 102, ppid: 101, pgid: group}, // a pipeline member
		{pid: 103, ppid: 102, pgid: group}, // its child
		{pid: 104, ppid: 101, pgid: other}, // setsid
		{pid: 105, ppid: 104, pgid: other}, // and its child
		{pid: 106, ppid: 1, pgid: group},   // the rest of the agent's pipeline
		{pid: 107, ppid: 99, pgid: group},  // the agent's other child
	}
	assert.Equal(t, []int{101, 102, 103}, commandTree(procs, 101, group), "ancestors first")
	assert.Empty(t, commandTree(procs, 999, group), "a shell already gone")
}

// TestStruck checks what struck can see of a signal: a process with it
// pending or dying of it is struck, a running one is not.
func TestStruck(t *testing.T) {
	sh := bash(t)
	// A stopped shell that traps SIGTERM keeps it pending.
	trapped := exec.Command(sh, "-c", "trap 'exit 3' TERM; kill -STOP $$; exit 0")
	require.NoError(t, trapped.Start())
	defer trapped.Process.Kill()
	require.True(t, proctest.Eventually(5*time.Second, func() bool {
		st, ok := proctest.ReadStat(trapped.Process.Pid)
		return ok && st.State == 'T'
	}), "the shell did not stop")
	assert.False(t, struck(trapped.Process.Pid, syscall.SIGTERM))
	require.NoError(t, trapped.Process.Signal(syscall.SIGTERM))
	assert.True(t, struck(trapped.Process.Pid, syscall.SIGTERM), "pending while stopped")
	assert.False(t, struck(trapped.Process.Pid, syscall.SIGHUP), "another signal")
	require.NoError(t, trapped.Process.Signal(syscall.SIGCONT))
	trapped.Wait()
	assert.Equal(t, 3, trapped.ProcessState.ExitCode(), "the trap ran")
	// Killed: a zombie until reaped.
	sleeper := exec.Command("sleep", "30")
	require.NoError(t, sleeper.Start())
	defer sleeper.Wait()
	require.NoError(t, sleeper.Process.Signal(syscall.SIGTERM))
	require.True(t, proctest.Eventually(5*time.Second, func() bool { return proctest.Gone(sleeper.Process.Pid) }))
	assert.True(t, struck(sleeper.Process.Pid, syscall.SIGTERM))
}
