package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/execgate/execgate/hub"
)

// Socket limits.
const (
	// readLimit bounds one message from the page: a policy file fits.
	readLimit = 1 << 20
	// writeWait bounds one message to the page; a tab that cannot take it
	// is closed.
	writeWait = 10 * time.Second
	// hubCallWait bounds one call to the hub on the page's behalf.
	hubCallWait = 10 * time.Second
	// redialWait is the pause between attempts to reach a hub that is
	// down, so that a tab left open reconnects when it comes back.
	redialWait = time.Second
)

// op is a message from the page.
type op struct {
	Op  string `json:"op"`
	Ref int    `json:"ref"` // echoed in the reply
	// resolve
	ID       string `json:"id,omitempty"`
	Decision string `json:"decision,omitempty"`
	Message  string `json:"message,omitempty"`
	// Scopes choose, with allow-always, one proposed pattern per segment
	// by its index (-1: nothing saved for it). The page names patterns by
	// index because it only holds their escaped text.
	Scopes []int `json:"scopes,omitempty"`
	// history, sessions
	Agent string `json:"agent,omitempty"`
	Risk  string `json:"risk,omitempty"`
	// config.set
	File     string `json:"file,omitempty"`
	BaseHash string `json:"baseHash,omitempty"`
	// session.set, session.elevate
	Security    string `json:"security,omitempty"`
	Ask         string `json:"ask,omitempty"`
	AskFallback string `json:"askFallback,omitempty"`
	Minutes     int    `json:"minutes,omitempty"`
	// undo: the checkpoint's key (checkpointRow.Key); preview says what
	// the undo would change, changing nothing.
	Key     string `json:"key,omitempty"`
	Preview bool   `json:"preview,omitempty"`
}

// out is a message to the page.
type out struct {
	Type     string        `json:"type"`
	NowMs    int64         `json:"nowMs,omitempty"`
	Name     string        `json:"name,omitempty"`
	Hub      *hubState     `json:"hub,omitempty"`
	Cards    []card        `json:"cards,omitempty"`
	Card     *card         `json:"card,omitempty"`
	Settled  *settled      `json:"settled,omitempty"`
	Sessions []sessionView `json:"sessions,omitempty"`
	// reply
	Ref   int    `json:"ref,omitempty"`
	OK    bool   `json:"ok,omitempty"`
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
	Data  any    `json:"data,omitempty"`
}

// hubState says whether the tab's hub connection is up.
type hubState struct {
	Connected bool   `json:"connected"`
	Error     string `json:"error,omitempty"`
}

// tab is one open page: its socket and its own hub connection.
type tab struct {
	s    *Server
	ws   *websocket.Conn
	wmu  sync.Mutex
	mu   sync.Mutex
	conn *hub.Client // nil while the hub is unreachable
}

// handleSocket upgrades an authenticated request (Host, Origin and cookie
// already checked by the guards) and runs the tab until it closes.
func (s *Server) handleSocket(w http.ResponseWriter, r *http.Request) {
	// The library checks Origin against Host once more.
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		s.log.Warn("web: upgrade", "err", err)
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(readLimit)
	t := &tab{s: s, ws: ws}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go t.hubLoop(ctx)
	t.readLoop(ctx)
	cancel()
	t.setConn(nil)
	ws.Close(websocket.StatusNormalClosure, "")
}

func (t *tab) send(ctx context.Context, m out) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, writeWait)
	defer cancel()
	return wsjson.Write(wctx, t.ws, m)
}

func (t *tab) setConn(c *hub.Client) {
	t.mu.Lock()
	old := t.conn
	t.conn = c
	t.mu.Unlock()
	if old != nil && old != c {
		old.Close()
	}
}

func (t *tab) hub() *hub.Client {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conn
}

// hubLoop keeps an approver connection for this tab and forwards the
// hub's events until ctx ends.
func (t *tab) hubLoop(ctx context.Context) {
	t.send(ctx, out{Type: "hello", Name: t.s.o.Name, NowMs: t.s.o.Now().UnixMilli()})
	for ctx.Err() == nil {
		err := t.session(ctx)
		if ctx.Err() != nil {
			return
		}
		t.s.log.Info("web: hub connection", "err", err)
		if t.send(ctx, out{Type: "hub", Hub: &hubState{Error: fmt.Sprint(err)}}) != nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(redialWait):
		}
	}
}

// session runs one hub connection: subscribe, send the queue, forward
// events. It returns why the connection ended.
func (t *tab) session(ctx context.Context) error {
	c, err := t.s.o.Dial(ctx)
	if err != nil {
		return err
	}
	t.setConn(c)
	defer t.setConn(nil)
	// Subscribed before listing: an approval arriving in between comes as
	// an event after the list, and the page ignores ids it has.
	events, err := c.Subscribe(ctx)
	if err != nil {
		return err
	}
	list, err := c.List(ctx)
	if err != nil {
		return err
	}
	cards := make([]card, 0, len(list))
	for _, a := range list {
		cards = append(cards, cardOf(a))
	}
	if err := t.send(ctx, out{Type: "snapshot", Hub: &hubState{Connected: true}, Cards: cards, NowMs: t.s.o.Now().UnixMilli()}); err != nil {
		return err
	}
	t.pushSessions(ctx, c)
	for ev := range events {
		if err := t.forward(ctx, c, ev); err != nil {
			return err
		}
	}
	select {
	case <-c.Done():
		return errors.New("the hub closed the connection")
	default:
		return ctx.Err()
	}
}

