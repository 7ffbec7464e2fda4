package approve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hub"
)

// fakeSource is an in-memory hub connection.
type fakeSource struct {
	mu         sync.Mutex
	list       []hub.Approval
	events     chan hub.Event
	resolved   []string // "id decision", in order
	params     []hub.ResolveParams
	resolveErr error
	closed     bool
}

func newFake(list ...hub.Approval) *fakeSource {
	return &fakeSource{list: list, events: make(chan hub.Event, 16)}
}

func (f *fakeSource) List(context.Context) ([]hub.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]hub.Approval(nil), f.list...), nil
}

func (f *fakeSource) Subscribe(context.Context) (<-chan hub.Event, error) { return f.events, nil }

func (f *fakeSource) ResolveWith(_ context.Context, p hub.ResolveParams) (hub.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.resolveErr != nil {
		return hub.Approval{}, f.resolveErr
	}
	f.resolved = append(f.resolved, p.ID+" "+p.Decision)
	f.params = append(f.params, p)
	a := hub.Approval{Decision: p.Decision, ResolvedBy: "tester", Patterns: p.Patterns, Message: p.Message}
	a.ID = p.ID
	return a, nil
}

func (f *fakeSource) sent() []hub.ResolveParams {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]hub.ResolveParams(nil), f.params...)
}

func (f *fakeSource) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func (f *fakeSource) decisions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.resolved...)
}

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time           { return c.t }
func (c *clock) advance(d time.Duration)  { c.t = c.t.Add(d) }
func newClock() *clock                    { return &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)} }
func (c *clock) ms(d time.Duration) int64 { return c.t.Add(d).UnixMilli() }
func approval(c *clock, id, command string) hub.Approval {
	a := hub.Approval{CreatedAtMs: c.ms(0), ExpiresAtMs: c.ms(30 * time.Second)}
	a.ID, a.Command, a.Cwd, a.AgentID, a.Risk = id, command, "/home/u/proj", "claude-code", "needs-review"
	a.Reasons = []string{"writes files"}
	return a
}

func event(t *testing.T, name string, a hub.Approval) hub.Event {
	t.Helper()
	raw, err := json.Marshal(a)
	require.NoError(t, err)
	return hub.Event{Name: name, Payload: raw}
}

// find returns the one command named name among cmds.
func find(t *testing.T, cmds []cmd, name string) cmd {
	t.Helper()
	var found []cmd
	for _, c := range cmds {
		if c.name == name {
			found = append(found, c)
		}
	}
	require.Len(t, found, 1, "commands %v", names(cmds))
	return found[0]
}

func names(cmds []cmd) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.name)
	}
	return out
}

// exec runs a command that must not block.
func exec(t *testing.T, c cmd) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.run(ctx)
}

// connected returns a model connected to src with the clock c.
func connected(t *testing.T, c *clock, src *fakeSource, o Options) *model {
	t.Helper()
	o.Now = c.now
	o.Dial = func(context.Context) (Source, error) { return src, nil }
	m := newModel(o)
	msg := exec(t, find(t, m.init(), "dial"))
	require.IsType(t, connectedMsg{}, msg)
	find(t, m.update(msg), "wait")
	return m
}

func screen(m *model) string { return strings.Join(m.view(), "\n") }

// listed is the screen without its status and key lines.
func listed(m *model) string {
	rows := m.view()
	return strings.Join(rows[:len(rows)-3], "\n")
}

