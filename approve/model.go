// Package approve is the terminal approver: it lists the hub's pending
// approvals as they come and go, counts them down, and sends the decisions
// a person makes with single key presses back to the hub.
//
// The screen is a model with no I/O of its own (update and view), driven by
// Run through Bubble Tea, which owns the terminal: raw mode, keys, resizes
// and redraws. The
// model reaches the hub only through Source, so that tests drive it with a
// fake. Quitting never resolves anything: pending requests stay pending for
// other approvers or run into their timeout.
package approve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/execgate/execgate/hub"
)

// Source is the part of a hub connection the approver uses; *hub.Client
// implements it.
type Source interface {
	List(ctx context.Context) ([]hub.Approval, error)
	// Subscribe returns the event stream; it is closed when ctx ends or
	// the connection drops.
	Subscribe(ctx context.Context) (<-chan hub.Event, error)
	// ResolveWith answers one request: a decision, with allow-always the
	// scopes chosen, with deny a message.
	ResolveWith(ctx context.Context, p hub.ResolveParams) (hub.Approval, error)
	Close() error
}

// Options configures Run.
type Options struct {
	// Dial connects to the hub as an approver. It is called again after
	// each failure and each lost connection, so it should read the
	// configuration afresh (the hub creates the token on its first start).
	// An error wrapping hub.ErrNoHub is shown as "hub not running".
	Dial func(context.Context) (Source, error)
	// Name is how this approver introduced itself to the hub; a resolution
	// the hub reports with this name, of a decision sent from here, is
	// shown as "by you".
	Name string
	// Bell rings the terminal bell when a request arrives.
	Bell bool
	// Color paints risks; leave it false for NO_COLOR and dumb terminals.
	Color bool
	// Now reads the clock; nil means time.Now.
	Now func() time.Time
	// Retry is the pause between connection attempts; zero means a second.
	Retry time.Duration
	// History reads recent decisions, newest first, for the history pane
	// (h); nil: the pane says there is no audit log.
	History func(context.Context) ([]Past, error)
	// Checkpoints lists recent checkpoints of the user's workspaces,
	// newest first, for the undo pane (u); nil: the pane has none.
	Checkpoints func(context.Context) ([]Checkpoint, error)
	// Undo undoes checkpoint seq of the workspace root, or with preview
	// says what it would change, changing nothing (checkpoint.UndoIn): the
	// lines to show, the summary last.
	Undo func(ctx context.Context, root string, seq uint64, preview bool) ([]string, error)
}

// Timing of the screen.
const (
	defaultRetry = time.Second
	// guardTime is how long decision keys are ignored after the selected
	// request changed by itself (an arrival, a removal, a reconnect): a key
	// that quick was meant for what was there before.
	guardTime = 400 * time.Millisecond
	// staleAfter drops a request whose expiry passed this long ago without
	// the hub saying so, so that a lost event cannot leave it on screen.
	staleAfter = 5 * time.Second
)

// decisionKeys are the keys of each decision. Tables here are slices, not
// maps: the linker lays them out, so they cost nothing at start-up (the
// binary is also the shim, started for every command).
var decisionKeys = []struct{ keys, decision string }{
	{"oOyY", hub.AllowOnce},
	{"aA", hub.AllowAlways},
	{"dDnN", hub.Deny},
}

// keyDecision returns the decision key stands for.
func keyDecision(key string) (string, bool) {
	for _, d := range decisionKeys {
		if len(key) == 1 && strings.Contains(d.keys, key) {
			return d.decision, true
		}
	}
	return "", false
}

// Messages the model handles. Run turns terminal input, timers and the
// results of commands into these.
type (
	keyMsg struct {
		key string // see keyName
		// burst marks a key that came with others, closer together than
		// a person types, or in a paste: it may move the selection but
		// never decide.
		burst bool
	}
	resizeMsg    struct{ width, height int }
	tickMsg      struct{}
	connectedMsg struct {
		gen    int
		src    Source
		events <-chan hub.Event
		list   []hub.Approval
	}
	dialFailedMsg struct {
		gen int
		err error
	}
	eventMsg struct {
		gen int
		ev  hub.Event
		ok  bool // false: the stream closed
	}
	retryMsg    struct{ gen int }
	resolvedMsg struct {
		id, decision string
		a            hub.Approval
		err          error
	}
)