// forward turns one hub event into a page message.
func (t *tab) forward(ctx context.Context, c *hub.Client, ev hub.Event) error {
	switch {
	case ev.Name == hub.EventRequested:
		var a hub.Approval
		if err := json.Unmarshal(ev.Payload, &a); err != nil {
			t.s.log.Warn("web: bad event", "event", ev.Name, "err", err)
			return nil
		}
		cd := cardOf(a)
		return t.send(ctx, out{Type: "requested", Card: &cd, NowMs: t.s.o.Now().UnixMilli()})
	case settleHow[ev.Name] != "":
		var a hub.Approval
		if err := json.Unmarshal(ev.Payload, &a); err != nil {
			t.s.log.Warn("web: bad event", "event", ev.Name, "err", err)
			return nil
		}
		st := settledOf(settleHow[ev.Name], a)
		return t.send(ctx, out{Type: "settled", Settled: &st})
	case ev.Name == hub.EventSession:
		t.pushSessions(ctx, c)
	}
	return nil
}

func (t *tab) pushSessions(ctx context.Context, c *hub.Client) {
	cctx, cancel := context.WithTimeout(ctx, hubCallWait)
	defer cancel()
	list, err := c.Sessions(cctx)
	if err != nil {
		t.s.log.Warn("web: sessions", "err", err)
		return
	}
	t.send(ctx, out{Type: "sessions", Sessions: sessionsOf(list), NowMs: t.s.o.Now().UnixMilli()})
}

// readLoop handles the page's requests one at a time until it closes.
func (t *tab) readLoop(ctx context.Context) {
	for {
		var o op
		if err := wsjson.Read(ctx, t.ws, &o); err != nil {
			return
		}
		data, err := t.do(ctx, o)
		reply := out{Type: "reply", Ref: o.Ref, OK: err == nil, Data: data}
		if err != nil {
			reply.Code, reply.Error = errorOf(err)
		}
		if t.send(ctx, reply) != nil {
			return
		}
	}
}

// errorOf turns an error into a code and one line for the page.
func errorOf(err error) (code, msg string) {
	var body *hub.ErrorBody
	if errors.As(err, &body) {
		if body.Code == hub.ErrCodeConflict {
			return body.Code, "the policy changed since this page loaded it (another approver or a shim saved it); reload it and make your change again"
		}
		return body.Code, body.Message
	}
	return "ERROR", err.Error()
}

// errNoHub answers operations while the hub is unreachable.
var errNoHub = errors.New("not connected to the hub; is it running? (execgate hub --detach)")

// do performs one page request.
func (t *tab) do(ctx context.Context, o op) (any, error) {
	switch o.Op {
	case "history":
		return history(t.s.o.AuditPath, o.Agent, o.Risk, t.s.o.Now())
	case "checkpoints":
		return t.s.checkpoints(ctx)
	case "undo":
		return t.s.undo(ctx, o.Key, o.Preview)
	}
	c := t.hub()
	if c == nil {
		return nil, errNoHub
	}
	ctx, cancel := context.WithTimeout(ctx, hubCallWait)
	defer cancel()
	switch o.Op {
	case "resolve":
		p := hub.ResolveParams{ID: o.ID, Decision: o.Decision, Message: o.Message}
		if len(o.Scopes) > 0 {
			pending, err := c.Get(ctx, o.ID)
			if err != nil {
				return nil, err
			}
			if p.Patterns, err = scopePatterns(pending.Proposals, o.Scopes); err != nil {
				return nil, err
			}
		}
		a, err := c.ResolveWith(ctx, p)
		if err != nil {
			return nil, err
		}
		return settledOf("resolved", a), nil
	case "config.get":
		snap, err := c.ConfigGet(ctx)
		if err != nil {
			return nil, err
		}
		return policyOf(snap)
	case "config.set":
		if !json.Valid([]byte(o.File)) {
			return nil, errors.New("the policy is not valid JSON; fix it and save again")
		}
		snap, err := c.ConfigSet(ctx, []byte(o.File), o.BaseHash)
		if err != nil {
			return nil, err
		}
		return policyOf(snap)
	case "session.set":
		_, err := c.SetSession(ctx, hub.SessionOverride{AgentID: o.Agent, Security: o.Security, Ask: o.Ask, AskFallback: o.AskFallback})
		return nil, err
	case "session.elevate":
		if o.Minutes <= 0 {
			return nil, errors.New("elevate: give a number of minutes above 0")
		}
		exp := t.s.o.Now().Add(time.Duration(o.Minutes) * time.Minute).UnixMilli()
		_, err := c.SetSession(ctx, hub.SessionOverride{AgentID: o.Agent, Elevated: true, ExpiresAtMs: exp})
		return nil, err
	case "session.clear":
		return nil, c.ClearSession(ctx, o.Agent)
	}
	return nil, fmt.Errorf("unknown operation %q", o.Op)
}

// scopePatterns turns the page's choice of scope indexes into the patterns
// to save, one per proposal ("" for -1); an index out of range is an error
// (the hub would refuse a pattern it did not propose anyway).
func scopePatterns(proposals []hub.SegmentProposal, scopes []int) ([]string, error) {
	if len(scopes) != len(proposals) {
		return nil, fmt.Errorf("%d scopes chosen for %d segments; reload the page", len(scopes), len(proposals))
	}
	out := make([]string, len(scopes))
	for i, k := range scopes {
		switch {
		case k == -1:
		case k < 0 || k >= len(proposals[i].Patterns):
			return nil, fmt.Errorf("segment %d has no scope %d; reload the page", i+1, k)
		default:
			out[i] = proposals[i].Patterns[k]
		}
	}
	return out, nil
}
