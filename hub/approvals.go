package hub

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Bounds on ApprovalRequest.TimeoutMs.
const (
	minTimeout     = time.Second
	maxTimeout     = time.Hour
	defaultTimeout = time.Minute // when TimeoutMs is 0 or less
)

// minPrefix is the shortest id prefix resolve and get accept.
const minPrefix = 4

// pending is an approval waiting for a decision.
type pending struct {
	a       Approval
	seq     uint64 // creation order, for list
	req     *conn  // the requester
	frameID string // its request frame, to answer
	timer   *time.Timer
}

// How an approval left the pending set.
type settlement int

const (
	settleDecided settlement = iota
	settleExpired
	settleWithdrawn
)

// settleEvents maps a settlement to the event approvers get.
var settleEvents = [...]string{
	settleDecided:   EventResolved,
	settleExpired:   EventExpired,
	settleWithdrawn: EventWithdrawn,
}

// settleOutcomes maps a settlement to the requester's ApprovalAnswer.Outcome.
var settleOutcomes = [...]string{
	settleDecided:   OutcomeDecided,
	settleExpired:   OutcomeExpired,
	settleWithdrawn: OutcomeWithdrawn,
}

func clampTimeout(ms int) time.Duration {
	if ms <= 0 {
		return defaultTimeout
	}
	return min(max(time.Duration(ms)*time.Millisecond, minTimeout), maxTimeout)
}

// request registers an approval for requester c and answers frameID when
// it settles; with no approver subscribed it answers at once.
func (s *Server) request(c *conn, frameID string, r ApprovalRequest) (any, error) {
	now := s.now()
	timeout := clampTimeout(r.TimeoutMs)
	r.TimeoutMs = int(timeout / time.Millisecond)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errBody(ErrCodeInternal, "the hub is shutting down")
	}
	if r.ID != "" {
		if _, dup := s.pending[r.ID]; dup {
			return nil, errBody(ErrCodeConflict, fmt.Sprintf("approval %s is already pending", r.ID))
		}
	}
	if s.approversLocked() == 0 {
		id := r.ID
		if id == "" {
			id = s.newIDLocked()
		}
		return ApprovalAnswer{ID: id, Outcome: OutcomeNoApprover, CreatedAtMs: now.UnixMilli(), ExpiresAtMs: now.UnixMilli()}, nil
	}
	if v := s.pendingShares.take(c.peer.uid, s.requesters); v != shareGranted {
		s.log.Warn("refusing approval", "uid", c.peer.uid, "pid", c.peer.pid, "pending", s.pendingShares.held[c.peer.uid])
		return nil, errBody(ErrCodeQuota, s.pendingShares.pendingRefusal(v, c.peer.uid, s.requesters))
	}
	if r.ID == "" {
		r.ID = s.newIDLocked()
	}
	a := Approval{ApprovalRequest: r, CreatedAtMs: now.UnixMilli(), ExpiresAtMs: now.Add(timeout).UnixMilli(),
		RequesterPid: c.peer.pid, RequesterUid: c.peer.uid}
	if err := checkApprovalSize(a); err != nil {
		s.pendingShares.give(c.peer.uid)
		return nil, err
	}
	s.seq++
	p := &pending{
		a:       a,
		seq:     s.seq,
		req:     c,
		frameID: frameID,
	}
	s.pending[r.ID] = p
	c.pending[r.ID] = p
	p.timer = time.AfterFunc(timeout, func() { s.expire(p) })
	s.broadcastLocked(EventRequested, p.a)
	return nil, errDeferred
}

// newIDLocked returns a random id no pending approval has: 16 hex
// characters, so that a short prefix is almost always unique.
func (s *Server) newIDLocked() string {
	for {
		id := randomHex(8)
		if _, dup := s.pending[id]; !dup {
			return id
		}
	}
}

func (s *Server) expire(p *pending) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[p.a.ID] == p {
		s.settleLocked(p, settleExpired, "", "")
	}
}

// settleLocked removes p from the pending set, answers its requester
// (unless it withdrew) and tells the subscribers.
func (s *Server) settleLocked(p *pending, how settlement, decision, by string) {
	s.settleAsLocked(p, how, decision, by, nil)
}

