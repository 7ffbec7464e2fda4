package hub

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/execgate/execgate/policy"
)

// errDeferred tells the dispatcher that the handler answers later itself.
var errDeferred = errors.New("answered later")

func errBody(code, msg string) *ErrorBody { return &ErrorBody{Code: code, Message: msg} }

func badRequest(msg string) *ErrorBody { return errBody(ErrCodeBadRequest, msg) }

// method is one entry of the dispatch table: who may call it and what it
// does. fn returns the result, an *ErrorBody, or errDeferred.
type method struct {
	roles []Role
	fn    func(ctx context.Context, c *conn, f *Frame) (any, error)
}

var (
	requesterOnly = []Role{RoleRequester}
	approverOnly  = []Role{RoleApprover}
	anyRole       = []Role{RoleRequester, RoleApprover, RoleWatcher}
	// readers may look but not answer or change anything.
	readers = []Role{RoleApprover, RoleWatcher}
)

// methods is the dispatch table (read-only).
var methods = map[string]method{
	MethodRequest:      {requesterOnly, handleRequest},
	MethodWithdraw:     {requesterOnly, handleWithdraw},
	MethodReport:       {requesterOnly, handleReport},
	MethodResolve:      {approverOnly, handleResolve},
	MethodList:         {readers, handleList},
	MethodGet:          {readers, handleGet},
	MethodSubscribe:    {readers, handleSubscribe},
	MethodConfigGet:    {approverOnly, handleConfigGet},
	MethodConfigSet:    {approverOnly, handleConfigSet},
	MethodSessionGet:   {anyRole, handleSessionGet},
	MethodSessionSet:   {approverOnly, handleSessionSet},
	MethodSessionClear: {approverOnly, handleSessionClear},
	MethodSessionList:  {readers, handleSessionList},
	MethodStatus:       {anyRole, handleStatus},
}

// params decodes f's params into a new T, as a BAD_REQUEST on failure.
func params[T any](f *Frame) (T, error) {
	var v T
	if err := decodeParams(f.Params, &v); err != nil {
		return v, badRequest(err.Error())
	}
	return v, nil
}

func handleRequest(_ context.Context, c *conn, f *Frame) (any, error) {
	r, err := params[ApprovalRequest](f)
	if err != nil {
		return nil, err
	}
	if f.ID == "" {
		return nil, badRequest("exec.approval.request needs a frame id to answer")
	}
	if err := validateRequest(&r); err != nil {
		return nil, err
	}
	return c.srv.request(c, f.ID, r)
}

// idOK reports whether an approval id is one the hub accepts: what a
// terminal shows and a shell argument holds without quoting.
func idOK(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._:-", c) >= 0) {
			return false
		}
	}
	return true
}

func validateRequest(r *ApprovalRequest) error {
	switch {
	case r.ID != "" && !idOK(r.ID):
		return badRequest("id: want 1 to 128 of A-Z a-z 0-9 . _ : -")
	case strings.TrimSpace(r.Command) == "":
		return badRequest("command: empty")
	}
	if _, err := policy.ParseRisk(r.Risk); err != nil {
		return badRequest("risk: " + err.Error())
	}
	return nil
}

func handleWithdraw(_ context.Context, c *conn, f *Frame) (any, error) {
	p, err := params[IDParams](f)
	if err != nil {
		return nil, err
	}
	return c.srv.withdraw(c, p.ID)
}

// reportEvents are the events a shim may report.
var reportEvents = []string{EventStarted, EventFinished, EventDenied}

func handleReport(_ context.Context, c *conn, f *Frame) (any, error) {
	r, err := params[ExecReport](f)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(reportEvents, r.Event) {
		return nil, badRequest("event: want exec.started, exec.finished or exec.denied")
	}
	c.srv.mu.Lock()
	c.noteRunningLocked(r)
	c.srv.broadcastLocked(r.Event, r)
	c.srv.mu.Unlock()
	return struct{}{}, nil
}

// maxRunning bounds the commands one connection is remembered to run (a
// shim runs one); past it a start is simply not remembered, and the
// connection may be closed as idle while the command runs.
const maxRunning = 16

// noteRunningLocked keeps track of the commands the connection reported
// started and not yet finished: while one runs, the connection waits on
// the command, and is not idle.
func (c *conn) noteRunningLocked(r ExecReport) {
	switch {
	case r.ID == "":
	case r.Event == EventStarted && len(c.running) < maxRunning:
		c.running[r.ID] = struct{}{}
	case r.Event != EventStarted:
		delete(c.running, r.ID)
	}
}

// decisions are the valid ResolveParams.Decision values.
var decisions = []string{AllowOnce, AllowAlways, Deny}

func handleResolve(_ context.Context, c *conn, f *Frame) (any, error) {
	p, err := params[ResolveParams](f)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(decisions, p.Decision) {
		return nil, badRequest("decision: want allow-once, allow-always or deny")
	}
	if err := checkDenyMessage(p); err != nil {
		return nil, err
	}
	a, err := c.srv.resolve(c, p)
	if err != nil {
		return nil, err
	}
	// The settled approval carries the chosen patterns besides the
	// proposals they came from: shortened if that is over the limit.
	fitted, _, err := fitApproval(a, pageBudget)
	return fitted, err
}