func TestArrivalShowsRequestAndRingsBell(t *testing.T) {
	for _, bell := range []bool{true, false} {
		t.Run(fmt.Sprint("bell=", bell), func(t *testing.T) {
			c, src := newClock(), newFake()
			m := connected(t, c, src, Options{Bell: bell})
			assert.Contains(t, screen(m), "no pending requests")
			assert.False(t, m.bell)

			a := approval(c, "a1b2c3d4e5f6", "git push --force")
			a.Via = "Claude Code"
			find(t, m.update(eventMsg{gen: m.gen, ev: event(t, hub.EventRequested, a), ok: true}), "wait")
			s := screen(m)
			assert.Contains(t, s, "a1b2c3d4")
			assert.NotContains(t, s, "a1b2c3d4e", "the list shows an ID prefix")
			assert.Contains(t, s, "| git push --force")
			assert.Contains(t, s, "/home/u/proj")
			assert.Contains(t, s, "claude-code")
			assert.Contains(t, s, "via      Claude Code")
			assert.Contains(t, s, "- writes files")
			assert.Contains(t, s, "1 pending")
			assert.Equal(t, bell, m.bell)

			// The same request again (listed and pushed) is shown once and
			// does not ring again.
			m.bell = false
			m.update(eventMsg{gen: m.gen, ev: event(t, hub.EventRequested, a), ok: true})
			assert.Equal(t, 1, strings.Count(screen(m), "a1b2c3d4"))
			assert.False(t, m.bell)
		})
	}
}

func TestCountdown(t *testing.T) {
	c, src := newClock(), newFake()
	a := approval(c, "id000001", "make deploy")
	a.ExpiresAtMs = c.ms(75 * time.Second)
	src.list = []hub.Approval{a}
	m := connected(t, c, src, Options{})
	assert.Contains(t, screen(m), "1m15s left")
	c.advance(15500 * time.Millisecond)
	m.update(tickMsg{})
	assert.Contains(t, screen(m), "1m00s left")
	c.advance(59 * time.Second)
	m.update(tickMsg{})
	assert.Contains(t, screen(m), "1s left")
	c.advance(time.Second)
	m.update(tickMsg{})
	assert.Contains(t, screen(m), "expiring")
	// The hub's expired event removes it; if that never comes, it goes
	// anyway a little later.
	c.advance(staleAfter + time.Second)
	m.update(tickMsg{})
	assert.NotContains(t, listed(m), "id000001")
	assert.Contains(t, m.status, "expired: id000001 make deploy")
}

func TestDecisionKeys(t *testing.T) {
	tests := []struct{ key, decision, said string }{
		{"o", hub.AllowOnce, "allowed once by you"},
		{"y", hub.AllowOnce, "allowed once by you"},
		{"a", hub.AllowAlways, "allowed always by you"},
		{"d", hub.Deny, "denied by you"},
		{"n", hub.Deny, "denied by you"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			c := newClock()
			src := newFake(approval(c, "first001", "ls"), approval(c, "second02", "rm -rf build"))
			m := connected(t, c, src, Options{})
			c.advance(guardTime)
			m.update(keyMsg{key: "down"})
			msg := exec(t, find(t, m.update(keyMsg{key: tt.key}), "resolve"))
			assert.Equal(t, []string{"second02 " + tt.decision}, src.decisions())
			assert.Contains(t, screen(m), "sending")

			// A second press while the first is on its way sends nothing.
			assert.Empty(t, m.update(keyMsg{key: tt.key}))

			m.update(msg)
			assert.Equal(t, tt.said+": second02 rm -rf build", m.status)
			assert.NotContains(t, listed(m), "second02")
			assert.Contains(t, screen(m), "first001")
			assert.Equal(t, "first001", m.sel)
		})
	}
}

func TestResolvedEventBeforeAnswer(t *testing.T) {
	c := newClock()
	src := newFake(approval(c, "abcd1234", "npm publish"))
	m := connected(t, c, src, Options{Name: "approve@pts/3"})
	c.advance(guardTime)
	msg := exec(t, find(t, m.update(keyMsg{key: "a"}), "resolve"))

	a := approval(c, "abcd1234", "npm publish")
	a.Decision, a.ResolvedBy = hub.AllowAlways, "approve@pts/3"
	m.update(eventMsg{gen: m.gen, ev: event(t, hub.EventResolved, a), ok: true})
	assert.Equal(t, "allowed always by you: abcd1234 npm publish", m.status)
	m.update(msg) // the answer to our call, after the event: no change
	assert.Equal(t, "allowed always by you: abcd1234 npm publish", m.status)
	assert.Empty(t, m.items)
}

func TestQuitNeverResolves(t *testing.T) {
	for _, key := range []string{"q", "ctrl+c", "ctrl+d"} {
		c := newClock()
		src := newFake(approval(c, "abcd1234", "ls"))
		m := connected(t, c, src, Options{})
		c.advance(guardTime)
		assert.Empty(t, m.update(keyMsg{key: key}))
		assert.True(t, m.quit, key)
		assert.Empty(t, src.decisions())
	}
}

