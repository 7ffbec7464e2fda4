package config

import (
	"encoding/json"
	"slices"
	"strconv"
)

// maxUid is the largest valid user id: (uid_t)-1 means "no user" to the
// kernel and never names one.
const maxUid = 1<<32 - 2

// parseRequesterUids reads socket.requesterUids: the users, other than the
// hub's own, whose shims may ask the hub for approvals. The kernel vouches
// for a connecting process's uid (SO_PEERCRED), so these users need no token
// (they cannot read the owner's configuration to get it) and may only ever
// be requesters. Running agents as such a separate user is the only
// arrangement in which an agent cannot approve its own commands.
//
// An entry that is not a whole number in [0, 4294967294] is dropped with a
// warning, which can only narrow who may connect; so is a value that is not
// an array.
func (p *parser) parseRequesterUids(v any) []int {
	const path = "socket.requesterUids"
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		p.warnf(path, "want an array of user ids, got %s; ignoring it", describe(v))
		return nil
	}
	var uids []int
	for i, it := range items {
		n, isNum := it.(json.Number)
		uid, err := strconv.Atoi(string(n))
		if !isNum || err != nil || uid < 0 || int64(uid) > maxUid {
			p.warnf(path+"["+strconv.Itoa(i)+"]", "want a user id (a whole number from 0 to %d), got %s; ignoring it",
				int64(maxUid), describe(it))
			continue
		}
		if !slices.Contains(uids, uid) {
			uids = append(uids, uid)
		}
	}
	return uids
}

// Bounds of socket.idleTimeoutMs: a second to a day.
const (
	minIdleTimeoutMs = 1_000
	maxIdleTimeoutMs = 86_400_000
)

// parseIdleTimeout reads socket.idleTimeoutMs: how long the hub keeps a
// connection that sends nothing while nothing of it is outstanding. A value
// that is not a whole number of milliseconds in bounds is dropped with a
// warning (0: the hub's default), since a typo should neither close every
// connection at once nor keep idle ones forever.
func (p *parser) parseIdleTimeout(v any) int {
	const path = "socket.idleTimeoutMs"
	if v == nil {
		return 0
	}
	n, isNum := v.(json.Number)
	ms, err := strconv.Atoi(string(n))
	if !isNum || err != nil || ms < minIdleTimeoutMs || ms > maxIdleTimeoutMs {
		p.warnf(path, "want a whole number of milliseconds from %d to %d, got %s; using the hub's default",
			minIdleTimeoutMs, maxIdleTimeoutMs, describe(v))
		return 0
	}
	return ms
}
