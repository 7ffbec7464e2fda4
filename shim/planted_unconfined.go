package shim

import (
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/sandbox"
)

// plantedAsks makes a command ask that would run planted code unconfined
// without a person: after a confined command changed a hook or git's
// configuration here, a command the user's own policy lets through
// unproven (an allowlisted `git push`) runs outside the sandbox, and git
// runs the planted pre-push hook there — which is what the watch is for.
// A command that stays inside the sandbox (a safe one, confined) still
// runs, saying so on one line: what it runs is confined too.
func (s *session) plantedAsks(res policy.Result, grants *sandbox.Grants) policy.Result {
	if len(s.planted) == 0 || grants != nil || res.Decision != policy.Allow {
		return res
	}
	res.Decision = policy.AskHuman
	res.Risk = res.Risk.Max(policy.NeedsReview)
	return res
}
