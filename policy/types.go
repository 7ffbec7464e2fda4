package policy

import (
	"fmt"
)

// Risk grades a command or segment. The zero value is Safe; combining takes
// the maximum.
type Risk int

// Risk values, in increasing order.
const (
	Safe Risk = iota
	NeedsReview
	Dangerous
)

var riskNames = [...]string{"safe", "needs-review", "dangerous"}

func (r Risk) String() string {
	if r >= Safe && r <= Dangerous {
		return riskNames[r]
	}
	return fmt.Sprintf("Risk(%d)", int(r))
}

// ParseRisk is the inverse of Risk.String.
func ParseRisk(s string) (Risk, error) {
	for i, n := range riskNames {
		if n == s {
			return Risk(i), nil
		}
	}
	return Dangerous, fmt.Errorf("unknown risk %q (want safe, needs-review or dangerous)", s)
}

// MarshalText encodes the risk as its name.
func (r Risk) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText decodes a risk name.
func (r *Risk) UnmarshalText(b []byte) error {
	v, err := ParseRisk(string(b))
	*r = v
	return err
}

// Max returns the riskier of r and o.
func (r Risk) Max(o Risk) Risk {
	if o > r {
		return o
	}
	return r
}

// Decision is what happens to a command: it runs, a human is asked, or it is
// refused.
type Decision string

// Decision values.
const (
	Allow    Decision = "allow"
	AskHuman Decision = "ask"
	Deny     Decision = "deny"
)
