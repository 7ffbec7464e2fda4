package hub

import (
	"fmt"
	"time"
)

// Default limits; see Limits.
const (
	defaultMaxConns     = 4096
	defaultOwnerConns   = 512
	defaultMaxPending   = 10_000
	defaultOwnerPending = 2_000
	defaultHelloTimeout = 10 * time.Second
	// defaultIdleTimeout is how long a connection with nothing outstanding
	// may stay silent; socket.idleTimeoutMs changes it.
	defaultIdleTimeout = 5 * time.Minute
	// maxRefusing bounds the connections the hub holds only to tell them
	// why they are refused; past it they are closed without a word.
	maxRefusing = 64
)

// Limits are the hub's resource limits. A zero field takes its default;
// tests set small ones to reach them cheaply.
//
// Connections and pending approvals are each a budget shared fairly: the
// hub owner's uid (its approvers and its own shims) may use all of it,
// including a reserve nobody else may touch; every uid in
// socket.requesterUids gets an equal share of the rest. So a requester uid
// that floods the hub runs into its own share and leaves room for the
// owner's approvers and for the other requester uids.
type Limits struct {
	// Conns bounds open connections of all uids (default 4,096).
	Conns int
	// OwnerConns is the part of Conns only the owner's uid may use
	// (default 512).
	OwnerConns int
	// Pending bounds pending approvals of all uids (default 10,000).
	Pending int
	// OwnerPending is the part of Pending only the owner's uid may use
	// (default 2,000).
	OwnerPending int
	// HelloTimeout is how long a new connection has to say hello
	// (default 10 s).
	HelloTimeout time.Duration
	// IdleTimeout, when set, overrides socket.idleTimeoutMs: how long a
	// connection with nothing outstanding may send nothing (default 5 min).
	IdleTimeout time.Duration
}

// withDefaults fills in the zero fields, and keeps each reserve below its
// budget so that requester uids always get some room.
func (l Limits) withDefaults() Limits {
	if l.Conns <= 0 {
		l.Conns = defaultMaxConns
	}
	if l.OwnerConns <= 0 {
		l.OwnerConns = defaultOwnerConns
	}
	if l.Pending <= 0 {
		l.Pending = defaultMaxPending
	}
	if l.OwnerPending <= 0 {
		l.OwnerPending = defaultOwnerPending
	}
	l.OwnerConns = min(l.OwnerConns, l.Conns-1)
	l.OwnerPending = min(l.OwnerPending, l.Pending-1)
	if l.HelloTimeout <= 0 {
		l.HelloTimeout = defaultHelloTimeout
	}
	return l
}

// shareVerdict is what shares.take decided.
type shareVerdict int

const (
	shareGranted shareVerdict = iota
	// shareOwn: the uid holds its whole share already.
	shareOwn
	// shareFull: the budget (or the part open to requester uids) is used up.
	shareFull
)

// shares counts what each uid holds of one budget (connections, or pending
// approvals) and decides whether it may take one more. Guarded by the
// server's mutex.
type shares struct {
	total   int // the whole budget
	reserve int // the part only the owner may use
	owner   int // the owner's uid
	held    map[int]int
	all     int // held by every uid
	others  int // held by uids other than the owner
}

func newShares(total, reserve, owner int) shares {
	return shares{total: total, reserve: reserve, owner: owner, held: map[int]int{}}
}

// share is what one requester uid may hold when requesters uids are
// listed: an equal part of what the owner's reserve leaves.
func (s *shares) share(requesters int) int {
	return max(1, (s.total-s.reserve)/max(1, requesters))
}

// take counts one more for uid if it has room.
func (s *shares) take(uid, requesters int) shareVerdict {
	switch {
	case s.all >= s.total:
		return shareFull
	case uid == s.owner:
	case s.held[uid] >= s.share(requesters):
		return shareOwn
	case s.others >= s.total-s.reserve:
		return shareFull
	}
	s.held[uid]++
	s.all++
	if uid != s.owner {
		s.others++
	}
	return shareGranted
}

// give returns one that uid held.
func (s *shares) give(uid int) {
	n, ok := s.held[uid]
	if !ok {
		return // never taken: nothing to give back
	}
	if n <= 1 {
		delete(s.held, uid)
	} else {
		s.held[uid] = n - 1
	}
	s.all--
	if uid != s.owner {
		s.others--
	}
}

// connRefusal says why a connection of uid is refused, for the BUSY error.
func (s *shares) connRefusal(v shareVerdict, uid, requesters int) string {
	if v == shareOwn {
		return fmt.Sprintf("uid %d already has %d connections open, its share of this hub; close some and try again", uid, s.share(requesters))
	}
	return fmt.Sprintf("the hub has no room for another connection of uid %d (%d open); try again later", uid, s.all)
}

// pendingRefusal says why an approval of uid is refused, for the QUOTA
// error.
func (s *shares) pendingRefusal(v shareVerdict, uid, requesters int) string {
	if v == shareOwn {
		return fmt.Sprintf("uid %d already has %d approvals pending, its share of this hub; this request is refused (not run)", uid, s.share(requesters))
	}
	return fmt.Sprintf("the hub holds %d pending approvals, all it has room for uid %d; this request is refused (not run)", s.all, uid)
}

// idleTimeout is how long a connection with nothing outstanding may stay
// silent: Limits.IdleTimeout, else socket.idleTimeoutMs, else the default.
func (s *Server) idleTimeout(auth authConfig) time.Duration {
	switch {
	case s.limits.IdleTimeout > 0:
		return s.limits.IdleTimeout
	case auth.idleTimeout > 0:
		return auth.idleTimeout
	}
	return defaultIdleTimeout
}
