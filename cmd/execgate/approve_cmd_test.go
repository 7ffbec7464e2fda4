package main

import (
	"context"
	"errors"
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

	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/prompt"
	"github.com/execgate/execgate/shim"
)

// wiredBinary returns the execgate binary, or skips when the root command
// does not have the hub commands yet.
func wiredBinary(t *testing.T) string {
	t.Helper()
	if !hasCommand(newRootCmd(&globals{getenv: os.Getenv}).Commands(), "approve") {
		t.Skip("the hub commands are not in the root command yet: root.AddCommand(hubCommands(g)...)")
	}
	return filepath.Join(shimDir(t), "execgate")
}

// screenAfter waits until the terminal output past offset contains s and
// returns the offset just past it.
func screenAfter(t *testing.T, out *syncBuffer, offset int, s string) int {
	t.Helper()
	var i int
	require.Eventually(t, func() bool {
		i = strings.Index(out.String()[offset:], s)
		return i >= 0
	}, 15*time.Second, 10*time.Millisecond, "waiting for %q; screen: %q", s, out.String()[offset:])
	return offset + i + len(s)
}

// TestApproveOnPty runs `execgate approve` as a person would, in a pty: it
// waits for a hub that is not there yet, shows a request, allows it always
// with one key, notices the hub restart and quits without answering what
// is still pending.
func TestApproveOnPty(t *testing.T) {
	bin := wiredBinary(t)
	e := newHubCLIEnv(t)
	cmd := exec.Command(bin, "approve", "--no-bell")
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "NO_COLOR=1")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	out := &syncBuffer{}
	drained := make(chan struct{}) // the reader saw the pty's end
	go func() {
		defer close(drained)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()

	at := screenAfter(t, out, 0, "hub not running — retrying")
	stop := e.startHub(t)
	e.waitApprovers(t, 1)
	req := e.request(t, "ptyreq0001", "rm -rf ./build\x1b[2J")
	at = screenAfter(t, out, at, `rm -rf ./build\x1b[2J`)
	// Decision keys right after a request appeared are held back: press
	// until the hub has an answer.
	for i := 0; ; i++ {
		_, err := ptmx.Write([]byte("a"))
		require.NoError(t, err)
		select {
		case <-req.done:
		case <-time.After(300 * time.Millisecond):
			require.Less(t, i, 20, "no answer after pressing a")
			continue
		}
		break
	}
	ans := req.wait(t)
	require.NotNil(t, ans.Decision)
	assert.Equal(t, hub.AllowAlways, *ans.Decision)
	assert.True(t, strings.HasPrefix(ans.ResolvedBy, "approve@pts/"), ans.ResolvedBy)
	at = screenAfter(t, out, at, "allowed always by you: ptyreq00")

	// The hub restarts; approve says so, reconnects and shows what comes.
	stop()
	at = screenAfter(t, out, at, "hub not running — retrying")
	e.startHub(t)
	e.waitApprovers(t, 1)
	req2 := e.request(t, "ptyreq0002", "terraform destroy")
	screenAfter(t, out, at, "terraform destroy")

	// Quitting answers nothing.
	_, err = ptmx.Write([]byte("q"))
	require.NoError(t, err)
	select {
	case err := <-exited:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("approve did not quit on q")
	}
	exited <- nil // for the cleanup
	// What approve wrote last may still be in the pty: read to its end
	// (EIO once the child is gone and the buffer drained) before looking.
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
		t.Fatal("the pty did not end after approve exited")
	}
	assert.Contains(t, out.String(), "\x1b[?1049l", "the alternate screen was left")
	list, err := e.dial(t, hub.RoleApprover, "probe").List(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "ptyreq0002", list[0].ID)
	select {
	case <-req2.done:
		t.Fatal("quitting answered a request")
	default:
	}
}

// TestHubDetach starts a hub in the background as a user would and stops
// it with SIGTERM.
func TestHubDetach(t *testing.T) {
	bin := wiredBinary(t)
	e := newHubCLIEnv(t)
	start := func() (stdout, stderr string, err error) {
		cmd := exec.Command(bin, "hub", "--detach")
		var o, s strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &s
		err = cmd.Run()
		return o.String(), s.String(), err
	}
	stdout, stderr, err := start()
	require.NoError(t, err, stderr)
	pid, err := strconv.Atoi(strings.TrimSpace(stdout))
	require.NoError(t, err, "stdout %q", stdout)
	proc, err := os.FindProcess(pid)
	require.NoError(t, err)
	t.Cleanup(func() { proc.Signal(syscall.SIGKILL) })

	code, status, _ := hubRun(t, "hub", "status")
	require.Equal(t, exitOK, code)
	assert.Contains(t, status, "hub running: pid "+strings.TrimSpace(stdout)+", socket "+e.socket)

	// One hub per user: a second start says which one runs.
	_, stderr, err = start()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "second start: %v", err)
	assert.Equal(t, exitError, ee.ExitCode())
	oneLine(t, stderr)
	assert.Contains(t, stderr, "hub already running (pid "+strings.TrimSpace(stdout))

	log, err := os.ReadFile(filepath.Join(e.state, "execgate", "hub.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "hub listening")

	require.NoError(t, proc.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool {
		code, _, _ := hubRun(t, "hub", "status")
		return code == exitNoHub
	}, 10*time.Second, 20*time.Millisecond)
	_, err = os.Lstat(e.socket)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the hub removed its socket: %v", err)
}

// TestPastDecisions: the approver's history pane reads the audit log's
// decisions, newest first, naming who decided.
func TestPastDecisions(t *testing.T) {
	state := t.TempDir()
	g := &globals{getenv: func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}}
	path, err := shim.DefaultAuditPath(g.getenv)
	require.NoError(t, err)
	audit := shim.AuditLog{Path: path}
	now := time.Now()
	require.NoError(t, audit.Append(shim.Event{Time: now.Add(-2 * time.Minute), Event: shim.EventStarted, Agent: "claude-code", Command: "npm run test",
		Decision: "allow", Scope: "always", Allowlisted: []string{"npm run test **"}, Approver: &prompt.Approver{Uid: 1000, User: "ada", Kind: "web"}}))
	require.NoError(t, audit.Append(shim.Event{Time: now.Add(-time.Minute), Event: shim.EventFinished, Agent: "claude-code", Command: "npm run test"}))
	require.NoError(t, audit.Append(shim.Event{Time: now, Event: shim.EventDenied, Agent: "codex", Command: "rm -rf /", Decision: "deny", DecidedBy: "policy"}))
	rows, err := pastDecisions(g, now.Add(time.Second))
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, "rm -rf /", rows[0].Command)
	assert.Equal(t, "policy", rows[0].Who)
	assert.Equal(t, "ada (web)", rows[1].Who)
	assert.Equal(t, "always", rows[1].Scope)
	assert.Equal(t, []string{"npm run test **"}, rows[1].Saved)
}
