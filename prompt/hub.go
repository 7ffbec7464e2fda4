package prompt

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/internal/display"
)

// maxHubTimeoutMs is what a Request without a timeout asks the hub for: the
// longest wait it grants.
const maxHubTimeoutMs = 3_600_000

// Hub is an Asker that puts the question to the approvers subscribed to a
// running hub daemon, and waits for the first of them to answer.
//
// It reports prompt.ErrUnavailable when there is no one to ask: a nil
// Client, or no approver connected when the request arrived (the hub says
// so at once), so that a Chain moves on to the terminal. Any other failure
// (the hub died or dropped the connection mid-request, an error answer, a
// decision this version does not know) is a plain error: the caller must
// then fail closed, never run the command because the hub failed.
//
// When ctx ends while waiting, Ask returns ctx's error and the request is
// withdrawn from the hub (Client.Request sends exec.approval.withdraw), so
// approvers see it go instead of answering a question nobody waits on.
type Hub struct {
	// Client is a connection made with role requester; it may be shared
	// with other goroutines (reports, session look-ups).
	Client *hub.Client
	// Refused, with a nil Client, is why a running hub refused the
	// connection for want of room (hub.ErrCodeBusy), or why whatever
	// listens on its socket was refused (hub.ErrNotAuthentic). Ask then
	// fails with it instead of ErrUnavailable: something is there, so the
	// refusal is a failure (the command is not run), not "nobody to ask",
	// which askFallback may allow.
	Refused error
	// SessionKey and Segments are passed through to approvers when set.
	SessionKey string
	Segments   []string
	// Status, when set, is a terminal the person who started the command
	// watches (never an agent's): it is told "waiting for an approver (N
	// connected)…" while the hub decides and who decided afterwards, so
	// that the wait is not a blank screen.
	Status io.Writer
}

// hubDecision maps one of the hub's decisions to ours; ok is false for
// any other word, which the caller treats as no answer. A switch rather
// than a map: a package-level map is built at start-up of every shim
// process.
func hubDecision(d string) (_ Decision, ok bool) {
	switch d {
	case hub.AllowOnce:
		return AllowOnce, true
	case hub.AllowAlways:
		return AllowAlways, true
	case hub.Deny:
		return Deny, true
	}
	return "", false
}

// Ask implements Asker.
func (h Hub) Ask(ctx context.Context, r Request) (Answer, error) {
	if h.Client == nil && errors.Is(h.Refused, hub.ErrNotAuthentic) {
		// Not the hub at all: say so, not that the hub refused.
		return Answer{}, h.Refused
	}
	if h.Client == nil && h.Refused != nil {
		return Answer{}, fmt.Errorf("the hub refused the connection: %w", h.Refused)
	}
	if h.Client == nil {
		return Answer{}, fmt.Errorf("hub: no connection: %w", ErrUnavailable)
	}
	timeoutMs := maxHubTimeoutMs
	if r.Timeout > 0 {
		timeoutMs = int(min(r.Timeout.Milliseconds(), maxHubTimeoutMs))
		timeoutMs = max(timeoutMs, 1)
	}
	h.waiting(ctx)
	hubAns, err := h.Client.Request(ctx, hub.ApprovalRequest{
		ID:         r.ID,
		Command:    r.Command,
		Via:        r.Via,
		Cwd:        r.Cwd,
		AgentID:    r.Agent,
		SessionKey: h.SessionKey,
		Risk:       r.Risk,
		Reasons:    r.Reasons,
		Segments:   h.Segments,
		Proposals:  hubProposals(r.Proposals),
		TimeoutMs:  timeoutMs,
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return Answer{}, ctx.Err()
	case err != nil:
		return Answer{}, fmt.Errorf("ask the hub: %w", err)
	}
	switch hubAns.Outcome {
	case hub.OutcomeNoApprover:
		return Answer{}, fmt.Errorf("hub: no approver connected: %w", ErrUnavailable)
	case hub.OutcomeExpired:
		return Answer{Decision: Deny, By: "hub", TimedOut: true}, nil
	case hub.OutcomeDecided:
		if hubAns.Decision != nil {
			if d, ok := hubDecision(*hubAns.Decision); ok {
				ans := Answer{Decision: d, By: "hub", Approver: approverOf(hubAns.Approver)}
				switch d {
				case Deny:
					ans.Message = hubAns.Message
				case AllowAlways:
					ans.Patterns = hubAns.Patterns
				}
				h.decided(ans)
				return ans, nil
			}
			return Answer{}, fmt.Errorf("hub: unknown decision %q", *hubAns.Decision)
		}
		return Answer{}, errors.New("hub: decided without a decision")
	}
	return Answer{}, fmt.Errorf("hub: unexpected outcome %q", hubAns.Outcome)
}

// waiting tells the Status terminal that the hub is asking, and how many
// approvers could answer; nothing when none is connected (the hub then
// says so at once and the next channel asks).
func (h Hub) waiting(ctx context.Context) {
	if h.Status == nil {
		return
	}
	st, err := h.Client.Status(ctx)
	if err != nil || st.Approvers == 0 {
		return
	}
	fmt.Fprintf(h.Status, "execgate: waiting for an approver (%d connected)…\n", st.Approvers)
}

// decided tells the Status terminal who answered: "allowed once by ada
// (web)".
func (h Hub) decided(ans Answer) {
	if h.Status == nil {
		return
	}
	who := ans.Approver.Label()
	if who == "" {
		who = "the hub"
	}
	fmt.Fprintf(h.Status, "execgate: %s by %s\n", outcome(ans.Decision), display.Escape(who))
}

// approverOf copies the hub's word on who answered.
func approverOf(a *hub.ApproverInfo) *Approver {
	if a == nil {
		return nil
	}
	return &Approver{Uid: a.Uid, User: a.User, Kind: a.Kind, Host: a.Host, Name: a.Name}
}

// hubProposals puts proposals on the wire.
func hubProposals(ps []Proposal) []hub.SegmentProposal {
	if len(ps) == 0 {
		return nil
	}
	out := make([]hub.SegmentProposal, len(ps))
	for i, p := range ps {
		out[i] = hub.SegmentProposal{Text: p.Text, Reasons: p.Reasons, Patterns: p.Patterns}
	}
	return out
}
