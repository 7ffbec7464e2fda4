package hub

import (
	"context"
	"os"
	"os/user"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scopedRequest is a two-segment request with the engine's proposals.
func scopedRequest() ApprovalRequest {
	r := testRequest("mkdir -p out && npm run test")
	r.Proposals = []SegmentProposal{
		{Text: "mkdir -p out", Patterns: []string{"mkdir -p out $"}},
		{Text: "npm run test", Patterns: []string{"npm run test $", "npm run test **"}},
	}
	return r
}

// TestResolvePatternsOnlyAmongProposals: the scope an approver chooses for
// "allow always" travels to the requester, and the hub refuses any it did
// not propose, so no approver can widen a grant beyond the engine's offer.
func TestResolvePatternsOnlyAmongProposals(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr, ev := h.approver(t, "a")
	req := h.dial(t, RoleRequester, "shim")
	ch := answerOf(ctx, req, scopedRequest())
	a := nextEvent(t, ev, EventRequested)

	for _, bad := range []ResolveParams{
		{ID: a.ID, Decision: AllowAlways, Patterns: []string{"mkdir **", "npm run test **"}}, // not proposed
		{ID: a.ID, Decision: AllowAlways, Patterns: []string{"npm run test **"}},             // one for two
		{ID: a.ID, Decision: AllowAlways, Patterns: []string{"", "npm **"}},
		{ID: a.ID, Decision: AllowOnce, Patterns: []string{"mkdir -p out $", ""}}, // once saves nothing
	} {
		_, err := appr.ResolveWith(ctx, bad)
		assert.Equal(t, ErrCodeBadRequest, errCode(err), "%+v", bad)
	}
	// Still pending after the refusals.
	l, err := appr.List(ctx)
	require.NoError(t, err)
	require.Len(t, l, 1)

	got, err := appr.ResolveWith(ctx, ResolveParams{ID: a.ID, Decision: AllowAlways, Patterns: []string{"", "npm run test **"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"", "npm run test **"}, got.Patterns)
	res := wait(t, ch)
	require.NoError(t, res.err)
	assert.Equal(t, AllowAlways, *res.ans.Decision)
	assert.Equal(t, []string{"", "npm run test **"}, res.ans.Patterns)
	e := nextEvent(t, ev, EventResolved)
	assert.Equal(t, []string{"", "npm run test **"}, e.Patterns)
}

// TestApproverIdentity: a decision says who made it — uid and user from
// the kernel, kind and host from the hello — to the requester and to the
// other approvers.
func TestApproverIdentity(t *testing.T) {
	h := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, ev := h.approver(t, "watching")
	web, err := Dial(ctx, DialOptions{Socket: h.socket, Token: h.token, Role: RoleApprover, Name: "web@box", Kind: KindWeb, Host: "192.0.2.7"})
	require.NoError(t, err)
	defer web.Close()
	req := h.dial(t, RoleRequester, "shim")
	ch := answerOf(ctx, req, testRequest("make"))
	a := nextEvent(t, ev, EventRequested)
	_, err = web.Resolve(ctx, a.ID, AllowOnce)
	require.NoError(t, err)
	res := wait(t, ch)
	require.NoError(t, res.err)
	who := res.ans.Approver
	require.NotNil(t, who)
	assert.Equal(t, os.Getuid(), who.Uid)
	if u, err := user.LookupId(strconv.Itoa(os.Getuid())); err == nil {
		assert.Equal(t, u.Username, who.User)
	}
	assert.Equal(t, KindWeb, who.Kind)
	assert.Equal(t, "192.0.2.7", who.Host)
	assert.Equal(t, "web@box", who.Name)
	e := nextEvent(t, ev, EventResolved)
	assert.Equal(t, who, e.Approver)

	// Without a host in the hello, the hub's own.
	cli, err := Dial(ctx, DialOptions{Socket: h.socket, Token: h.token, Role: RoleApprover, Name: "resolve", Kind: KindCLI})
	require.NoError(t, err)
	defer cli.Close()
	ch = answerOf(ctx, req, testRequest("make"))
	a = nextEvent(t, ev, EventRequested)
	_, err = cli.Resolve(ctx, a.ID, Deny)
	require.NoError(t, err)
	res = wait(t, ch)
	host, _ := os.Hostname()
	assert.Equal(t, host, res.ans.Approver.Host)
	assert.Equal(t, KindCLI, res.ans.Approver.Kind)

	// A kind the protocol does not know is refused at the hello.
	_, err = Dial(ctx, DialOptions{Socket: h.socket, Token: h.token, Role: RoleApprover, Kind: "robot"})
	assert.Equal(t, ErrCodeBadRequest, errCode(err))
}

// TestWatcherIsNotAnApprover (issue 15): with only `execgate watch`
// subscribed, a request is answered "no approver" at once, so the shim
// asks its terminal instead of waiting; a watcher sees events but cannot
// answer, and the status counts it apart.
func TestWatcherIsNotAnApprover(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	w := h.dial(t, RoleWatcher, "watch")
	ev, err := w.Subscribe(ctx)
	require.NoError(t, err)
	req := h.dial(t, RoleRequester, "shim")
	res := wait(t, answerOf(ctx, req, testRequest("make")))
	require.NoError(t, res.err)
	assert.Equal(t, OutcomeNoApprover, res.ans.Outcome)
	st, err := w.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, st.Approvers)
	assert.Equal(t, 1, st.Watchers)

	_, aev := h.approver(t, "a")
	rctx, cancel := context.WithCancel(ctx)
	ch := answerOf(rctx, req, testRequest("make"))
	a := nextEvent(t, aev, EventRequested)
	assert.Equal(t, a.ID, nextEvent(t, ev, EventRequested).ID, "the watcher sees it")
	_, err = w.Resolve(ctx, a.ID, AllowOnce)
	assert.Equal(t, ErrCodeForbidden, errCode(err))
	_, err = w.ConfigGet(ctx)
	assert.Equal(t, ErrCodeForbidden, errCode(err))
	st, err = w.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Approvers)
	cancel() // the agent gives up: the request is withdrawn
	wait(t, ch)
}
