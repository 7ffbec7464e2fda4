package prompt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hub"
)

// realHub runs a hub daemon in-process on a fresh socket.
type realHub struct {
	srv    *hub.Server
	socket string
	token  string
	done   chan error
	cancel context.CancelFunc
	once   sync.Once
}

func startRealHub(t *testing.T) *realHub {
	t.Helper()
	dir, err := os.MkdirTemp("", "egp") // short: Unix socket paths are limited
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := filepath.Join(dir, "cfg.json")
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := hub.Listen(ctx, hub.ServerOptions{ConfigPath: cfg, Socket: filepath.Join(dir, "run", "hub.sock")})
	require.NoError(t, err)
	h := &realHub{srv: srv, socket: srv.Socket(), done: make(chan error, 1), cancel: cancel}
	go func() { h.done <- srv.Serve(ctx) }()
	t.Cleanup(h.stop)
	c, _, _, err := config.Load(cfg)
	require.NoError(t, err)
	h.token = c.Socket.Token
	return h
}

func (h *realHub) stop() {
	h.once.Do(func() {
		h.cancel()
		<-h.done
	})
}

func (h *realHub) dial(t *testing.T, role hub.Role) *hub.Client {
	t.Helper()
	c, err := hub.Dial(context.Background(), hub.DialOptions{Socket: h.socket, Token: h.token, Role: role, Name: string(role)})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// approve subscribes an approver that answers the next request with
// decision ("" leaves it to expire), and returns the approval it saw.
func (h *realHub) approve(t *testing.T, decision string) <-chan hub.Approval {
	t.Helper()
	c := h.dial(t, hub.RoleApprover)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ev, err := c.Subscribe(ctx)
	require.NoError(t, err)
	seen := make(chan hub.Approval, 1)
	go func() {
		for e := range ev {
			if e.Name != hub.EventRequested {
				continue
			}
			var a hub.Approval
			json.Unmarshal(e.Payload, &a)
			if decision != "" {
				c.Resolve(ctx, a.ID, decision)
			}
			seen <- a
			return
		}
	}()
	return seen
}

func hubRequest() Request {
	return Request{ID: "0123456789ab", Command: "rm -rf build", Via: "Claude Code", Cwd: "/src", Agent: "claude",
		Risk: "dangerous", Reasons: []string{"deletes files"}, Timeout: 20 * time.Second}
}

func TestHubDecisions(t *testing.T) {
	h := startRealHub(t)
	shim := Hub{Client: h.dial(t, hub.RoleRequester), SessionKey: "s1", Segments: []string{"rm -rf build"}}
	for _, tt := range []struct {
		hub  string
		want Decision
	}{{hub.AllowOnce, AllowOnce}, {hub.AllowAlways, AllowAlways}, {hub.Deny, Deny}} {
		t.Run(tt.hub, func(t *testing.T) {
			seen := h.approve(t, tt.hub)
			ans, err := shim.Ask(context.Background(), hubRequest())
			require.NoError(t, err)
			require.NotNil(t, ans.Approver, "who decided")
			assert.Equal(t, os.Getuid(), ans.Approver.Uid)
			assert.Equal(t, "approver", ans.Approver.Name)
			ans.Approver = nil
			assert.Equal(t, Answer{Decision: tt.want, By: "hub"}, ans)
			a := <-seen
			assert.Equal(t, "0123456789ab", a.ID)
			assert.Equal(t, "rm -rf build", a.Command)
			assert.Equal(t, "Claude Code", a.Via)
			assert.Equal(t, "/src", a.Cwd)
			assert.Equal(t, "claude", a.AgentID)
			assert.Equal(t, "dangerous", a.Risk)
			assert.Equal(t, []string{"deletes files"}, a.Reasons)
			assert.Equal(t, "s1", a.SessionKey)
			assert.Equal(t, []string{"rm -rf build"}, a.Segments)
			assert.Equal(t, 20000, a.TimeoutMs)
		})
	}
}

func TestHubTimeout(t *testing.T) {
	h := startRealHub(t)
	h.approve(t, "")
	r := hubRequest()
	r.Timeout = time.Second
	ans, err := Hub{Client: h.dial(t, hub.RoleRequester)}.Ask(context.Background(), r)
	require.NoError(t, err)
	assert.Equal(t, Answer{Decision: Deny, By: "hub", TimedOut: true}, ans)
}

func TestHubUnavailable(t *testing.T) {
	_, err := Hub{}.Ask(context.Background(), hubRequest())
	require.ErrorIs(t, err, ErrUnavailable)

	// No approver connected: answered at once, so the chain moves on to
	// the next channel instead of waiting out the timeout.
	h := startRealHub(t)
	shim := Hub{Client: h.dial(t, hub.RoleRequester)}
	start := time.Now()
	_, err = shim.Ask(context.Background(), hubRequest())
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Less(t, time.Since(start), time.Second)

	next := fixedAsker{Answer{Decision: Deny, By: "tty"}}
	ans, err := Chain{shim, next}.Ask(context.Background(), hubRequest())
	require.NoError(t, err)
	assert.Equal(t, "tty", ans.By)
}

type fixedAsker struct{ a Answer }

func (f fixedAsker) Ask(context.Context, Request) (Answer, error) { return f.a, nil }

// The hub going away mid-request is a failure, never "nobody to ask": the
// caller fails closed.
func TestHubFailsMidRequest(t *testing.T) {
	h := startRealHub(t)
	seen := h.approve(t, "")
	shim := Hub{Client: h.dial(t, hub.RoleRequester)}
	go func() {
		<-seen
		h.stop()
	}()
	start := time.Now()
	_, err := shim.Ask(context.Background(), hubRequest())
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrUnavailable), "%v", err)
	assert.Less(t, time.Since(start), 5*time.Second)

	// Asking on the dead connection fails the same way.
	_, err = shim.Ask(context.Background(), hubRequest())
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrUnavailable), "%v", err)

	// A hub error (here an id the hub refuses) is a failure too.
	h2 := startRealHub(t)
	h2.approve(t, "")
	r := hubRequest()
	r.ID = "not a valid id"
	_, err = Hub{Client: h2.dial(t, hub.RoleRequester)}.Ask(context.Background(), r)
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrUnavailable), "%v", err)
}

