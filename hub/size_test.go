package hub

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigCommand is a command of about n bytes with what escapes grow on the
// wire: HTML characters, control characters, quotes, non-ASCII.
func bigCommand(tag string, n int) string {
	var b strings.Builder
	b.WriteString("printf '%s' " + tag + " <<'EOF'\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %d: a < b && c > d \"quoted\" \x01\x1b[0m é → \u2028\n", i)
	}
	b.WriteString("EOF")
	return b.String()
}

// lineWatcher is a subscribed approver that reads the hub's frames with no
// limit of its own and records the longest.
type lineWatcher struct {
	mu      sync.Mutex
	longest int
	events  int
}

func watchLines(t *testing.T, h *testHub) *lineWatcher {
	t.Helper()
	r := h.raw(t)
	require.Nil(t, r.hello(h.token, RoleWatcher).Error)
	r.sendFrame("s", MethodSubscribe, nil)
	require.Nil(t, r.next().Error)
	w := &lineWatcher{}
	go func() {
		br := bufio.NewReaderSize(r.nc, 1<<20)
		for {
			r.nc.SetReadDeadline(time.Time{})
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			w.mu.Lock()
			w.longest = max(w.longest, len(line))
			w.events++
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *lineWatcher) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.LessOrEqual(t, w.longest, MaxLine, "the hub sent a frame over its own line limit")
}

// TestBigCommands: two requests of 150 KB each, whose lists, events and
// answers together are far over the 256 KiB line, reach every approver
// whole: the list comes in pages, a new approver can still connect and
// list, and no frame the hub sends exceeds the line its peers read with.
func TestBigCommands(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr, ev := h.approver(t, "owner")
	watch := watchLines(t, h)
	cmds := []string{bigCommand("one", 150_000), bigCommand("two", 150_000)}
	var answers []<-chan result
	for i, cmd := range cmds {
		req := h.dial(t, RoleRequester, fmt.Sprint("shim", i))
		r := testRequest(cmd)
		r.Segments = []string{cmd}
		answers = append(answers, answerOf(ctx, req, r))
		a := nextEvent(t, ev, EventRequested)
		assert.Equal(t, cmd, a.Command, "the requested event carries the whole command")
		assert.False(t, a.Truncated)
	}

	for _, name := range []string{"the approver already connected", "a new approver"} {
		c := appr
		if name == "a new approver" {
			c = h.dial(t, RoleApprover, "late")
		}
		list, err := c.List(ctx)
		require.NoError(t, err, name)
		require.Len(t, list, 2, name)
		for i, a := range list {
			assert.Equal(t, cmds[i], a.Command, "%s: approval %d whole, oldest first", name, i)
		}
		got, err := c.Get(ctx, list[1].ID)
		require.NoError(t, err)
		assert.Equal(t, cmds[1], got.Command)
	}
	// The first page holds one of them; the next the other.
	var page ListResult
	require.NoError(t, appr.Call(ctx, MethodList, ListParams{}, &page))
	require.Len(t, page.Approvals, 1)
	require.NotEmpty(t, page.Next)
	next := page.Next
	page = ListResult{}
	require.NoError(t, appr.Call(ctx, MethodList, ListParams{Cursor: next}, &page))
	require.Len(t, page.Approvals, 1)
	assert.Empty(t, page.Next)

	list, err := appr.List(ctx)
	require.NoError(t, err)
	for i, a := range list {
		_, err := appr.Resolve(ctx, a.ID, Deny)
		require.NoError(t, err)
		res := wait(t, answers[i])
		require.NoError(t, res.err)
		assert.Equal(t, Deny, *res.ans.Decision)
	}
	watch.check(t)
}

// TestManyRequestsPaged: forty requests of 20 KB list in pages, in order,
// none lost or repeated, also when some settle between pages.
func TestManyRequestsPaged(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr, ev := h.approver(t, "owner")
	req := h.dial(t, RoleRequester, "shim")
	var want []string
	for i := range 40 {
		cmd := bigCommand(fmt.Sprint("n", i), 20_000)
		want = append(want, cmd)
		answerOf(ctx, req, testRequest(cmd))
		nextEvent(t, ev, EventRequested)
	}
	var got []string
	p := ListParams{}
	pages := 0
	for {
		var r ListResult
		require.NoError(t, appr.Call(ctx, MethodList, p, &r))
		pages++
		for _, a := range r.Approvals {
			got = append(got, a.Command)
		}
		if pages == 2 {
			// One already listed and one not yet listed settle meanwhile.
			_, err := appr.Resolve(ctx, r.Approvals[0].ID, Deny)
			require.NoError(t, err)
			all, err := appr.List(ctx)
			require.NoError(t, err)
			_, err = appr.Resolve(ctx, all[len(all)-1].ID, Deny)
			require.NoError(t, err)
			want = want[:len(want)-1]
		}
		if r.Next == "" {
			break
		}
		p.Cursor = r.Next
	}
	assert.Greater(t, pages, 2)
	assert.Equal(t, want, got)
}

// TestTooBigToShow: a request whose approval would not fit one answer is
// refused at once with one line saying so, and nobody else notices.
func TestTooBigToShow(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr, _ := h.approver(t, "owner")
	watch := watchLines(t, h)
	req := h.dial(t, RoleRequester, "shim")
	for _, cmd := range []string{
		"echo " + strings.Repeat("x", MaxLine-2_000),
		// Small in the request (raw UTF-8), twice as long as JSON
		// writes it (\u2028 is always escaped).
		"echo " + strings.Repeat("\u2028", 43_000),
	} {
		r := testRequest(cmd)
		_, err := req.Request(ctx, r)
		if errCode(err) == "" {
			require.ErrorContains(t, err, "line limit") // refused by the client before sending
			continue
		}
		require.Equal(t, ErrCodeBadRequest, errCode(err), "%v", err)
		assert.Contains(t, err.Error(), "too long to show a person")
		assert.NotContains(t, err.Error(), "\n")
	}
	list, err := appr.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
	st, err := appr.Status(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.Pending)
	watch.check(t)
}

// TestSettledEventsFit: an allow-always whose chosen patterns double a
// near-limit request, and a shim's report of a near-limit command, reach
// subscribers shortened with a marker rather than break their line.
func TestSettledEventsFit(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr, ev := h.approver(t, "owner")
	watch := watchLines(t, h)
	req := h.dial(t, RoleRequester, "shim")
	pat := "npm run " + strings.Repeat("p", 110_000) + " **"
	r := testRequest("npm run build")
	r.Proposals = []SegmentProposal{{Text: "npm run build", Patterns: []string{pat}}}
	ch := answerOf(ctx, req, r)
	a := nextEvent(t, ev, EventRequested)
	assert.False(t, a.Truncated)
	got, err := appr.ResolveWith(ctx, ResolveParams{ID: a.ID, Decision: AllowAlways, Patterns: []string{pat}})
	require.NoError(t, err)
	assert.Equal(t, AllowAlways, got.Decision)
	res := wait(t, ch)
	require.NoError(t, res.err)
	assert.Equal(t, []string{pat}, res.ans.Patterns, "the requester gets the patterns whole")
	e := nextEvent(t, ev, EventResolved)
	assert.Equal(t, a.ID, e.ID)
	assert.Equal(t, AllowAlways, e.Decision)

	big := "make " + strings.Repeat("<&>", 80_000)
	require.NoError(t, req.Report(ExecReport{Event: EventStarted, ID: "run-1", Command: big, Reasons: []string{big[:1000]}}))
	var rep ExecReport
	timeout := time.After(10 * time.Second)
	for rep.ID == "" {
		select {
		case e := <-ev:
			if e.Name == EventStarted {
				require.NoError(t, json.Unmarshal(e.Payload, &rep))
			}
		case <-timeout:
			t.Fatal("no exec.started event")
		}
	}
	assert.Equal(t, "run-1", rep.ID)
	watch.check(t)
}

// TestManySessionsPaged: a thousand session overrides with the longest
// agent ids, all of characters JSON escapes, list whole in pages.
func TestManySessionsPaged(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	appr := h.dial(t, RoleApprover, "owner")
	want := map[string]bool{}
	for i := range maxSessions {
		id := fmt.Sprintf("%04d", i) + strings.Repeat("\x01", maxAgentLen-4)
		_, err := appr.SetSession(ctx, SessionOverride{AgentID: id, Security: "deny"})
		require.NoError(t, err)
		want[id] = true
	}
	list, err := appr.Sessions(ctx)
	require.NoError(t, err)
	require.Len(t, list, maxSessions)
	for _, o := range list {
		assert.True(t, want[o.AgentID])
	}
}