// cmd is work the model asks Run to do outside it, in its own goroutine;
// its result (if not nil) comes back as a message. name lets tests pick
// commands without running them.
type cmd struct {
	name string
	run  func(ctx context.Context) any
}

// item is one pending request on screen.
type item struct {
	hub.Approval
	// sending is the decision sent for it and not yet answered.
	sending string
}

// model is the approver's state. Its methods do no I/O: update returns the
// commands to run, view returns the screen.
type model struct {
	o     Options
	now   time.Time
	width int
	// height is zero when unknown: then nothing is cropped.
	height int
	items  []item
	// sel is the ID of the selected request, empty when there is none.
	sel string
	// guard: decision keys are ignored until then (see guardTime).
	guard time.Time
	// gen numbers connections, so that messages from an old one are
	// recognised and dropped.
	gen       int
	src       Source
	stream    <-chan hub.Event
	connected bool
	// down says why there is no connection, shown in the header.
	down   string
	status string
	// bell asks Run to ring the bell with the next frame.
	bell bool
	quit bool

	// mode is the pane shown (modeList …); scope is the scope choice
	// under way, msg the deny message being typed for msgID.
	mode  int
	scope *scopeState
	msg   string
	msgID string
	// filterAgent and filterRisk hide other requests ("" shows all).
	filterAgent, filterRisk string
	history                 []Past
	historyErr              string
	undo                    undoState
}

func newModel(o Options) *model {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Retry <= 0 {
		o.Retry = defaultRetry
	}
	m := &model{o: o, width: 80, down: "connecting to the hub…"}
	m.now = o.Now()
	return m
}

// init starts the first connection.
func (m *model) init() []cmd {
	m.gen++
	return []cmd{m.dialCmd(m.gen)}
}

// update applies one message and returns the commands it calls for.
func (m *model) update(msg any) []cmd {
	m.now = m.o.Now()
	switch msg := msg.(type) {
	case keyMsg:
		return m.key(msg)
	case resizeMsg:
		if msg.width > 0 {
			m.width = msg.width
		}
		m.height = max(msg.height, 0)
	case tickMsg:
		m.dropStale()
	case connectedMsg:
		return m.onConnected(msg)
	case dialFailedMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.down = downText(msg.err)
		return []cmd{m.retryCmd(m.gen)}
	case retryMsg:
		if msg.gen != m.gen || m.connected {
			return nil
		}
		return []cmd{m.dialCmd(m.gen)}
	case eventMsg:
		if msg.gen != m.gen {
			return nil
		}
		if !msg.ok {
			return m.lost()
		}
		m.event(msg.ev)
		return []cmd{m.waitCmd()}
	case resolvedMsg:
		m.resolved(msg)
	case checkpointsMsg, undoMsg:
		return m.undoUpdate(msg)
	case historyMsg:
		m.history, m.historyErr = msg.rows, ""
		if msg.err != nil {
			m.historyErr = msg.err.Error()
		}
		if len(m.history) > historyRows {
			m.history = m.history[:historyRows]
		}
	}
	return nil
}

// onConnected takes a new connection's snapshot. Events that came in
// between subscribing and listing are still queued and applied after, so
// nothing is lost and duplicates are ignored by ID.
func (m *model) onConnected(msg connectedMsg) []cmd {
	if msg.gen != m.gen {
		return []cmd{closeCmd(msg.src)}
	}
	m.src, m.stream, m.connected, m.down = msg.src, msg.events, true, ""
	before := m.sel
	m.items = m.items[:0]
	for _, a := range msg.list {
		m.add(a)
	}
	m.reselect(before, 0)
	return []cmd{m.waitCmd()}
}

// lost forgets a dropped connection and its requests (a restarted hub
// starts empty; a reconnect lists what is still pending) and retries.
func (m *model) lost() []cmd {
	cmds := []cmd{closeCmd(m.src), m.retryCmd(m.gen + 1)}
	m.gen++
	m.src, m.stream, m.connected = nil, nil, false
	m.down = downText(hub.ErrNoHub)
	m.items, m.sel = nil, ""
	return cmds
}

