package hub

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
)

// Environment of a hub subprocess (this test binary, re-executed).
const (
	serveEnv       = "EXECGATE_HUB_TEST_SERVE"
	serveConfigEnv = "EXECGATE_HUB_TEST_CONFIG"
	serveSocketEnv = "EXECGATE_HUB_TEST_SOCKET"
	clientEnv      = "EXECGATE_HUB_TEST_CLIENT"
	// clientRoleEnv and clientTokenEnv make clientMain say hello as that
	// role with that token instead of asking.
	clientRoleEnv  = "EXECGATE_HUB_TEST_ROLE"
	clientTokenEnv = "EXECGATE_HUB_TEST_TOKEN"
)

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(serveEnv) != "":
		os.Exit(serveMain())
	case os.Getenv(clientEnv) != "":
		os.Exit(clientMain())
	case os.Getenv(floodEnv) != "":
		os.Exit(floodMain())
	}
	os.Exit(m.Run())
}

// serveMain runs a hub until killed, saying "ready" on stdout once it
// listens.
func serveMain() int {
	ctx := context.Background()
	s, err := Listen(ctx, ServerOptions{
		ConfigPath: os.Getenv(serveConfigEnv),
		Socket:     os.Getenv(serveSocketEnv),
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	if err := s.Serve(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// clientMain dials the hub as a requester without a token (the other-uid
// test runs it as another user) and prints the outcome of one request.
func clientMain() int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if role := os.Getenv(clientRoleEnv); role != "" {
		c, err := Dial(ctx, DialOptions{Socket: os.Getenv(serveSocketEnv), Token: os.Getenv(clientTokenEnv), Role: Role(role), Name: "other-uid"})
		if err != nil {
			fmt.Println("dial:", err)
			return 0
		}
		defer c.Close()
		_, err = c.List(ctx)
		fmt.Println("hello ok; list:", err)
		return 0
	}
	c, err := Dial(ctx, DialOptions{Socket: os.Getenv(serveSocketEnv), Name: "other-uid"})
	if err != nil {
		fmt.Println("dial:", err)
		return 0
	}
	defer c.Close()
	ans, err := c.Request(ctx, ApprovalRequest{Command: "id", Risk: "safe", AgentID: "a", TimeoutMs: 5000})
	if err != nil {
		fmt.Println("request:", err)
		return 0
	}
	fmt.Println("outcome:", ans.Outcome)
	return 0
}

// testHub is a hub run in-process for a test.
type testHub struct {
	t        *testing.T
	srv      *Server
	socket   string
	config   string
	token    string
	now      *fakeClock
	cancel   context.CancelFunc
	served   chan error
	stopOnce sync.Once
}

// fakeClock is ServerOptions.Now for tests that move the hub's clock.
type fakeClock struct {
	offset atomic.Int64 // nanoseconds added to the real time
}

func (c *fakeClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *fakeClock) set(d time.Duration) { c.offset.Store(int64(d)) }

// shortTempDir returns a fresh directory with a path short enough for a
// Unix socket (t.TempDir's can exceed 104 bytes).
func shortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "eg")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// writeConfig writes a configuration file with extra socket fields.
func writeConfig(t testing.TB, path, socketJSON string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	body := `{"version":1}`
	if socketJSON != "" {
		body = `{"version":1,"socket":` + socketJSON + `}`
	}
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
}

type hubOption func(*ServerOptions)

// startHub runs a hub on a fresh socket with a fresh configuration (the
// token is created on first use, as in real life).
func startHub(t testing.TB, opts ...hubOption) *testHub {
	t.Helper()
	dir := shortTempDir(t)
	h := &testHub{
		socket: filepath.Join(dir, "run", "hub.sock"),
		config: filepath.Join(dir, "cfg", "exec-approvals.json"),
		now:    &fakeClock{},
		served: make(chan error, 1),
	}
	if tt, ok := t.(*testing.T); ok {
		h.t = tt
	}
	o := ServerOptions{ConfigPath: h.config, Socket: h.socket, Now: h.now.Now, Logger: testLogger(t)}
	for _, opt := range opts {
		opt(&o)
	}
	h.socket, h.config = o.Socket, o.ConfigPath
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	srv, err := Listen(ctx, o)
	require.NoError(t, err)
	h.srv = srv
	go func() { h.served <- srv.Serve(ctx) }()
	t.Cleanup(h.stop)
	cfg, _, _, err := config.Load(h.config)
	require.NoError(t, err)
	require.NotEmpty(t, cfg.Socket.Token)
	h.token = cfg.Socket.Token
	return h
}

func (h *testHub) stop() {
	h.stopOnce.Do(func() {
		h.cancel()
		select {
		case <-h.served:
		case <-time.After(10 * time.Second):
			panic("hub did not stop")
		}
	})
}

// testLogger logs warnings and errors to the test log when -v is given.
func testLogger(t testing.TB) *slog.Logger {
	if !testing.Verbose() {
		return nil
	}
	return slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (h *testHub) dial(t testing.TB, role Role, name string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, DialOptions{Socket: h.socket, Token: h.token, Role: role, Name: name})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// approver dials an approver and subscribes it.
func (h *testHub) approver(t testing.TB, name string) (*Client, <-chan Event) {
	t.Helper()
	c := h.dial(t, RoleApprover, name)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ev, err := c.Subscribe(ctx)
	require.NoError(t, err)
	return c, ev
}

// raw is a connection speaking the wire protocol by hand. After a hello
// the hub answered with a hub nonce it seals what it sends and checks the
// seal of what it reads, as a client must; unsealed sends unsealed frames
// all the same (to see the hub refuse them).
type raw struct {
	t        testing.TB
	nc       net.Conn
	r        *bufio.Reader
	key      []byte
	in, out  uint64 // the last frame numbers read and sent
	unsealed bool
}

func (h *testHub) raw(t testing.TB) *raw {
	t.Helper()
	nc, err := net.Dial("unix", h.socket)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &raw{t: t, nc: nc, r: bufio.NewReaderSize(nc, MaxLine)}
}

// send writes one line, sealed once the connection has a key (a line that
// does not end in a brace gets one, which the seal then replaces: the hub
// reads the line with a brace added, which no test relies on being valid).
func (r *raw) send(line string) {
	r.t.Helper()
	b := []byte(line + "\n")
	if r.key != nil && !r.unsealed && strings.TrimSpace(line) != "" {
		body := []byte(line)
		if !strings.HasSuffix(line, "}") {
			body = append(body, '}')
		}
		r.out++
		b = seal(r.key, dirClient, r.out, body)
	}
	r.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := r.nc.Write(b)
	require.NoError(r.t, err)
}

func (r *raw) sendFrame(id, method string, params any) {
	r.t.Helper()
	b, err := encodeFrame(id, method, params)
	require.NoError(r.t, err)
	r.send(strings.TrimSuffix(string(b), "\n"))
}

// next reads one frame; it fails the test on timeout.
func (r *raw) next() Frame {
	r.t.Helper()
	f, err := r.read(5 * time.Second)
	require.NoError(r.t, err)
	return f
}

func (r *raw) read(timeout time.Duration) (Frame, error) {
	r.nc.SetReadDeadline(time.Now().Add(timeout))
	line, err := r.r.ReadBytes('\n')
	if err != nil {
		return Frame{}, err
	}
	if r.key != nil {
		if line, err = openSealed(line, r.key, dirHub, r.in+1); err != nil {
			return Frame{}, fmt.Errorf("frame from the hub: %w", err)
		}
		r.in++
	}
	var f Frame
	if err := json.Unmarshal(line, &f); err != nil {
		return Frame{}, fmt.Errorf("invalid frame %q: %w", line, err)
	}
	return f, nil
}

// closed reports whether the hub closed the connection (EOF within 5 s).
func (r *raw) closed() bool {
	for {
		_, err := r.read(5 * time.Second)
		if err != nil {
			var ne net.Error
			return !(errors.As(err, &ne) && ne.Timeout())
		}
	}
}

// hello sends a signed hello for role and, with a token, checks the hub's
// proof and takes the connection's key from it.
func (r *raw) hello(token string, role Role) Frame {
	r.t.Helper()
	p := newHelloParams(token, role, "raw", time.Now())
	r.sendFrame("h", MethodHello, p)
	return r.helloAnswer(token, p)
}

// helloAnswer reads the answer to hello p and takes the key from it.
func (r *raw) helloAnswer(token string, p HelloParams) Frame {
	r.t.Helper()
	r.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := r.r.ReadBytes('\n')
	require.NoError(r.t, err)
	u, sealed := splitSeal(line)
	if !sealed {
		var f Frame
		require.NoError(r.t, json.Unmarshal(line, &f))
		return f
	}
	var f Frame
	require.NoError(r.t, json.Unmarshal(u.body, &f))
	var res HelloResult
	require.NoError(r.t, json.Unmarshal(f.Result, &res))
	if token != "" {
		key := connKey(token, p.Role, p.Nonce, res.HubNonce)
		require.NoError(r.t, u.check(key, dirHub, 1), "the hub's proof")
		r.key, r.in = key, 1
	}
	return f
}

// errCode returns the hub's error code in err, or "".
func errCode(err error) string {
	var eb *ErrorBody
	if errors.As(err, &eb) {
		return eb.Code
	}
	return ""
}

// nextEvent waits for the next event named name, skipping others.
func nextEvent(t testing.TB, ev <-chan Event, name string) Approval {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-ev:
			require.True(t, ok, "event channel closed while waiting for %s", name)
			if e.Name != name {
				continue
			}
			var a Approval
			require.NoError(t, json.Unmarshal(e.Payload, &a))
			return a
		case <-timeout:
			t.Fatalf("no %s event", name)
		}
	}
}

func testRequest(cmd string) ApprovalRequest {
	return ApprovalRequest{Command: cmd, Cwd: "/tmp", AgentID: "agent-1", Risk: "needs-review",
		Reasons: []string{"not on the allowlist"}, TimeoutMs: 20000}
}
