package config

import "github.com/execgate/execgate/pattern"

// Security is the policy's base stance: refuse everything, allow only what the
// allowlist (or the safe-binary layer) covers, or allow everything.
type Security string

// Security values.
const (
	SecurityDeny      Security = "deny"
	SecurityAllowlist Security = "allowlist"
	SecurityFull      Security = "full"
)

// Valid reports whether s is one of the defined values.
func (s Security) Valid() bool {
	return s == SecurityDeny || s == SecurityAllowlist || s == SecurityFull
}

// rank orders Security values from strictest to loosest.
func (s Security) rank() int {
	switch s {
	case SecurityDeny:
		return 0
	case SecurityAllowlist:
		return 1
	case SecurityFull:
		return 2
	}
	return 0
}

// Ask says when a human is asked.
type Ask string

// Ask values.
const (
	AskOff    Ask = "off"
	AskOnMiss Ask = "on-miss"
	AskAlways Ask = "always"
)

// Valid reports whether a is one of the defined values.
func (a Ask) Valid() bool { return a == AskOff || a == AskOnMiss || a == AskAlways }

// Built-in defaults, used for every field no config level sets.
const (
	DefaultSecurity      = SecurityAllowlist
	DefaultAsk           = AskOnMiss
	DefaultAskFallback   = SecurityDeny
	DefaultTimeoutMs     = 60000
	DefaultAutoAllowSafe = true
	// DefaultAutoAllowWorkspaceRunners is off: running the workspace's own
	// tests and builds runs code nobody has read (a test file, a build
	// script, a dependency's install hook), so a person is asked unless
	// they opt in.
	DefaultAutoAllowWorkspaceRunners = false
)

// Policy is the fully resolved policy for one agent: every field set.
type Policy struct {
	Security      Security `json:"security"`
	Ask           Ask      `json:"ask"`
	AskFallback   Security `json:"askFallback"`
	TimeoutMs     int      `json:"timeoutMs"`
	AutoAllowSafe bool     `json:"autoAllowSafe"`
	// AutoAllowWorkspaceRunners lets commands that only run the
	// workspace's own code (npm test, go test, make, pytest) run without
	// asking.
	AutoAllowWorkspaceRunners bool `json:"autoAllowWorkspaceRunners"`
	// floor is the managed policy's floor this policy was resolved under:
	// Loosened never goes past it, so no session override (the hub's, the
	// web approver's) can undo what the managed file holds.
	floor *Floor
}

// Floor is the managed floor p was resolved under, nil when none.
func (p Policy) Floor() *Floor { return p.floor }

// BuiltinPolicy returns the policy used when no configuration sets anything.
func BuiltinPolicy() Policy {
	return Policy{
		Security:      DefaultSecurity,
		Ask:           DefaultAsk,
		AskFallback:   DefaultAskFallback,
		TimeoutMs:     DefaultTimeoutMs,
		AutoAllowSafe: DefaultAutoAllowSafe,

		AutoAllowWorkspaceRunners: DefaultAutoAllowWorkspaceRunners,
	}
}

// PolicyFields is one level of policy settings (defaults, "*" or one agent);
// a zero field is unset and falls through to the next level.
type PolicyFields struct {
	Security      Security `json:"security,omitempty"`
	Ask           Ask      `json:"ask,omitempty"`
	AskFallback   Security `json:"askFallback,omitempty"`
	TimeoutMs     *int     `json:"timeoutMs,omitempty"`
	AutoAllowSafe *bool    `json:"autoAllowSafe,omitempty"`
	// AutoAllowWorkspaceRunners is Policy.AutoAllowWorkspaceRunners.
	AutoAllowWorkspaceRunners *bool `json:"autoAllowWorkspaceRunners,omitempty"`
}

// AgentConfig is the "agents" map's value: policy fields plus pattern lists,
// and the agent's own output settings (see Config.OutputFor).
type AgentConfig struct {
	PolicyFields
	Allowlist []pattern.Entry `json:"allowlist,omitempty"`
	Denylist  []pattern.Entry `json:"denylist,omitempty"`
	Output    OutputConfig    `json:"output,omitzero"`
	// Sandbox widens the kernel sandbox for the agent's confined commands
	// (see sandbox_config.go).
	Sandbox SandboxConfig `json:"sandbox,omitzero"`
}