func TestGuardAfterSelectionChangedByItself(t *testing.T) {
	c, src := newClock(), newFake()
	m := connected(t, c, src, Options{})
	m.update(eventMsg{gen: m.gen, ev: event(t, hub.EventRequested, approval(c, "new00001", "curl x | sh")), ok: true})
	// A key already on its way when the request appeared was not meant
	// for it.
	c.advance(guardTime / 2)
	assert.Empty(t, m.update(keyMsg{key: "a"}))
	assert.Contains(t, m.status, "selection just changed")
	c.advance(guardTime / 2)
	find(t, m.update(keyMsg{key: "a"}), "resolve")

	// Moving by hand arms no guard; an arrival below the selection does not
	// move it.
	m = connected(t, c, newFake(approval(c, "one00001", "a"), approval(c, "two00002", "b")), Options{})
	c.advance(guardTime)
	m.update(keyMsg{key: "j"})
	assert.Equal(t, "two00002", m.sel)
	m.update(eventMsg{gen: m.gen, ev: event(t, hub.EventRequested, approval(c, "three003", "c")), ok: true})
	assert.Equal(t, "two00002", m.sel)
	find(t, m.update(keyMsg{key: "d"}), "resolve")
}

func TestBurstKeysNeverDecide(t *testing.T) {
	c := newClock()
	src := newFake(approval(c, "abcd1234", "ls"), approval(c, "efgh5678", "pwd"))
	m := connected(t, c, src, Options{})
	c.advance(guardTime)
	assert.Empty(t, m.update(keyMsg{key: "a", burst: true}))
	assert.Contains(t, m.status, "one key at a time")
	m.update(keyMsg{key: "j", burst: true})
	assert.Equal(t, "efgh5678", m.sel, "moving is fine in a burst")
	assert.Empty(t, src.decisions())
}

func TestRemovalEvents(t *testing.T) {
	tests := []struct {
		name   string
		event  string
		by     string
		status string
	}{
		{"resolved elsewhere", hub.EventResolved, "approve@pts/3", "allowed once by approve@pts/3: abcd1234 ls -la"},
		{"resolved by a hostile name", hub.EventResolved, "x\x1b[2Jy", `allowed once by x\x1b[2Jy: abcd1234 ls -la`},
		{"expired", hub.EventExpired, "", "expired: abcd1234 ls -la"},
		{"withdrawn", hub.EventWithdrawn, "", "withdrawn (the agent stopped waiting): abcd1234 ls -la"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			src := newFake(approval(c, "abcd1234", "ls -la"), approval(c, "efgh5678", "pwd"))
			m := connected(t, c, src, Options{Name: "approve@pts/9"})
			a := approval(c, "abcd1234", "ls -la")
			if tt.event == hub.EventResolved {
				a.Decision, a.ResolvedBy = hub.AllowOnce, tt.by
			}
			m.update(eventMsg{gen: m.gen, ev: event(t, tt.event, a), ok: true})
			assert.Equal(t, tt.status, m.status)
			s := screen(m)
			assert.NotContains(t, listed(m), "abcd1234")
			assert.Contains(t, s, "efgh5678")
			assert.NotContains(t, s, "\x1b[2J")
			// The neighbour took the selection: a key that follows at once
			// is held back.
			assert.Equal(t, "efgh5678", m.sel)
			assert.Empty(t, m.update(keyMsg{key: "o"}))
		})
	}
}

