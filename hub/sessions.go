package hub

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/execgate/execgate/config"
)

// maxSessions bounds the overrides held; maxAgentLen an agent id.
const (
	maxSessions = 1024
	maxAgentLen = 256
)

// sessionEntry is a live override and the timer that ends it.
type sessionEntry struct {
	o     SessionOverride
	timer *time.Timer // nil when it never expires
}

// sessionFields validates an override's enum fields; a table so that
// every field gets the same treatment.
var sessionFields = []struct {
	name  string
	get   func(*SessionOverride) string
	valid func(string) bool
}{
	{"security", func(o *SessionOverride) string { return o.Security }, func(v string) bool { return config.Security(v).Valid() }},
	{"ask", func(o *SessionOverride) string { return o.Ask }, func(v string) bool { return config.Ask(v).Valid() }},
	{"askFallback", func(o *SessionOverride) string { return o.AskFallback }, func(v string) bool { return config.Security(v).Valid() }},
}

// validateSession checks o and normalises an elevation to the settings
// it stands for.
func validateSession(o *SessionOverride, now time.Time) error {
	if o.AgentID == "" || len(o.AgentID) > maxAgentLen {
		return badRequest(fmt.Sprintf("agentId: want 1 to %d bytes", maxAgentLen))
	}
	for _, f := range sessionFields {
		if v := f.get(o); v != "" && !f.valid(v) {
			return badRequest(fmt.Sprintf("%s: unknown value %q", f.name, truncate(v)))
		}
	}
	if o.Elevated {
		if o.Security != "" && o.Security != string(config.SecurityFull) || o.Ask != "" && o.Ask != string(config.AskOff) {
			return badRequest("elevated means security=full and ask=off; drop the other values")
		}
		o.Security, o.Ask = string(config.SecurityFull), string(config.AskOff)
	}
	if o.Security == "" && o.Ask == "" && o.AskFallback == "" {
		return badRequest("nothing to set (use session.clear to remove an override)")
	}
	if o.ExpiresAtMs < 0 || o.ExpiresAtMs != 0 && o.ExpiresAtMs <= now.UnixMilli() {
		return badRequest("expiresAtMs: already past")
	}
	return nil
}

func (s *Server) sessionSet(o SessionOverride, by string) (SessionOverride, error) {
	now := s.now()
	if err := validateSession(&o, now); err != nil {
		return SessionOverride{}, err
	}
	if err := managedRefusal(o); err != nil {
		return SessionOverride{}, err
	}
	o.SetBy = by
	s.mu.Lock()
	defer s.mu.Unlock()
	old, replacing := s.sessions[o.AgentID]
	if !replacing && len(s.sessions) >= maxSessions {
		return SessionOverride{}, errBody(ErrCodeRateLimit, fmt.Sprintf("%d session overrides already; clear some", maxSessions))
	}
	if replacing && old.timer != nil {
		old.timer.Stop()
	}
	e := &sessionEntry{o: o}
	if o.ExpiresAtMs != 0 {
		e.timer = time.AfterFunc(time.UnixMilli(o.ExpiresAtMs).Sub(now), func() { s.sessionExpire(e) })
	}
	s.sessions[o.AgentID] = e
	s.broadcastLocked(EventSession, o)
	return o, nil
}

func (s *Server) sessionExpire(e *sessionEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[e.o.AgentID] == e {
		s.sessionRemoveLocked(e.o.AgentID)
	}
}

// sessionRemoveLocked drops an override; subscribers get a session.changed
// with only the agent id, meaning "none".
func (s *Server) sessionRemoveLocked(agent string) {
	if e, ok := s.sessions[agent]; ok {
		if e.timer != nil {
			e.timer.Stop()
		}
		delete(s.sessions, agent)
		s.broadcastLocked(EventSession, SessionOverride{AgentID: agent})
	}
}

func (s *Server) sessionClear(agent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessionRemoveLocked(agent)
}

// live reports whether e has not expired by now (its timer may lag).
func (e *sessionEntry) live(now time.Time) bool {
	return e.o.ExpiresAtMs == 0 || e.o.ExpiresAtMs > now.UnixMilli()
}

func (s *Server) sessionGet(agent string) SessionOverride {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.sessions[agent]; ok && e.live(now) {
		return e.o
	}
	return SessionOverride{}
}

// sessionList returns the live overrides of agents after the agent id
// after, by agent id.
func (s *Server) sessionList(after string) []SessionOverride {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []SessionOverride{}
	for _, e := range s.sessions {
		if e.live(now) && e.o.AgentID > after {
			out = append(out, e.o)
		}
	}
	slices.SortFunc(out, func(a, b SessionOverride) int { return cmp.Compare(a.AgentID, b.AgentID) })
	return out
}
