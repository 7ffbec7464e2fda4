package hub

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answerOf runs a Request in the background.
func answerOf(ctx context.Context, c *Client, r ApprovalRequest) <-chan result {
	ch := make(chan result, 1)
	go func() {
		ans, err := c.Request(ctx, r)
		ch <- result{ans, err}
	}()
	return ch
}

type result struct {
	ans ApprovalAnswer
	err error
}

func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	return result{}
}

func TestDecisions(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr, ev := h.approver(t, "approve@tty3")
	req := h.dial(t, RoleRequester, "shim")
	for _, d := range []string{AllowOnce, AllowAlways, Deny} {
		t.Run(d, func(t *testing.T) {
			r := testRequest("rm -rf build")
			r.Segments = []string{"rm -rf build"}
			r.Via = "Claude Code"
			ch := answerOf(ctx, req, r)
			a := nextEvent(t, ev, EventRequested)
			assert.Equal(t, "rm -rf build", a.Command)
			assert.Equal(t, []string{"rm -rf build"}, a.Segments)
			assert.Equal(t, "Claude Code", a.Via)
			assert.Equal(t, 20000, a.TimeoutMs)
			assert.Equal(t, a.CreatedAtMs+20000, a.ExpiresAtMs)
			assert.Equal(t, h.srv.uid, a.RequesterUid)
			assert.NotZero(t, a.RequesterPid)

			got, err := appr.Resolve(ctx, a.ID, d)
			require.NoError(t, err)
			assert.Equal(t, d, got.Decision)
			assert.Equal(t, "approve@tty3", got.ResolvedBy)

			res := wait(t, ch)
			require.NoError(t, res.err)
			assert.Equal(t, OutcomeDecided, res.ans.Outcome)
			require.NotNil(t, res.ans.Decision)
			assert.Equal(t, d, *res.ans.Decision)
			assert.Equal(t, a.ID, res.ans.ID)
			assert.Equal(t, "approve@tty3", res.ans.ResolvedBy)
			assert.Equal(t, a.ExpiresAtMs, res.ans.ExpiresAtMs)

			e := nextEvent(t, ev, EventResolved)
			assert.Equal(t, a.ID, e.ID)
			assert.Equal(t, d, e.Decision)

			// Settled: gone from the list, and a second answer finds nothing.
			l, err := appr.List(ctx)
			require.NoError(t, err)
			assert.Empty(t, l)
			_, err = appr.Resolve(ctx, a.ID, Deny)
			assert.Equal(t, ErrCodeNotFound, errCode(err))
		})
	}
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	_, ev := h.approver(t, "a")
	req := h.dial(t, RoleRequester, "shim")
	r := testRequest("sleep 1")
	r.TimeoutMs = 1 // clamped to 1 s
	start := time.Now()
	ch := answerOf(context.Background(), req, r)
	a := nextEvent(t, ev, EventRequested)
	assert.Equal(t, 1000, a.TimeoutMs)
	res := wait(t, ch)
	require.NoError(t, res.err)
	assert.Equal(t, OutcomeExpired, res.ans.Outcome)
	assert.Nil(t, res.ans.Decision)
	assert.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond)
	e := nextEvent(t, ev, EventExpired)
	assert.Equal(t, a.ID, e.ID)
	assert.Empty(t, e.Decision)
}

func TestTimeoutClamp(t *testing.T) {
	for _, tt := range []struct {
		ms   int
		want time.Duration
	}{{0, time.Minute}, {-5, time.Minute}, {1, time.Second}, {1500, 1500 * time.Millisecond}, {1 << 30, time.Hour}} {
		assert.Equal(t, tt.want, clampTimeout(tt.ms), tt.ms)
	}
}

func TestFirstResolutionWins(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	a1, ev := h.approver(t, "one")
	a2, _ := h.approver(t, "two")
	req := h.dial(t, RoleRequester, "shim")
	for range 20 {
		ch := answerOf(ctx, req, testRequest("deploy"))
		a := nextEvent(t, ev, EventRequested)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		decs := []string{AllowOnce, Deny}
		for i, c := range []*Client{a1, a2} {
			wg.Go(func() { _, errs[i] = c.Resolve(ctx, a.ID, decs[i]) })
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			if err == nil {
				require.Equal(t, -1, won, "both resolutions succeeded")
				won = i
			} else {
				assert.Equal(t, ErrCodeNotFound, errCode(err))
			}
		}
		require.NotEqual(t, -1, won)
		res := wait(t, ch)
		require.NoError(t, res.err)
		assert.Equal(t, decs[won], *res.ans.Decision)
		assert.Equal(t, []string{"one", "two"}[won], res.ans.ResolvedBy)
		nextEvent(t, ev, EventResolved)
	}
}