func TestResolveNotFound(t *testing.T) {
	c := newClock()
	src := newFake(approval(c, "abcd1234", "ls"))
	src.resolveErr = &hub.ErrorBody{Code: hub.ErrCodeNotFound, Message: "no such approval"}
	m := connected(t, c, src, Options{})
	c.advance(guardTime)
	m.update(exec(t, find(t, m.update(keyMsg{key: "o"}), "resolve")))
	assert.Equal(t, "abcd1234 was already settled (another approver, or it expired)", m.status)
	assert.Empty(t, m.items[0].sending, "it may be tried again")

	src.resolveErr = errors.New("connection reset")
	m.update(exec(t, find(t, m.update(keyMsg{key: "o"}), "resolve")))
	assert.Equal(t, "could not resolve abcd1234: connection reset", m.status)

	// Another approver won the race: its event tells the story, and our
	// NOT_FOUND that follows changes nothing.
	src.resolveErr = &hub.ErrorBody{Code: hub.ErrCodeNotFound, Message: "no such approval"}
	msg := exec(t, find(t, m.update(keyMsg{key: "o"}), "resolve"))
	a := approval(c, "abcd1234", "ls")
	a.Decision, a.ResolvedBy = hub.AllowOnce, "approve@pts/5"
	m.update(eventMsg{gen: m.gen, ev: event(t, hub.EventResolved, a), ok: true})
	m.update(msg)
	assert.Equal(t, "allowed once by approve@pts/5: abcd1234 ls", m.status)
}

func TestEscapedDisplay(t *testing.T) {
	c := newClock()
	// An ANSI sequence that would clear the screen and recolour, a bidi
	// override that would reverse what follows, a zero-width space.
	cmd := "echo ok\x1b[2J\x1b[31m; rm -rf \u202e~/\u202c\u200b #"
	a := approval(c, "abcd1234", cmd)
	a.Reasons = []string{"reason \x1b]0;title\a"}
	a.AgentID = "agent\u202e"
	for _, color := range []bool{false, true} {
		m := connected(t, c, newFake(a), Options{Color: color})
		s := screen(m)
		assert.Contains(t, s, `echo ok\x1b[2J\x1b[31m; rm -rf \u202e~/\u202c\u200b #`)
		assert.Contains(t, s, `reason \x1b]0;title\a`)
		assert.Contains(t, s, `agent\u202e`)
		for _, bad := range []string{"\x1b[2J", "\x1b[31m", "\x1b]", "\a", "\u202e", "\u202c", "\u200b"} {
			assert.NotContains(t, s, bad)
		}
		if !color {
			assert.NotContains(t, s, "\x1b", "no colour, no escape sequence at all")
		}
	}
}

func TestRiskColours(t *testing.T) {
	c := newClock()
	risks := map[string]string{"dangerous": sgrRed, "needs-review": sgrYellow, "safe": sgrGreen}
	for risk, sgr := range risks {
		a := approval(c, "abcd1234", "x")
		a.Risk = risk
		m := connected(t, c, newFake(a), Options{Color: true})
		assert.Contains(t, screen(m), sgr+fmt.Sprintf("%-12s", risk)+sgrReset)
		m = connected(t, c, newFake(a), Options{Color: false})
		assert.NotContains(t, screen(m), sgr)
	}
}

func TestNarrowTerminal(t *testing.T) {
	c := newClock()
	long := "find / -name '*.go' -exec grep -l TODO {} + | xargs -n1 wc -l\nsecond line\x1b[31m é你好"
	a := approval(c, "abcd1234", long)
	a.Reasons = []string{"runs a command for every file found, possibly many"}
	for _, width := range []int{16, 24, 40, 60, 100} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			m := connected(t, c, newFake(a), Options{Color: true, Name: "approve@pts/12"})
			m.update(resizeMsg{width: width})
			rows := m.view()
			for _, r := range rows {
				assert.LessOrEqual(t, cells(stripSGR(r)), width-1, "row %q", r)
			}
			// The selected command is there in full, wrapped, never cut:
			// rows starting "| " begin a source line, the others go on.
			col := labelCells
			if width < wideLayout {
				col = len(narrowValue)
			}
			var got strings.Builder
			in := false
			for _, r := range rows {
				r = stripSGR(r)
				switch {
				case strings.HasPrefix(r, "    command  ") || r == "  command":
					in = true
					if width < wideLayout {
						continue
					}
				case strings.HasPrefix(strings.TrimSpace(r), "cwd"):
					in = false
				}
				if !in {
					continue
				}
				require.Greater(t, len(r), col+2, "row %q", r)
				if r[col:col+2] == "| " {
					got.WriteString("\n")
				} else {
					require.Equal(t, "  ", r[col:col+2], "row %q", r)
				}
				got.WriteString(r[col+2:])
			}
			want := "\nfind / -name '*.go' -exec grep -l TODO {} + | xargs -n1 wc -l\nsecond line\\x1b[31m é你好"
			assert.Equal(t, want, got.String())
		})
	}
}