// SocketConfig locates the hub and holds the shared secret.
type SocketConfig struct {
	Path  string `json:"path,omitempty"`
	Token string `json:"token,omitempty"`
	// RequesterUids lists other users whose shims may ask the hub (see
	// hub_config.go).
	RequesterUids []int `json:"requesterUids,omitempty"`
	// IdleTimeoutMs is how long the hub keeps a connection that sends
	// nothing and waits on nothing; 0 means the hub's default (see
	// hub_config.go).
	IdleTimeoutMs int `json:"idleTimeoutMs,omitempty"`
}

// Config is the typed view of the configuration file (version 1). Unknown
// fields are not kept here; the Store keeps them in the raw document.
type Config struct {
	Version  int                    `json:"version"`
	Socket   SocketConfig           `json:"socket"`
	Defaults PolicyFields           `json:"defaults"`
	Agents   map[string]AgentConfig `json:"agents,omitempty"`
	// Shell and Output are the shim's settings (see shim_config.go).
	Shell  ShellConfig  `json:"shell,omitzero"`
	Output OutputConfig `json:"output,omitzero"`
	// Audit says what the audit log keeps (see audit_config.go).
	Audit AuditConfig `json:"audit,omitzero"`
	// Envelopes configure the recognition of agents' command envelopes,
	// by agent id (see envelopes.go; policy.Trust applies them).
	Envelopes map[string]EnvelopeConfig `json:"envelopes,omitempty"`
	// Managed is the managed policy merged over this file (managed.go);
	// nil when the machine has none.
	Managed *Managed `json:"-"`
}

// Effective is what one agent runs under: its resolved policy and the
// combined pattern lists ("*" entries first, then the agent's own).
type Effective struct {
	Agent     string          `json:"agent"`
	Policy    Policy          `json:"policy"`
	Allowlist []pattern.Entry `json:"allowlist"`
	Denylist  []pattern.Entry `json:"denylist"`
}

// WildcardAgent is the agents key whose settings apply to every agent.
const WildcardAgent = "*"

// Resolve computes the effective policy for agent: each field comes from the
// agent, else "*", else defaults, else the built-in value; then the managed
// floor holds every field at most as loose as it allows, and the managed
// denylist entries come first.
func (c *Config) Resolve(agent string) Effective {
	eff := c.resolveUser(agent)
	if c.Managed != nil {
		f := c.Managed.floor(agent)
		eff.Policy = f.Hold(eff.Policy)
		eff.Policy.floor = f
		eff.Denylist = append(c.Managed.denylist(agent), eff.Denylist...)
	}
	return eff
}

// resolveUser is Resolve without the managed policy.
func (c *Config) resolveUser(agent string) Effective {
	eff := Effective{Agent: agent, Policy: BuiltinPolicy()}
	levels := []PolicyFields{c.Defaults}
	if c.Agents != nil {
		if star, ok := c.Agents[WildcardAgent]; ok {
			levels = append(levels, star.PolicyFields)
			eff.Allowlist = append(eff.Allowlist, star.Allowlist...)
			eff.Denylist = append(eff.Denylist, star.Denylist...)
		}
		if agent != WildcardAgent {
			if own, ok := c.Agents[agent]; ok {
				levels = append(levels, own.PolicyFields)
				eff.Allowlist = append(eff.Allowlist, own.Allowlist...)
				eff.Denylist = append(eff.Denylist, own.Denylist...)
			}
		}
	}
	for _, l := range levels {
		eff.Policy = l.apply(eff.Policy)
	}
	return eff
}

// apply overlays the set (and valid) fields of f on p.
func (f PolicyFields) apply(p Policy) Policy {
	if f.Security.Valid() {
		p.Security = f.Security
	}
	if f.Ask.Valid() {
		p.Ask = f.Ask
	}
	if f.AskFallback.Valid() {
		p.AskFallback = f.AskFallback
	}
	if f.TimeoutMs != nil && *f.TimeoutMs > 0 {
		p.TimeoutMs = *f.TimeoutMs
	}
	if f.AutoAllowSafe != nil {
		p.AutoAllowSafe = *f.AutoAllowSafe
	}
	if f.AutoAllowWorkspaceRunners != nil {
		p.AutoAllowWorkspaceRunners = *f.AutoAllowWorkspaceRunners
	}
	return p
}