func TestRequesterGoneWithdraws(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr, ev := h.approver(t, "a")

	// The shim's connection closes (killed, cancelled).
	req := h.dial(t, RoleRequester, "shim")
	answerOf(ctx, req, testRequest("make"))
	a := nextEvent(t, ev, EventRequested)
	req.Close()
	w := nextEvent(t, ev, EventWithdrawn)
	assert.Equal(t, a.ID, w.ID)
	_, err := appr.Resolve(ctx, a.ID, AllowOnce)
	assert.Equal(t, ErrCodeNotFound, errCode(err))

	// Its ctx ends: the client withdraws explicitly, the connection lives.
	req2 := h.dial(t, RoleRequester, "shim2")
	cctx, cancel := context.WithCancel(ctx)
	ch := answerOf(cctx, req2, testRequest("make"))
	a = nextEvent(t, ev, EventRequested)
	cancel()
	res := wait(t, ch)
	assert.ErrorIs(t, res.err, context.Canceled)
	w = nextEvent(t, ev, EventWithdrawn)
	assert.Equal(t, a.ID, w.ID)
	_, err = req2.Status(ctx)
	require.NoError(t, err)
	// Only one's own approvals can be withdrawn.
	other := h.dial(t, RoleRequester, "other")
	go func() { req2.Request(ctx, ApprovalRequest{ID: "mine-1", Command: "x", Risk: "safe", TimeoutMs: 20000}) }()
	nextEvent(t, ev, EventRequested)
	err = other.Call(ctx, MethodWithdraw, IDParams{ID: "mine-1"}, nil)
	assert.Equal(t, ErrCodeNotFound, errCode(err))
	l, err := appr.List(ctx)
	require.NoError(t, err)
	require.Len(t, l, 1)
	assert.Equal(t, "mine-1", l[0].ID)
}

