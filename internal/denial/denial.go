// Package denial is how execgate refuses a command: one error type whose
// text is the single line "execgate: denied: REASON" that the shim prints,
// the hooks send to the agent and the audit log records.
//
// Everything that refuses builds its message here, so the prefix agents and
// people learn to read, the one-line rule (a reason quoting a command must
// not forge lines of output) and the length bound are the same everywhere.
package denial

import (
	"errors"
	"fmt"

	"github.com/execgate/execgate/internal/display"
)

// Prefix starts every refusal line.
const Prefix = "execgate: denied: "

// maxReason bounds a reason: enough for a rule, a pattern and the command
// part it names, short enough to stay one line an agent reads whole.
const maxReason = 600

// Error is a refusal. Its Error text is the one line to show.
type Error struct {
	// Reason says why, in words for the person or agent that ran the
	// command; it may quote the command and is made safe when shown.
	Reason string
	// Hint, when set, says how to proceed, as direnv's "run `direnv
	// allow`" does: which command approves or allows it.
	Hint string
}

// maxHint bounds a hint: one command with a pattern.
const maxHint = 300

// New returns the refusal for reason.
func New(reason string) *Error { return &Error{Reason: reason} }

// Errorf returns the refusal whose reason is formatted as by fmt.Sprintf.
func Errorf(format string, args ...any) *Error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// Error returns "execgate: denied: REASON" or "execgate: denied: REASON —
// HINT", each part on one line, escaped and bounded (display.Line), so that
// a long reason never cuts the hint off.
func (e *Error) Error() string {
	line := Prefix + display.Line(e.Reason, maxReason)
	if e.Hint != "" {
		line += " — " + display.Line(e.Hint, maxHint)
	}
	return line
}

// WithHint returns e with hint as how to proceed.
func (e *Error) WithHint(hint string) *Error {
	c := *e
	c.Hint = hint
	return &c
}

// Line returns the refusal line for reason: New(reason).Error().
func Line(reason string) string { return New(reason).Error() }

// As reports whether err is, or wraps, a refusal.
func As(err error) (*Error, bool) {
	var d *Error
	ok := errors.As(err, &d)
	return d, ok
}