func stripSGR(s string) string {
	for _, sgr := range []string{sgrBold, sgrRed, sgrYellow, sgrGreen, sgrReset} {
		s = strings.ReplaceAll(s, sgr, "")
	}
	return s
}

func TestShortTerminalKeepsSelectionVisible(t *testing.T) {
	c := newClock()
	var list []hub.Approval
	for i := range 30 {
		list = append(list, approval(c, fmt.Sprintf("id%06d", i), fmt.Sprintf("cmd %d", i)))
	}
	m := connected(t, c, newFake(list...), Options{})
	m.update(resizeMsg{width: 80, height: 12})
	for range 20 {
		m.update(keyMsg{key: "down"})
	}
	rows := m.view()
	assert.LessOrEqual(t, len(rows), 12)
	s := strings.Join(rows, "\n")
	assert.Contains(t, s, "> id000020")
	assert.Contains(t, s, "| cmd 20")
	assert.Contains(t, s, "more rows")
	assert.Contains(t, s, keyHelps[1], "the longest key line that fits 80 columns")
}

func TestReconnect(t *testing.T) {
	c := newClock()
	first := newFake(approval(c, "abcd1234", "ls"))
	var attempts []error
	var next *fakeSource
	o := Options{Now: c.now, Retry: time.Millisecond}
	o.Dial = func(context.Context) (Source, error) {
		if next == nil {
			err := fmt.Errorf("dial: %w", hub.ErrNoHub)
			attempts = append(attempts, err)
			return nil, err
		}
		return next, nil
	}
	m := newModel(o)
	next = first
	m.update(exec(t, find(t, m.init(), "dial")))
	assert.Contains(t, screen(m), "abcd1234")

	// The hub goes away: its requests go with it, and we retry.
	next = nil
	oldGen := m.gen
	cmds := m.update(eventMsg{gen: m.gen, ok: false})
	exec(t, find(t, cmds, "close"))
	assert.True(t, first.closed)
	assert.Contains(t, screen(m), "hub not running — retrying")
	assert.NotContains(t, screen(m), "abcd1234")
	msg := exec(t, find(t, cmds, "retry"))
	msg = exec(t, find(t, m.update(msg), "dial"))
	require.IsType(t, dialFailedMsg{}, msg)
	msg = exec(t, find(t, m.update(msg), "retry"))
	assert.Len(t, attempts, 1)

	// Late messages of the old connection change nothing.
	assert.Empty(t, m.update(eventMsg{gen: oldGen, ev: event(t, hub.EventRequested, approval(c, "old00000", "x")), ok: true}))
	assert.NotContains(t, screen(m), "old00000")

	// The hub is back with a new request.
	next = newFake(approval(c, "back0001", "make"))
	m.update(exec(t, find(t, m.update(msg), "dial")))
	s := screen(m)
	assert.Contains(t, s, "1 pending")
	assert.Contains(t, s, "back0001")
	assert.NotContains(t, s, "retrying")
}

func TestRefusedConnectionIsExplained(t *testing.T) {
	c := newClock()
	o := Options{Now: c.now, Dial: func(context.Context) (Source, error) {
		return nil, &hub.ErrorBody{Code: hub.ErrCodeAuth, Message: "bad mac"}
	}}
	m := newModel(o)
	m.update(resizeMsg{width: 120})
	m.update(exec(t, find(t, m.init(), "dial")))
	assert.Contains(t, screen(m), "hub refused the connection (UNAUTHORIZED: bad mac) — retrying")
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 400 * time.Millisecond: "1s", 59 * time.Second: "59s", 60 * time.Second: "1m00s",
		61*time.Second + time.Millisecond: "1m02s", time.Hour: "1h00m", 2*time.Hour + 5*time.Minute: "2h05m",
	} {
		assert.Equal(t, want, Duration(d), d.String())
	}
}