// downText is the header's account of a failed connection.
func downText(err error) string {
	var body *hub.ErrorBody
	switch {
	case errors.Is(err, hub.ErrNoHub):
		return "hub not running — retrying"
	case errors.As(err, &body):
		return fmt.Sprintf("hub refused the connection (%s: %s) — retrying", body.Code, body.Message)
	}
	return fmt.Sprintf("cannot reach the hub (%v) — retrying", err)
}

// event applies one pushed event.
func (m *model) event(ev hub.Event) {
	var a hub.Approval
	switch ev.Name {
	case hub.EventRequested, hub.EventResolved, hub.EventExpired, hub.EventWithdrawn:
		if err := json.Unmarshal(ev.Payload, &a); err != nil || a.ID == "" {
			return // not an approval: nothing on screen can change
		}
	default:
		return
	}
	if ev.Name == hub.EventRequested {
		if m.add(a) && m.o.Bell && m.visible(item{Approval: a}) {
			m.bell = true
		}
		if m.sel == "" {
			m.refilter()
		}
		return
	}
	i := m.index(a.ID)
	if i < 0 {
		return
	}
	it := m.items[i]
	switch ev.Name {
	case hub.EventResolved:
		by := a.ResolvedBy
		// Our name and the decision we sent: another approver that won
		// the race with the same decision is not "you".
		if it.sending != "" && it.sending == a.Decision && m.o.Name != "" && a.ResolvedBy == m.o.Name {
			by = "you"
		}
		if by != "you" && a.Approver != nil {
			by = a.Approver.User + " (" + a.Approver.Kind + ")"
			if a.Approver.User == "" || a.Approver.Kind == "" {
				by = a.ResolvedBy
			}
		}
		m.status = fmt.Sprintf("%s by %s: %s", PastTense(a.Decision), escapeOr(by, "another approver"), summary(it.Approval))
	case hub.EventExpired:
		m.status = "expired: " + summary(it.Approval)
	case hub.EventWithdrawn:
		m.status = "withdrawn (the agent stopped waiting): " + summary(it.Approval)
	}
	m.remove(i)
}

// add appends a request unless it is already listed.
func (m *model) add(a hub.Approval) bool {
	if m.index(a.ID) >= 0 {
		return false
	}
	m.items = append(m.items, item{Approval: a})
	return true
}

func (m *model) index(id string) int {
	return slices.IndexFunc(m.items, func(it item) bool { return it.ID == id })
}

// remove drops items[i]; when it was selected, its neighbour is. A pane
// about it (the scope choice, the deny message) closes.
func (m *model) remove(i int) {
	id := m.items[i].ID
	if (m.mode == modeScope && m.scope != nil && m.scope.id == id) || (m.mode == modeMessage && m.msgID == id) {
		m.mode, m.scope, m.msg = modeList, nil, ""
	}
	m.items = slices.Delete(m.items, i, i+1)
	if m.sel == id {
		m.sel = ""
		m.reselect(id, i)
	}
}

// reselect keeps the selection on the request with ID before, or else
// selects the one at index i (clamped). A selection that changed by itself
// arms the guard against keys meant for the previous one.
func (m *model) reselect(before string, i int) {
	if before != "" && m.index(before) >= 0 {
		m.sel = before
		return
	}
	m.sel = ""
	if len(m.items) == 0 {
		return
	}
	m.sel = m.items[min(max(i, 0), len(m.items)-1)].ID
	m.guard = m.now.Add(guardTime)
	m.refilter()
}

// dropStale removes requests long past their expiry.
func (m *model) dropStale() {
	for i := len(m.items) - 1; i >= 0; i-- {
		a := m.items[i].Approval
		if a.ExpiresAtMs > 0 && m.now.Sub(time.UnixMilli(a.ExpiresAtMs)) > staleAfter {
			m.status = "expired: " + summary(a)
			m.remove(i)
		}
	}
}