func TestApproverDisconnects(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	a1, ev1 := h.approver(t, "one")
	a2, ev2 := h.approver(t, "two")
	req := h.dial(t, RoleRequester, "shim")
	ch := answerOf(ctx, req, testRequest("make"))
	a := nextEvent(t, ev1, EventRequested)
	nextEvent(t, ev2, EventRequested)

	a1.Close()
	// Its subscription channel closes; the item stays for the other.
	for range ev1 {
	}
	l, err := a2.List(ctx)
	require.NoError(t, err)
	require.Len(t, l, 1)
	assert.Equal(t, a.ID, l[0].ID)

	// The last approver leaves too: the request stays pending until its
	// expiry, not answered on the spot.
	a2.Close()
	for range ev2 {
	}
	select {
	case r := <-ch:
		t.Fatalf("answered when the last approver left: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	// A new approver comes and finds it.
	a3, _ := h.approver(t, "three")
	l, err = a3.List(ctx)
	require.NoError(t, err)
	require.Len(t, l, 1)
	_, err = a3.Resolve(ctx, a.ID, Deny)
	require.NoError(t, err)
	res := wait(t, ch)
	require.NoError(t, res.err)
	assert.Equal(t, Deny, *res.ans.Decision)
}

func TestNoApprover(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	req := h.dial(t, RoleRequester, "shim")
	assert.Equal(t, 0, req.Hello().Approvers)
	// An approver that is connected but not subscribed does not count.
	appr := h.dial(t, RoleApprover, "scripted")
	start := time.Now()
	ans, err := req.Request(ctx, testRequest("ls"))
	require.NoError(t, err)
	assert.Less(t, time.Since(start), time.Second)
	assert.Equal(t, OutcomeNoApprover, ans.Outcome)
	assert.Nil(t, ans.Decision)
	assert.NotEmpty(t, ans.ID)
	l, err := appr.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, l, "not kept pending")
}

func TestExplicitIDs(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr, ev := h.approver(t, "a")
	req := h.dial(t, RoleRequester, "shim")
	r := testRequest("ls")
	r.ID = "abc123def"
	ch := answerOf(ctx, req, r)
	nextEvent(t, ev, EventRequested)
	_, err := req.Request(ctx, r)
	assert.Equal(t, ErrCodeConflict, errCode(err))
	for _, bad := range []string{"has space", "semi;colon", strings.Repeat("x", 129), "ünïcode"} {
		r.ID = bad
		_, err = req.Request(ctx, r)
		assert.Equal(t, ErrCodeBadRequest, errCode(err), bad)
	}
	_, err = appr.Resolve(ctx, "abc123def", AllowOnce)
	require.NoError(t, err)
	require.NoError(t, wait(t, ch).err)

	// Settled ids may be used again.
	r.ID = "abc123def"
	ch = answerOf(ctx, req, r)
	nextEvent(t, ev, EventRequested)
	_, err = appr.Resolve(ctx, "abc123def", Deny)
	require.NoError(t, err)
	require.NoError(t, wait(t, ch).err)
}

func TestInvalidRequests(t *testing.T) {
	h := startHub(t)
	h.approver(t, "a")
	req := h.dial(t, RoleRequester, "shim")
	for name, r := range map[string]ApprovalRequest{
		"empty command": {Command: "  ", Risk: "safe"},
		"unknown risk":  {Command: "ls", Risk: "meh"},
		"no risk":       {Command: "ls"},
	} {
		_, err := req.Request(context.Background(), r)
		assert.Equal(t, ErrCodeBadRequest, errCode(err), name)
	}
	// A request without a frame id could never be answered.
	r := h.raw(t)
	require.Nil(t, r.hello(h.token, RoleRequester).Error)
	r.sendFrame("", MethodRequest, testRequest("ls"))
	f := r.next()
	require.NotNil(t, f.Error)
	assert.Equal(t, ErrCodeBadRequest, f.Error.Code)
}

func TestResolveByPrefix(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr, ev := h.approver(t, "a")
	req := h.dial(t, RoleRequester, "shim")
	ids := []string{"abcd1111", "abcd2222", "ab"}
	chs := map[string]<-chan result{}
	for _, id := range ids {
		r := testRequest("echo " + id)
		r.ID = id
		chs[id] = answerOf(ctx, req, r)
		nextEvent(t, ev, EventRequested)
	}
	_, err := appr.Resolve(ctx, "abcd", AllowOnce)
	assert.Equal(t, ErrCodeBadRequest, errCode(err), "ambiguous")
	assert.Contains(t, err.Error(), "matches 2")
	_, err = appr.Resolve(ctx, "abc", AllowOnce)
	assert.Equal(t, ErrCodeNotFound, errCode(err), "too short for a prefix")
	_, err = appr.Resolve(ctx, "zzzz", AllowOnce)
	assert.Equal(t, ErrCodeNotFound, errCode(err))
	_, err = appr.Resolve(ctx, "abcd1", "yes-please")
	assert.Equal(t, ErrCodeBadRequest, errCode(err), "invalid decision")
	_, err = appr.Resolve(ctx, "abcd1", "")
	assert.Equal(t, ErrCodeBadRequest, errCode(err))

	// None of that had an effect.
	l, err := appr.List(ctx)
	require.NoError(t, err)
	require.Len(t, l, 3)
	assert.Equal(t, ids, []string{l[0].ID, l[1].ID, l[2].ID}, "oldest first")

	got, err := appr.Get(ctx, "abcd2")
	require.NoError(t, err)
	assert.Equal(t, "abcd2222", got.ID)
	a, err := appr.Resolve(ctx, "abcd2", AllowAlways)
	require.NoError(t, err)
	assert.Equal(t, "abcd2222", a.ID)
	assert.Equal(t, AllowAlways, *wait(t, chs["abcd2222"]).ans.Decision)
	// An exact id wins however short.
	_, err = appr.Resolve(ctx, "ab", Deny)
	require.NoError(t, err)
	assert.Equal(t, Deny, *wait(t, chs["ab"]).ans.Decision)
	// Now "abcd" is unique.
	_, err = appr.Resolve(ctx, "abcd", AllowOnce)
	require.NoError(t, err)
	assert.Equal(t, AllowOnce, *wait(t, chs["abcd1111"]).ans.Decision)
}

func TestSessions(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	appr, ev := h.approver(t, "boss")
	req := h.dial(t, RoleRequester, "shim")

	o, err := appr.SetSession(ctx, SessionOverride{AgentID: "claude", Security: "full", Ask: "off", SetBy: "forged"})
	require.NoError(t, err)
	assert.Equal(t, "boss", o.SetBy, "setBy is the approver's name, whatever it says")
	e := <-ev
	assert.Equal(t, EventSession, e.Name)
	got, err := req.Session(ctx, "claude")
	require.NoError(t, err)
	assert.Equal(t, o, got)
	none, err := req.Session(ctx, "other")
	require.NoError(t, err)
	assert.Zero(t, none)

	// Elevation stands for security=full, ask=off, and expires.
	el, err := appr.SetSession(ctx, SessionOverride{AgentID: "codex", Elevated: true, ExpiresAtMs: time.Now().Add(time.Second).UnixMilli()})
	require.NoError(t, err)
	assert.Equal(t, "full", el.Security)
	assert.Equal(t, "off", el.Ask)
	<-ev
	list, err := appr.Sessions(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "claude", list[0].AgentID)
	select {
	case e := <-ev:
		assert.Equal(t, EventSession, e.Name)
		var gone SessionOverride
		require.NoError(t, json.Unmarshal(e.Payload, &gone))
		assert.Equal(t, SessionOverride{AgentID: "codex"}, gone)
	case <-time.After(5 * time.Second):
		t.Fatal("no expiry event")
	}
	got, err = req.Session(ctx, "codex")
	require.NoError(t, err)
	assert.Zero(t, got)

	// Invalid values change nothing.
	for name, bad := range map[string]SessionOverride{
		"no agent":         {Security: "full"},
		"bad security":     {AgentID: "claude", Security: "root"},
		"bad ask":          {AgentID: "claude", Ask: "sometimes"},
		"bad fallback":     {AgentID: "claude", AskFallback: "maybe"},
		"nothing":          {AgentID: "claude"},
		"past expiry":      {AgentID: "claude", Security: "deny", ExpiresAtMs: 1},
		"elevated but ask": {AgentID: "claude", Elevated: true, Ask: "always"},
	} {
		_, err := appr.SetSession(ctx, bad)
		assert.Equal(t, ErrCodeBadRequest, errCode(err), name)
	}
	got, err = req.Session(ctx, "claude")
	require.NoError(t, err)
	assert.Equal(t, o, got)

	require.NoError(t, appr.ClearSession(ctx, "claude"))
	got, err = req.Session(ctx, "claude")
	require.NoError(t, err)
	assert.Zero(t, got)
	list, err = appr.Sessions(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
}

func TestConfigGetSet(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr := h.dial(t, RoleApprover, "a")

	snap, err := appr.ConfigGet(ctx)
	require.NoError(t, err)
	assert.Equal(t, h.config, snap.Path)
	assert.NotContains(t, string(snap.File), h.token)
	assert.Equal(t, "<redacted>", fileField(t, snap.File, "socket", "token"))
	assert.Len(t, snap.Hash, 64)

	// A stale base is refused and nothing changes.
	_, err = appr.ConfigSet(ctx, []byte(`{"version":1,"defaults":{"security":"deny"}}`), strings.Repeat("0", 64))
	assert.Equal(t, ErrCodeConflict, errCode(err))
	_, err = appr.ConfigSet(ctx, []byte(`{"version":1}`), "")
	assert.Equal(t, ErrCodeConflict, errCode(err))
	again, err := appr.ConfigGet(ctx)
	require.NoError(t, err)
	assert.Equal(t, snap.Hash, again.Hash)

	// A file that does not parse is a bad request.
	_, err = appr.ConfigSet(ctx, []byte(`{"version":2}`), snap.Hash)
	assert.Equal(t, ErrCodeBadRequest, errCode(err))

	// A good edit: socket path and token are kept whatever the file says.
	file := `{"version":1,"socket":{"token":"<redacted>","path":"/tmp/evil.sock"},"defaults":{"security":"deny"}}`
	newSnap, err := appr.ConfigSet(ctx, []byte(file), snap.Hash)
	require.NoError(t, err)
	assert.NotEqual(t, snap.Hash, newSnap.Hash)
	assert.Equal(t, "deny", fileField(t, newSnap.File, "defaults", "security"))
	assert.Nil(t, fileField(t, newSnap.File, "socket", "path"))
	// The token still works (and was not replaced by "<redacted>").
	c, err := Dial(ctx, DialOptions{Socket: h.socket, Token: h.token, Role: RoleApprover})
	require.NoError(t, err)
	c.Close()
	// The old hash is now stale.
	_, err = appr.ConfigSet(ctx, []byte(file), snap.Hash)
	assert.Equal(t, ErrCodeConflict, errCode(err))
}

// fileField digs a value out of a configuration file.
func fileField(t *testing.T, file json.RawMessage, keys ...string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(file, &v))
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
