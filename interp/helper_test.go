package interp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The test binary doubles as a stand-in for the shim: when helperEnv is set,
// TestMain runs one helper mode instead of the tests. That gives the signal,
// exec and memory tests a real separate process to signal, replace or
// measure.
const (
	helperEnv = "EXECGATE_INTERP_HELPER"
	scriptEnv = "EXECGATE_INTERP_SCRIPT"
	shellEnv  = "EXECGATE_INTERP_SHELL"
	arg1Env   = "EXECGATE_INTERP_ARG"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	os.Exit(m.Run())
}

func helperMain(mode string) int {
	shell := os.Getenv(shellEnv)
	script := os.Getenv(scriptEnv)
	switch mode {
	case "run": // the shim: capped run with signal relaying
		res, err := Run(context.Background(), Options{
			Shell: shell, Argv: []string{"bash", "-c", script},
			Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
			MaxBytes: DefaultMaxBytes, TailBytes: DefaultTailBytes,
			Relay: StartRelay(),
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 250
		}
		return res.ExitStatus
	case "nochild": // SIGCHLD ignored: the kernel reaps the shell itself
		signal.Ignore(syscall.SIGCHLD)
		res, err := Run(context.Background(), Options{
			Shell: shell, Argv: []string{"bash", "-c", script},
			Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		})
		fmt.Printf("lost=%v status=%d\n", errors.Is(err, ErrStatusLost), res.ExitStatus)
		return 0
	case "exec":
		err := Exec(Options{Shell: shell, Argv: []string{"bash", "-c", script}, Stdout: os.Stdout})
		fmt.Fprintln(os.Stderr, err)
		return 250
	case "findshell": // print FindShell's answer, then try to Run ourselves
		got, err := FindShell(os.Getenv(arg1Env))
		fmt.Printf("findshell %q %v\n", got, err)
		self, _ := os.Executable()
		_, err = Run(context.Background(), Options{Shell: self, Argv: []string{"bash", "-c", "true"}})
		fmt.Printf("runself %v\n", err)
		return 0
	case "early": // a signal arrives after the relay is up, before Run
		n, _ := strconv.Atoi(os.Getenv(arg1Env))
		sig := syscall.Signal(n)
		relay := StartRelay()
		relay.wait()
		seen := make(chan os.Signal, 1)
		signal.Notify(seen, sig)
		syscall.Kill(os.Getpid(), sig)
		<-seen
		// Stop waits for the delivery under way, so the relay has been
		// offered the signal too.
		signal.Stop(seen)
		res, err := Run(context.Background(), Options{
			Shell: shell, Argv: []string{"bash", "-c", script}, Stdout: os.Stdout, Stderr: os.Stderr, Relay: relay,
		})
		fmt.Printf("status %d signaled %v err %v\n", res.ExitStatus, res.Signaled, err)
		return 0
	case "rss": // push a lot of output through the cap
		n, _ := strconv.Atoi(os.Getenv(arg1Env))
		res, err := Run(context.Background(), Options{
			Shell: shell, Argv: []string{"bash", "-c", fmt.Sprintf("head -c %d /dev/zero; head -c %d /dev/zero >&2", n/2, n/2)},
			Stdout: io.Discard, Stderr: io.Discard,
			MaxBytes: DefaultMaxBytes, TailBytes: DefaultTailBytes,
			SpillDir: os.Getenv(scriptEnv), SpillMaxBytes: 8 << 20,
		})
		if err != nil || res.Bytes != int64(n) || res.SpillPath == "" {
			fmt.Fprintln(os.Stderr, "rss helper:", res.Bytes, res.SpillPath, err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 251
}

// helper returns a command that runs the test binary in the given mode. It
// starts in a new session with no controlling terminal, so that what it does
// with process groups does not depend on how go test was started.
func helper(t testing.TB, mode string, env ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode, shellEnv + "=" + bash(t)}, env...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// bash returns the path of bash, skipping the test when there is none.
func bash(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	p, err = filepath.Abs(p)
	require.NoError(t, err)
	return p
}

// status is the exit status bash reports for a finished process: the exit
// code, or 128+n when signal n killed it.
func status(ps *os.ProcessState) int {
	ws := ps.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// gone reports whether pid has exited (a zombie counts: nothing runs).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) == 0 || fields[0] == "Z" || fields[0] == "X"
}

// comm is the name the process runs as, or "" once it is gone.
func comm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// eventually waits up to d for cond.
func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// killLater makes sure a process a test caused to exist does not outlive it.
func killLater(t *testing.T, pid int) {
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
}
