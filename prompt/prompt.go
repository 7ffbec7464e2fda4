package prompt

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Request is one approval question. Its fields are plain strings so that this
// package does not depend on the policy package.
type Request struct {
	// ID correlates the answer with logs and, later, the hub; it is not shown.
	ID string
	// Command is the shell source exactly as it will run.
	Command string
	// Via names the program driving the agent (e.g. "Claude Code"); may be empty.
	Via string
	// Cwd is the directory the command will run in.
	Cwd string
	// Agent is the agent's name in the policy.
	Agent string
	// Risk is the policy's grade: "safe", "needs-review" or "dangerous".
	Risk string
	// Reasons explain the grade, one short line each.
	Reasons []string
	// Timeout bounds the wait for an answer once the question is shown;
	// zero or negative waits until an answer arrives or ctx ends.
	Timeout time.Duration
	// Proposals are, per segment being approved, its reasons and what
	// "allow always" would save; channels that can show them do.
	Proposals []Proposal
}

// Proposal is one segment being approved and the allowlist patterns
// "allow always" may save for it, narrowest first: the person chooses one
// (Answer.Patterns); without a choice the first is saved.
type Proposal struct {
	Text     string
	Reasons  []string
	Patterns []string
}

// Decision is the human's answer.
type Decision string

// Decision values.
const (
	AllowOnce   Decision = "allow-once"
	AllowAlways Decision = "allow-always"
	Deny        Decision = "deny"
)

// Answer is what an Asker reports.
type Answer struct {
	// Decision is what the human chose; Deny when TimedOut.
	Decision Decision
	// By names the channel that answered: "tty", "hub", ...
	By string
	// TimedOut is set when nobody answered within Request.Timeout; the
	// caller then applies askFallback instead of Decision.
	TimedOut bool
	// Message is the approver's note with a Deny, for the agent.
	Message string
	// Patterns are, with AllowAlways, the scopes the person chose: one per
	// Request.Proposals entry, each one of its Patterns or "" (save nothing
	// for that segment). Nil means no choice was made: the caller saves
	// each proposal's first (narrowest) pattern.
	Patterns []string
	// Approver says who answered through the hub; nil for the terminal
	// (the caller knows its own user).
	Approver *Approver
}

// KindTTY is Approver.Kind for the shim's own terminal prompt.
const KindTTY = "tty"

// Approver is who answered a question, as the hub vouches for it.
type Approver struct {
	Uid  int    `json:"uid"`
	User string `json:"user,omitempty"`
	// Kind is the surface: "tui" (execgate approve), "web", "cli"
	// (execgate resolve) or "tty" (the shim's own prompt).
	Kind string `json:"kind,omitempty"`
	Host string `json:"host,omitempty"`
	Name string `json:"name,omitempty"`
}

// Label is how a person reads who decided: "ada (web)", falling back to
// the uid and the client's name.
func (a *Approver) Label() string {
	if a == nil {
		return ""
	}
	who := a.User
	if who == "" {
		who = fmt.Sprintf("uid %d", a.Uid)
	}
	kind := a.Kind
	if kind == "" {
		kind = a.Name
	}
	if kind == "" {
		return who
	}
	return who + " (" + kind + ")"
}

// ErrUnavailable reports that a channel cannot ask anyone at all (no
// terminal, no hub), so the caller may try the next channel or fall back at
// once. Errors from an Asker that do not wrap it mean the channel failed
// while asking; callers must then fail closed.
var ErrUnavailable = errors.New("prompt: no one to ask")

// Asker asks a human about one Request.
//
// A timeout is not an error: Ask returns an Answer with TimedOut set. An
// error wrapping ErrUnavailable means nobody could be asked; any other error
// means asking failed, and must never be read as permission.
type Asker interface {
	Ask(ctx context.Context, r Request) (Answer, error)
}

// Chain is an Asker that tries its members in order (the hub before the
// terminal). The first member that answers, or times out, decides; a member
// that errs is skipped, except that a done ctx ends the chain.
//
// If every member is unavailable, Ask returns an error wrapping
// ErrUnavailable. If any member failed otherwise and none answered, the
// error does not wrap ErrUnavailable, so that a broken channel is never
// mistaken for an absent one.
type Chain []Asker

// Ask implements Asker.
func (c Chain) Ask(ctx context.Context, r Request) (Answer, error) {
	var unavailable, failed []error
	for _, a := range c {
		ans, err := a.Ask(ctx, r)
		if err == nil {
			return ans, nil
		}
		if ctx.Err() != nil {
			return Answer{}, err
		}
		if errors.Is(err, ErrUnavailable) {
			unavailable = append(unavailable, err)
		} else {
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		return Answer{}, errors.Join(failed...)
	}
	if len(unavailable) == 0 {
		return Answer{}, ErrUnavailable
	}
	return Answer{}, errors.Join(unavailable...)
}
