package hub

import (
	"bufio"
	"context"
	"io"
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

	"github.com/execgate/execgate/config"
)

// hubProcess runs a hub in a child process (this test binary).
type hubProcess struct {
	cmd    *exec.Cmd
	socket string
	config string
	token  string
}

func startHubProcess(t *testing.T, dir, socketJSON string) *hubProcess {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	p := &hubProcess{socket: filepath.Join(dir, "run", "hub.sock"), config: filepath.Join(dir, "cfg.json")}
	if socketJSON != "" {
		writeConfig(t, p.config, socketJSON)
	}
	p.cmd = exec.Command(exe)
	p.cmd.Env = append(os.Environ(), serveEnv+"=1", serveConfigEnv+"="+p.config, serveSocketEnv+"="+p.socket)
	p.cmd.Stderr = os.Stderr
	out, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- line
		io.Copy(io.Discard, out)
	}()
	select {
	case line := <-ready:
		require.Equal(t, "ready\n", line)
	case <-time.After(20 * time.Second):
		t.Fatal("hub process did not start")
	}
	cfg, _, _, err := config.Load(p.config)
	require.NoError(t, err)
	p.token = cfg.Socket.Token
	return p
}

// A shim waiting on the hub notices at once when the hub is killed.
func TestHubKilledWhileWaiting(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	p := startHubProcess(t, shortTempDir(t), "")
	ctx := context.Background()
	appr, err := Dial(ctx, DialOptions{Socket: p.socket, Token: p.token, Role: RoleApprover, Name: "a"})
	require.NoError(t, err)
	defer appr.Close()
	ev, err := appr.Subscribe(ctx)
	require.NoError(t, err)
	req, err := Dial(ctx, DialOptions{Socket: p.socket, Token: p.token, Name: "shim"})
	require.NoError(t, err)
	defer req.Close()

	ch := answerOf(ctx, req, testRequest("make"))
	nextEvent(t, ev, EventRequested)

	// Another instance cannot start beside it: the message names it.
	_, err = Listen(ctx, ServerOptions{ConfigPath: p.config, Socket: p.socket})
	require.Error(t, err)
	assert.Equal(t, "execgate hub already running (pid "+strconv.Itoa(p.cmd.Process.Pid)+", socket "+p.socket+")", err.Error())

	killed := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case r := <-ch:
		elapsed := time.Since(killed)
		t.Logf("request failed %v after kill -9: %v", elapsed, r.err)
		require.Error(t, r.err)
		assert.Less(t, elapsed, time.Second)
		assert.NotErrorIs(t, r.err, ErrNoHub)
	case <-time.After(5 * time.Second):
		t.Fatal("request still waiting 5 s after the hub died")
	}
	select {
	case <-req.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed")
	}
	// Later calls fail at once too.
	_, err = req.Request(ctx, testRequest("ls"))
	require.Error(t, err)
	// The dead hub left its socket behind; a new hub replaces it, and
	// meanwhile Dial reports no hub.
	p.cmd.Wait()
	_, err = Dial(ctx, DialOptions{Socket: p.socket, Token: p.token})
	require.ErrorIs(t, err, ErrNoHub)
	s, err := Listen(ctx, ServerOptions{ConfigPath: p.config, Socket: p.socket})
	require.NoError(t, err)
	s.Close()
}

// Another user is refused by SO_PEERCRED; a listed requester uid gets in
// without a token, as a requester only.
func TestOtherUid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	const nobody = 65534
	// Everything the other user needs must be reachable by it.
	dir := shortTempDir(t)
	require.NoError(t, os.Chmod(dir, 0o711))
	exe, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(dir, "hub.test")
	copyFile(t, exe, bin, 0o755)

	run := func(socket string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin)
		cmd.Env = []string{clientEnv + "=1", serveSocketEnv + "=" + socket}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return "client process: " + err.Error()
		}
		return strings.TrimSpace(string(b))
	}

	t.Run("not listed", func(t *testing.T) {
		// The socket is open to all (some uid is listed), so only the
		// peer credential check keeps nobody out.
		sub := filepath.Join(dir, "a")
		require.NoError(t, os.Mkdir(sub, 0o711))
		h := startHubIn(t, sub, `{"requesterUids":[12345]}`)
		_, ev := h.approver(t, "a")
		out := run(h.socket)
		assert.Contains(t, out, "UNAUTHORIZED")
		assert.Contains(t, out, "uid 65534 may not use this hub")
		select {
		case e := <-ev:
			t.Fatalf("event from a refused user: %v", e)
		case <-time.After(100 * time.Millisecond):
		}
	})
	t.Run("listed", func(t *testing.T) {
		sub := filepath.Join(dir, "b")
		require.NoError(t, os.Mkdir(sub, 0o711))
		h := startHubIn(t, sub, `{"requesterUids":[65534]}`)
		appr, ev := h.approver(t, "a")
		done := make(chan string, 1)
		go func() { done <- run(h.socket) }()
		a := nextEvent(t, ev, EventRequested)
		assert.Equal(t, nobody, a.RequesterUid)
		_, err := appr.Resolve(context.Background(), a.ID, Deny)
		require.NoError(t, err)
		assert.Equal(t, "outcome: decided", <-done)
	})
	t.Run("default socket is closed to others", func(t *testing.T) {
		sub := filepath.Join(dir, "c")
		require.NoError(t, os.Mkdir(sub, 0o711))
		h := startHubIn(t, sub, "")
		out := run(h.socket)
		assert.Contains(t, out, "permission denied")
	})
}

// startHubIn is startHub with the files under dir.
func startHubIn(t *testing.T, dir, socketJSON string) *testHub {
	t.Helper()
	cfg := filepath.Join(dir, "cfg.json")
	if socketJSON != "" {
		writeConfig(t, cfg, socketJSON)
	}
	return startHub(t, func(o *ServerOptions) {
		o.ConfigPath = cfg
		o.Socket = filepath.Join(dir, "run", "hub.sock")
	})
}

func copyFile(t *testing.T, from, to string, perm os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, perm))
}