// key handles one key press.
func (m *model) key(k keyMsg) []cmd {
	if cmds, ok := m.paneKey(k); ok {
		return cmds
	}
	switch k.key {
	case "q", "Q", "ctrl+c", "ctrl+d":
		m.quit = true
		return nil
	case "up", "k":
		m.move(-1)
		return nil
	case "down", "j":
		m.move(+1)
		return nil
	case "?":
		m.mode = modeHelp
		return nil
	case "f":
		m.cycleAgent()
		return nil
	case "r":
		m.cycleRisk()
		return nil
	case "h", "H":
		m.mode = modeHistory
		return []cmd{m.historyCmd()}
	case "u", "U":
		return m.openUndo()
	}
	decision, ok := keyDecision(k.key)
	if k.key == "m" || k.key == "M" {
		decision, ok = "message", true
	}
	if !ok {
		return nil
	}
	i := m.index(m.sel)
	switch {
	case i < 0 || m.src == nil:
		return nil
	case k.burst:
		m.status = "ignored keys that came all at once (a paste?): press one key at a time"
		return nil
	case m.now.Before(m.guard):
		m.status = "the selection just changed: look, then press again"
		return nil
	case m.items[i].sending != "":
		return nil
	}
	switch {
	case decision == "message":
		m.mode, m.msgID, m.msg = modeMessage, m.sel, ""
		m.status = ""
		return nil
	case decision == hub.AllowAlways && hasChoice(m.items[i].Proposals):
		m.startScope(m.items[i])
		return nil
	}
	return m.send(i, hub.ResolveParams{ID: m.sel, Decision: decision})
}

// move changes the selection by the user's hand, among the requests the
// filters show: no guard.
func (m *model) move(d int) {
	shown := m.shown()
	i := slices.IndexFunc(shown, func(it item) bool { return it.ID == m.sel })
	if i < 0 {
		return
	}
	m.sel = shown[min(max(i+d, 0), len(shown)-1)].ID
}

// resolved takes the hub's answer to a decision sent from here.
func (m *model) resolved(msg resolvedMsg) {
	i := m.index(msg.id)
	if msg.err == nil {
		if i >= 0 {
			m.status = fmt.Sprintf("%s by you: %s", PastTense(msg.decision), summary(m.items[i].Approval))
			m.remove(i)
		}
		return
	}
	if i < 0 {
		return // an event removed it already and said by whom
	}
	m.items[i].sending = ""
	var body *hub.ErrorBody
	if errors.As(msg.err, &body) && body.Code == hub.ErrCodeNotFound {
		m.status = fmt.Sprintf("%s was already settled (another approver, or it expired)", shortID(msg.id))
		return
	}
	m.status = fmt.Sprintf("could not resolve %s: %v", shortID(msg.id), msg.err)
}

// Commands.

func (m *model) dialCmd(gen int) cmd {
	dial := m.o.Dial
	return cmd{"dial", func(ctx context.Context) any {
		if dial == nil {
			return dialFailedMsg{gen, errors.New("no way to reach the hub")}
		}
		src, err := dial(ctx)
		if err != nil {
			return dialFailedMsg{gen, err}
		}
		// Subscribe before listing: whatever happens in between is then
		// in the stream, applied after the list.
		events, err := src.Subscribe(ctx)
		if err == nil {
			var list []hub.Approval
			if list, err = src.List(ctx); err == nil {
				return connectedMsg{gen: gen, src: src, events: events, list: list}
			}
		}
		_ = src.Close()
		return dialFailedMsg{gen, err}
	}}
}

// waitCmd waits for the next event of the current connection.
func (m *model) waitCmd() cmd {
	gen, events := m.gen, m.stream
	return cmd{"wait", func(ctx context.Context) any {
		select {
		case ev, ok := <-events:
			return eventMsg{gen: gen, ev: ev, ok: ok}
		case <-ctx.Done():
			return nil
		}
	}}
}

func (m *model) retryCmd(gen int) cmd {
	d := m.o.Retry
	return cmd{"retry", func(ctx context.Context) any {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return retryMsg{gen}
		case <-ctx.Done():
			return nil
		}
	}}
}

func (m *model) resolveCmd(p hub.ResolveParams) cmd {
	src := m.src
	return cmd{"resolve", func(ctx context.Context) any {
		a, err := src.ResolveWith(ctx, p)
		return resolvedMsg{id: p.ID, decision: p.Decision, a: a, err: err}
	}}
}

func closeCmd(src Source) cmd {
	return cmd{"close", func(context.Context) any {
		if src != nil {
			_ = src.Close()
		}
		return nil
	}}
}