// settleAsLocked is settleLocked with who decided.
func (s *Server) settleAsLocked(p *pending, how settlement, decision, by string, who *ApproverInfo) {
	delete(s.pending, p.a.ID)
	delete(p.req.pending, p.a.ID)
	s.pendingShares.give(p.a.RequesterUid)
	p.timer.Stop()
	p.a.Decision, p.a.ResolvedBy, p.a.Approver = decision, by, who
	ans := ApprovalAnswer{
		Patterns:    p.a.Patterns,
		Approver:    who,
		ID:          p.a.ID,
		Outcome:     settleOutcomes[how],
		CreatedAtMs: p.a.CreatedAtMs,
		ExpiresAtMs: p.a.ExpiresAtMs,
		ResolvedBy:  by,
		Message:     p.a.Message,
	}
	if how == settleDecided {
		ans.Decision = &decision
	}
	p.req.reply(p.frameID, ans)
	s.broadcastLocked(settleEvents[how], p.a)
}

// lookupLocked finds a pending approval by id or unique prefix.
func (s *Server) lookupLocked(id string) (*pending, error) {
	if p, ok := s.pending[id]; ok {
		return p, nil
	}
	if len(id) < minPrefix {
		return nil, errBody(ErrCodeNotFound, fmt.Sprintf("no pending approval %q (a prefix needs at least %d characters)", truncate(id), minPrefix))
	}
	var found []*pending
	for k, p := range s.pending {
		if strings.HasPrefix(k, id) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return nil, errBody(ErrCodeNotFound, fmt.Sprintf("no pending approval %q (unknown, expired or already resolved)", truncate(id)))
	case 1:
		return found[0], nil
	}
	return nil, badRequest(fmt.Sprintf("%q matches %d pending approvals; give more of the id", truncate(id), len(found)))
}

// resolve applies approver c's decision (its decision and message already
// validated); the first resolution wins, later ones find nothing. The
// chosen patterns must be among the approval's proposals.
func (s *Server) resolve(c *conn, r ResolveParams) (Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.lookupLocked(r.ID)
	if err != nil {
		return Approval{}, err
	}
	if err := checkChosen(p.a.Proposals, r); err != nil {
		return Approval{}, err
	}
	p.a.Message, p.a.Patterns = r.Message, r.Patterns
	s.settleAsLocked(p, settleDecided, r.Decision, c.label(), c.approver())
	return p.a, nil
}

// checkChosen refuses allow-always scopes the engine did not propose:
// patterns only with allow-always, one per proposal, each one of that
// proposal's patterns or "" (nothing saved for it). An approver can narrow
// what "always" saves, never widen it.
func checkChosen(proposals []SegmentProposal, r ResolveParams) error {
	if len(r.Patterns) == 0 {
		return nil
	}
	if r.Decision != AllowAlways {
		return badRequest("patterns: only allow-always saves patterns")
	}
	if len(r.Patterns) != len(proposals) {
		return badRequest(fmt.Sprintf("patterns: %d given, the request has %d proposals (one each, \"\" for none)", len(r.Patterns), len(proposals)))
	}
	for i, chosen := range r.Patterns {
		if chosen != "" && !slices.Contains(proposals[i].Patterns, chosen) {
			return badRequest(fmt.Sprintf("patterns[%d]: %q was not proposed for %q; choose one of %q", i, truncate(chosen), truncate(proposals[i].Text), proposals[i].Patterns))
		}
	}
	return nil
}

// withdraw lets a requester give up on one of its own approvals.
func (s *Server) withdraw(c *conn, id string) (Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := c.pending[id]
	if !ok {
		return Approval{}, errBody(ErrCodeNotFound, fmt.Sprintf("no pending approval %q of yours", truncate(id)))
	}
	s.settleLocked(p, settleWithdrawn, "", "")
	return p.a, nil
}

// seqApproval is a pending approval and its place in creation order.
type seqApproval struct {
	seq uint64
	a   Approval
}

// list returns the pending approvals created after the one numbered
// after, oldest first.
func (s *Server) list(after uint64) []seqApproval {
	s.mu.Lock()
	out := make([]seqApproval, 0, len(s.pending))
	for _, p := range s.pending {
		if p.seq > after {
			out = append(out, seqApproval{p.seq, p.a})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b seqApproval) int { return cmp.Compare(a.seq, b.seq) })
	return out
}