// checkDenyMessage refuses a message with an allow (nobody would read it)
// and one too long for a refusal line.
func checkDenyMessage(p ResolveParams) error {
	switch {
	case p.Message == "":
		return nil
	case p.Decision != Deny:
		return badRequest("message: only a deny carries a message")
	case len(p.Message) > MaxDenyMessage:
		return badRequest(fmt.Sprintf("message: %d bytes, at most %d", len(p.Message), MaxDenyMessage))
	}
	return nil
}

func handleList(_ context.Context, c *conn, f *Frame) (any, error) {
	p, err := params[ListParams](f)
	if err != nil {
		return nil, err
	}
	after, err := seqCursor(p.Cursor)
	if err != nil {
		return nil, err
	}
	raws, next, err := page(c.srv.list(after),
		func(sa seqApproval) string { return strconv.FormatUint(sa.seq, 10) },
		func(sa seqApproval) ([]byte, error) { return marshal(sa.a) })
	if err != nil {
		return nil, err
	}
	return listPage{Approvals: nonNil(raws), Next: next}, nil
}

// nonNil makes an empty page encode as [] rather than null.
func nonNil(raws []json.RawMessage) []json.RawMessage {
	if raws == nil {
		return []json.RawMessage{}
	}
	return raws
}

func handleGet(_ context.Context, c *conn, f *Frame) (any, error) {
	p, err := params[IDParams](f)
	if err != nil {
		return nil, err
	}
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	pa, err := c.srv.lookupLocked(p.ID)
	if err != nil {
		return nil, err
	}
	return pa.a, nil
}

func handleSubscribe(_ context.Context, c *conn, f *Frame) (any, error) {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	// The answer is queued before the first event, under the same lock
	// that orders events.
	if f.ID != "" {
		c.reply(f.ID, struct{}{})
	}
	s.subs[c] = struct{}{}
	return nil, errDeferred
}

func handleConfigGet(_ context.Context, c *conn, _ *Frame) (any, error) {
	snap, err := c.srv.config.snapshot()
	if err != nil {
		return nil, errBody(ErrCodeInternal, oneLine(err.Error()))
	}
	if b, err := marshal(snap); err == nil && len(b) > pageBudget {
		return nil, errBody(ErrCodeTooLarge, fmt.Sprintf("the configuration file is %d bytes as sent, over the %d-byte line limit; edit it with execgate or an editor", len(b), pageBudget))
	}
	return snap, nil
}

func handleConfigSet(ctx context.Context, c *conn, f *Frame) (any, error) {
	p, err := params[ConfigSetParams](f)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.srv.config.replace(ctx, p)
}

func handleSessionGet(_ context.Context, c *conn, f *Frame) (any, error) {
	p, err := params[AgentParams](f)
	if err != nil {
		return nil, err
	}
	return c.srv.sessionGet(p.AgentID), nil
}

func handleSessionSet(_ context.Context, c *conn, f *Frame) (any, error) {
	o, err := params[SessionOverride](f)
	if err != nil {
		return nil, err
	}
	return c.srv.sessionSet(o, c.label())
}

func handleSessionClear(_ context.Context, c *conn, f *Frame) (any, error) {
	p, err := params[AgentParams](f)
	if err != nil {
		return nil, err
	}
	if p.AgentID == "" {
		return nil, badRequest("agentId: empty")
	}
	c.srv.sessionClear(p.AgentID)
	return struct{}{}, nil
}

func handleSessionList(_ context.Context, c *conn, f *Frame) (any, error) {
	p, err := params[ListParams](f)
	if err != nil {
		return nil, err
	}
	raws, next, err := page(c.srv.sessionList(p.Cursor),
		func(o SessionOverride) string { return o.AgentID },
		func(o SessionOverride) ([]byte, error) { return marshal(o) })
	if err != nil {
		return nil, err
	}
	return sessionPage{Sessions: nonNil(raws), Next: next}, nil
}

func handleStatus(_ context.Context, c *conn, _ *Frame) (any, error) {
	return c.srv.status(), nil
}

// broadcastLocked pushes an event to every subscriber. s.mu must be held,
// which orders events the same for everyone.
func (s *Server) broadcastLocked(name string, payload any) {
	if len(s.subs) == 0 {
		return
	}
	raw, err := eventPayload(name, payload)
	if err != nil {
		s.log.Error("encode event", "event", name, "err", err)
		return
	}
	b, err := marshal(Frame{Event: name, Payload: raw})
	if err == nil && !fits(len(b)) {
		err = fmt.Errorf("%d bytes, over the line limit", len(b))
	}
	if err != nil {
		s.log.Error("encode event", "event", name, "err", err)
		return
	}
	digest := sha256.Sum256(b)
	for c := range s.subs {
		c.sendFrame(b, &digest)
	}
}
