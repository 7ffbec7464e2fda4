package config

import "fmt"

// Override is a temporary change to an agent's policy that is not written
// to the configuration: a session override an approver set on the hub, or
// what the agent's own environment asks for. Zero fields change nothing.
type Override struct {
	Security    Security
	Ask         Ask
	AskFallback Security
}

// Environment variables an agent (or whoever starts it) may set to tighten
// its own policy for the commands it runs.
const (
	SecurityEnv    = "EXECGATE_SECURITY"
	AskEnv         = "EXECGATE_ASK"
	AskFallbackEnv = "EXECGATE_ASK_FALLBACK"
)

// Elevated is the override behind `execgate session elevate`: everything
// runs without asking, except what the denylist refuses.
var Elevated = Override{Security: SecurityFull, Ask: AskOff}

// Loosened applies an override that may loosen the policy: the hub holds
// only overrides set by approvers, the people the policy answers to. The
// managed floor p was resolved under still holds: nobody but the
// administrator loosens past it.
func (p Policy) Loosened(o Override) Policy {
	return p.floor.Hold(p.loosened(o))
}

func (p Policy) loosened(o Override) Policy {
	if o.Security.Valid() {
		p.Security = o.Security
	}
	if o.Ask.Valid() {
		p.Ask = o.Ask
	}
	if o.AskFallback.Valid() {
		p.AskFallback = o.AskFallback
	}
	return p
}

// Tightened applies an override that may only tighten the policy, field
// by field: the stricter security and askFallback win, and ask changes
// only to "always" (every command asked), the one value that never lets
// anything more run without a person. This is how an agent's environment
// applies: whatever it sets, it cannot gain from it.
func (p Policy) Tightened(o Override) Policy {
	if o.Security.Valid() && o.Security.rank() < p.Security.rank() {
		p.Security = o.Security
	}
	if o.AskFallback.Valid() && o.AskFallback.rank() < p.AskFallback.rank() {
		p.AskFallback = o.AskFallback
	}
	if o.Ask == AskAlways {
		p.Ask = AskAlways
	}
	return p
}

// EnvOverride reads the tightening override from the environment. A value
// that is not valid stands for the strictest one of its variable (deny,
// always), with a warning: whoever set EXECGATE_SECURITY=dney meant to
// tighten, and a typo must not leave the looser policy in force.
func EnvOverride(getenv func(string) string) (Override, []string) {
	var o Override
	var warnings []string
	bad := func(name, v, want, strictest string) {
		warnings = append(warnings, fmt.Sprintf("%s=%q is not one of %s; using %s", name, v, want, strictest))
	}
	if v := getenv(SecurityEnv); v != "" {
		if o.Security = Security(v); !o.Security.Valid() {
			bad(SecurityEnv, v, "deny, allowlist, full", string(SecurityDeny))
			o.Security = SecurityDeny
		}
	}
	if v := getenv(AskEnv); v != "" {
		if o.Ask = Ask(v); !o.Ask.Valid() {
			bad(AskEnv, v, "off, on-miss, always", string(AskAlways))
			o.Ask = AskAlways
		}
	}
	if v := getenv(AskFallbackEnv); v != "" {
		if o.AskFallback = Security(v); !o.AskFallback.Valid() {
			bad(AskFallbackEnv, v, "deny, allowlist, full", string(SecurityDeny))
			o.AskFallback = SecurityDeny
		}
	}
	return o, warnings
}
