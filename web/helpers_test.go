package web

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hub"
)

// testEnv is a real hub on a Unix socket and a web approver in front of
// it, both in this process, as `execgate hub` and `execgate web` run them.
type testEnv struct {
	socket, token, config, audit string
	web                          *Server
	base                         string // http://127.0.0.1:PORT
}

func shortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "egw")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func startEnv(t *testing.T, opts ...func(*Options)) *testEnv {
	t.Helper()
	dir := shortTempDir(t)
	e := &testEnv{
		socket: filepath.Join(dir, "hub.sock"),
		config: filepath.Join(dir, "exec-approvals.json"),
		audit:  filepath.Join(dir, "audit.jsonl"),
	}
	require.NoError(t, os.WriteFile(e.config, []byte(`{"version":1}`), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	hs, err := hub.Listen(ctx, hub.ServerOptions{ConfigPath: e.config, Socket: e.socket})
	require.NoError(t, err)
	hubDone := make(chan error, 1)
	go func() { hubDone <- hs.Serve(ctx) }()
	cfg, _, _, err := config.Load(e.config)
	require.NoError(t, err)
	e.token = cfg.Socket.Token

	o := Options{
		Addr: "127.0.0.1:0", AuditPath: e.audit, Name: "web@test",
		Dial: func(ctx context.Context) (*hub.Client, error) {
			return hub.Dial(ctx, hub.DialOptions{Socket: e.socket, Token: e.token, Role: hub.RoleApprover, Name: "web@test"})
		},
	}
	for _, f := range opts {
		f(&o)
	}
	e.web, err = Listen(o)
	require.NoError(t, err)
	webDone := make(chan error, 1)
	go func() { webDone <- e.web.Serve(ctx) }()
	e.base = "http://" + e.web.Addr()
	t.Cleanup(func() {
		cancel()
		<-webDone
		<-hubDone
	})
	return e
}

// dial connects to the hub as role.
func (e *testEnv) dial(t *testing.T, role hub.Role, name string) *hub.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := hub.Dial(ctx, hub.DialOptions{Socket: e.socket, Token: e.token, Role: role, Name: name})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// request is a shim's approval request in flight.
type request struct {
	id  string
	ans chan hub.ApprovalAnswer
	err chan error
}

// ask sends an approval request as a shim does and returns at once.
func (e *testEnv) ask(t *testing.T, r hub.ApprovalRequest) *request {
	t.Helper()
	c := e.dial(t, hub.RoleRequester, "shim")
	if r.ID == "" {
		r.ID = randomSecret()[:16]
	}
	if r.TimeoutMs == 0 {
		r.TimeoutMs = 60_000
	}
	q := &request{id: r.ID, ans: make(chan hub.ApprovalAnswer, 1), err: make(chan error, 1)}
	go func() {
		a, err := c.Request(context.Background(), r)
		q.ans <- a
		q.err <- err
	}()
	return q
}

// answer waits for the request's answer.
func (q *request) answer(t *testing.T) hub.ApprovalAnswer {
	t.Helper()
	select {
	case a := <-q.ans:
		require.NoError(t, <-q.err)
		return a
	case <-time.After(20 * time.Second):
		t.Fatal("the request was never answered")
		return hub.ApprovalAnswer{}
	}
}

// client is an HTTP client that keeps cookies and does not follow
// redirects (so each answer can be checked).
func client(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// login redeems a fresh login URL with c and returns that URL.
func (e *testEnv) login(t *testing.T, c *http.Client) string {
	t.Helper()
	u := e.web.LoginURL()
	resp, err := c.Get(u)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	return u
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}
