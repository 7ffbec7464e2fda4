package interp

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startShim starts the helper in "run" mode with script and waits for the
// script's first line, which it returns split into fields.
func startShim(t *testing.T, script string) (*exec.Cmd, []string) {
	t.Helper()
	cmd := helper(t, "run", scriptEnv+"="+script)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		return cmd, strings.Fields(l)
	case <-time.After(10 * time.Second):
		t.Fatal("helper did not start")
	}
	return nil, nil
}

// pids parses the "ready PID..." line.
func pids(t *testing.T, fields []string) []int {
	t.Helper()
	require.NotEmpty(t, fields)
	require.Equal(t, "ready", fields[0])
	var ps []int
	for _, f := range fields[1:] {
		var p int
		_, err := fmt.Sscan(f, &p)
		require.NoError(t, err)
		ps = append(ps, p)
	}
	return ps
}

// waitExit waits for the helper and returns its exit status.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return status(cmd.ProcessState)
	case <-time.After(10 * time.Second):
		t.Fatal("helper did not exit")
	}
	return -1
}

// TestSignalRelay sends each signal to the shim alone and checks what bash
// would do had the signal reached its process group: the shell's status, and
// whether its background job dies (async jobs of a non-interactive bash
// ignore SIGINT, so that one survives).
func TestSignalRelay(t *testing.T) {
	bash(t)
	cases := []struct {
		sig     syscall.Signal
		jobDies bool
	}{
		{syscall.SIGTERM, true},
		{syscall.SIGHUP, true},
		{syscall.SIGINT, false},
	}
	for _, tt := range cases {
		t.Run(tt.sig.String(), func(t *testing.T) {
			cmd, fields := startShim(t, `sleep 30 & echo ready $$ $! $(cut -d' ' -f5 /proc/$$/stat); wait`)
			ps := pids(t, fields)
			require.Len(t, ps, 3)
			shell, job, pgid := ps[0], ps[1], ps[2]
			killLater(t, job)
			// $! is known as soon as bash forks; the job sets SIGINT aside
			// only before it execs sleep, and on a busy machine the signal
			// could arrive first, which bash's own group would see too.
			require.True(t, eventually(5*time.Second, func() bool { return comm(job) == "sleep" }), "the job never became sleep")
			assert.NotEqual(t, shell, pgid)
			assert.Equal(t, cmd.Process.Pid, pgid, "the shell stays in the shim's process group")

			require.NoError(t, cmd.Process.Signal(tt.sig))
			assert.Equal(t, 128+int(tt.sig), waitExit(t, cmd))
			assert.True(t, gone(shell))
			if tt.jobDies {
				assert.True(t, eventually(time.Second, func() bool { return gone(job) }), "job in the group got the signal")
			} else {
				time.Sleep(100 * time.Millisecond)
				assert.False(t, gone(job), "background job ignores SIGINT, as under bash")
			}
		})
	}
}

// TestShimSIGKILL checks that killing the shim outright kills its shell.
func TestShimSIGKILL(t *testing.T) {
	bash(t)
	cmd, fields := startShim(t, `sleep 30 & echo ready $$ $!; wait`)
	ps := pids(t, fields)
	require.Len(t, ps, 2)
	killLater(t, ps[1]) // orphaned by design: SIGKILL cannot be relayed
	require.False(t, gone(ps[0]))
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	assert.True(t, eventually(time.Second, func() bool { return gone(ps[0]) }), "shell outlived the shim")
}

// TestForegroundTerminal runs the shim as the foreground of a real pty with
// stdin on the terminal and stdout on a pipe: the shell must stay in the
// shim's process group so that it can read the terminal (in its own group it
// would be stopped by SIGTTIN and this test would time out).
func TestForegroundTerminal(t *testing.T) {
	bash(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	cmd := helper(t, "run", scriptEnv+`=read -r x; echo "got $x $(cut -d' ' -f5 /proc/$$/stat)"`)
	cmd.Stdin = tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	go func() { // drain the echo so the terminal never blocks
		buf := make([]byte, 1024)
		for {
			if _, err := ptmx.Read(buf); err != nil {
				return
			}
		}
	}()
	_, err = ptmx.Write([]byte("hello\n"))
	require.NoError(t, err)
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		assert.Equal(t, fmt.Sprintf("got hello %d\n", cmd.Process.Pid), l)
	case <-time.After(5 * time.Second):
		t.Fatal("the shell could not read the terminal")
	}
	assert.Equal(t, 0, waitExit(t, cmd))
}

// TestExec checks that Exec replaces the process with bash: same pid, the
// script's output and status.
func TestExec(t *testing.T) {
	bash(t)
	cmd := helper(t, "exec", scriptEnv+"=echo $$; exit 3")
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.ExitCode())
	assert.Equal(t, fmt.Sprintf("%d\n", cmd.Process.Pid), out.String())
}

// TestExecRefuses checks the cases Exec must refuse before replacing the
// test process.
func TestExecRefuses(t *testing.T) {
	sh := bash(t)
	self, err := os.Executable()
	require.NoError(t, err)
	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer f.Close()
	argv := []string{"bash", "-c", "true"}
	require.ErrorContains(t, Exec(Options{Shell: self, Argv: argv}), "execgate itself")
	require.ErrorContains(t, Exec(Options{Shell: sh, Argv: argv, Stdout: f}), "not this process's")
	require.ErrorContains(t, Exec(Options{Shell: sh, Argv: argv, Stderr: os.Stdout}), "not this process's")
	require.ErrorContains(t, Exec(Options{Shell: sh}), "empty argv")
}

// TestSignalBeforeStart checks what a signal caught by the relay before Run
// does: one that would have ended bash means the command never starts and
// the result reads as killed by it; SIGWINCH changes nothing.
func TestSignalBeforeStart(t *testing.T) {
	bash(t)
	for _, tc := range []struct {
		sig     syscall.Signal
		want    string
		started bool
	}{
		{syscall.SIGTERM, "status 143 signaled true err <nil>", false},
		{syscall.SIGINT, "status 130 signaled true err <nil>", false},
		{syscall.SIGWINCH, "status 0 signaled false err <nil>", true},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			out, err := helper(t, "early", fmt.Sprintf("%s=%d", arg1Env, tc.sig), scriptEnv+"=touch "+marker).CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Equal(t, tc.want, strings.TrimSpace(string(out)))
			_, statErr := os.Stat(marker)
			assert.Equal(t, tc.started, statErr == nil, "command started")
		})
	}
}