// When the caller gives up, the request is withdrawn from the hub.
func TestHubCancelWithdraws(t *testing.T) {
	h := startRealHub(t)
	appr := h.dial(t, hub.RoleApprover)
	ev, err := appr.Subscribe(t.Context())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := Hub{Client: h.dial(t, hub.RoleRequester)}.Ask(ctx, hubRequest())
		errc <- err
	}()
	var names []string
	for e := range ev {
		names = append(names, e.Name)
		if e.Name == hub.EventRequested {
			cancel()
		}
		if e.Name == hub.EventWithdrawn {
			break
		}
	}
	assert.Equal(t, []string{hub.EventRequested, hub.EventWithdrawn}, names)
	assert.ErrorIs(t, <-errc, context.Canceled)
	l, err := appr.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, l)
}

// TestHubChosenScopeAndStatus: the scope an approver picks reaches the
// shim, and the person at the shim's terminal is told that the hub is
// waiting and who decided.
func TestHubChosenScopeAndStatus(t *testing.T) {
	h := startRealHub(t)
	var status bytes.Buffer
	shim := Hub{Client: h.dial(t, hub.RoleRequester), Status: &status}
	c := h.dial(t, hub.RoleApprover)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev, err := c.Subscribe(ctx)
	require.NoError(t, err)
	go func() {
		for e := range ev {
			if e.Name == hub.EventRequested {
				var a hub.Approval
				json.Unmarshal(e.Payload, &a)
				c.ResolveWith(ctx, hub.ResolveParams{ID: a.ID, Decision: hub.AllowAlways, Patterns: []string{"npm run test **"}})
				return
			}
		}
	}()
	r := hubRequest()
	r.Proposals = []Proposal{{Text: "npm run test", Patterns: []string{"npm run test $", "npm run test **"}}}
	ans, err := shim.Ask(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, AllowAlways, ans.Decision)
	assert.Equal(t, []string{"npm run test **"}, ans.Patterns)
	who := ans.Approver.Label()
	assert.Contains(t, who, "(approver)")
	assert.Equal(t, "execgate: waiting for an approver (1 connected)…\nexecgate: allowed always by "+who+"\n", status.String())
}

// TestHubDecisionWords: only the hub's three decision words map to a
// decision; any other word, in another case or empty, is none.
func TestHubDecisionWords(t *testing.T) {
	for _, tt := range []struct {
		word string
		want Decision
		ok   bool
	}{
		{hub.AllowOnce, AllowOnce, true}, {hub.AllowAlways, AllowAlways, true}, {hub.Deny, Deny, true},
		{"", "", false}, {"ALLOW-ONCE", "", false}, {"allow", "", false}, {"deny ", "", false},
	} {
		got, ok := hubDecision(tt.word)
		assert.Equal(t, tt.ok, ok, tt.word)
		assert.Equal(t, tt.want, got, tt.word)
	}
}
