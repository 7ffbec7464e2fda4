package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/execgate/execgate/pattern"
)

// The managed policy is what an administrator sets for every user of a
// machine: a root-owned file (ManagedPath) merged over each user's
// configuration so that it can only tighten it. It holds floors for the
// policy fields (a user's looser value does not apply), denylist entries
// (they refuse before any user allowlist is looked at), paths whose writing
// is dangerous, and audit export targets every user's log is sent to.
// It cannot allow anything: it has no allowlist.

// managedFileOverride replaces ManagedPath's default. It is set only at
// link time (go build -ldflags "-X
// github.com/execgate/execgate/config.managedFileOverride=PATH"), by the
// tests that run the real binaries against a managed file of their own:
// nothing at run time (no flag, no environment variable) can move the file
// an administrator put in place.
var managedFileOverride string

// ManagedPath is the managed policy file: /etc/execgate/managed.json, or
// /Library/Application Support/execgate/managed.json on macOS.
func ManagedPath() string {
	if managedFileOverride != "" {
		return managedFileOverride
	}
	return defaultManagedPath
}

// Managed is the typed view of the managed policy file.
type Managed struct {
	// Path is the file it was read from.
	Path string
	// Defaults and Agents hold the floors, resolved like a user's levels:
	// for each field, the agent's own level, else "*", else defaults.
	Defaults PolicyFields
	Agents   map[string]ManagedAgent
	// ProtectedPaths are files and directories (everything beneath them)
	// whose writing is dangerous for every agent, "~/" meaning the home of
	// whoever runs the command.
	ProtectedPaths []string
	// Export lists the audit export targets every user's log goes to.
	Export AuditExport
	// Warnings are ParseManaged's, for `execgate config check` and
	// doctor to show.
	Warnings []string
}

// ManagedAgent is one level of the managed file's "agents": floors and
// denylist entries.
type ManagedAgent struct {
	PolicyFields
	Denylist []pattern.Entry
}

// managedTopKeys are the fields a managed file may hold.
var managedTopKeys = []string{"version", "defaults", "agents", "protectedPaths", "audit"}

// ManagedSource is the Source of a denylist entry that comes from the
// managed file, and the source `policy get` names for a field it sets.
const ManagedSource = "managed"

// LoadManaged reads the managed policy at path. A missing file is no
// managed policy (nil, no error). A file that exists but cannot be trusted
// or used — not owned by root, writable by anyone else, under a directory
// others could swap it in, not readable, not a JSON object of version 1 —
// is an *UnusableError marked Managed: every command is refused until the
// administrator fixes it. Problems inside it are warnings, each value
// replaced by the strictest reading, as in a user's file.
func LoadManaged(path string) (*Managed, []string, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err := checkManagedOwner(path); err != nil {
		return nil, nil, &UnusableError{Path: path, Err: err, Managed: true}
	}
	raw, err := readConfigFile(path, false)
	if err != nil {
		return nil, nil, &UnusableError{Path: path, Err: err, Managed: true}
	}
	m, warnings, err := ParseManaged(raw)
	if err != nil {
		return nil, warnings, &UnusableError{Path: path, Err: err, Managed: true}
	}
	m.Path = path
	return m, warnings, nil
}

// ParseManaged decodes a managed policy file. Like ParseConfig it fails only
// on a file that is not one unambiguous JSON object of version 1, and
// otherwise warns: a value it cannot use becomes the strictest one, a
// denylist entry it must drop turns the floor of its level to security
// "deny", and what a managed file cannot do (allow, lengthen a timeout,
// switch autoAllow* on) is ignored with a warning that says so.
func ParseManaged(raw []byte) (*Managed, []string, error) {
	root, err := decodeObject(raw)
	if err != nil {
		return nil, nil, err
	}
	if err := checkDuplicateKeys(raw); err != nil {
		return nil, nil, err
	}
	if v, ok := root["version"]; ok && v != nil {
		if n, isNum := v.(json.Number); !isNum || n.String() != "1" {
			return nil, nil, fmt.Errorf("unsupported version %s (want 1)", describe(v))
		}
	}
	p := &parser{denyAgents: map[string]bool{}}
	m := &Managed{}
	m.Defaults = p.managedLevel("defaults", root["defaults"], nil)
	m.Agents = p.parseManagedAgents(root["agents"])
	m.ProtectedPaths = p.parseProtectedPaths(root["protectedPaths"])
	m.Export = p.parseManagedAudit(root["audit"])
	p.unknownFields("", root, managedTopKeys)
	if p.denyAll {
		m.Defaults.Security = SecurityDeny
	}
	for name, a := range m.Agents {
		if p.denyAll || p.denyAgents[name] {
			a.Security = SecurityDeny
			m.Agents[name] = a
		}
	}
	return m, p.warnings, nil
}

// managedLevel reads one level of floors. The fields that could only
// loosen the policy as floors are dropped with a warning.
func (p *parser) managedLevel(path string, v any, extra []string) PolicyFields {
	f := p.parseLevel(path, v, extra)
	if f.TimeoutMs != nil {
		p.warnf(path+".timeoutMs", "a managed policy does not set timeouts (a shorter one is not stricter under askFallback \"full\"); ignored")
		f.TimeoutMs = nil
	}
	for _, b := range []struct {
		key string
		v   **bool
	}{{"autoAllowSafe", &f.AutoAllowSafe}, {"autoAllowWorkspaceRunners", &f.AutoAllowWorkspaceRunners}} {
		if *b.v != nil && **b.v {
			p.warnf(path+"."+b.key, "a managed policy can only switch it off; true ignored")
			*b.v = nil
		}
	}
	return f
}

func (p *parser) parseManagedAgents(v any) map[string]ManagedAgent {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf("agents", "want an object, got %s; using security %q for every agent", describe(v), SecurityDeny)
		p.denyAll = true
		return nil
	}
	agents := make(map[string]ManagedAgent, len(m))
	for _, name := range sortedKeys(m) {
		raw := m[name]
		if raw == nil {
			continue
		}
		path := joinPath("agents", name)
		am, ok := raw.(map[string]any)
		if !ok {
			p.warnf(path, "want an object, got %s; %s", describe(raw), p.denyDropped(name))
			agents[name] = ManagedAgent{PolicyFields: strictestFields()}
			continue
		}
		a := ManagedAgent{PolicyFields: p.managedLevel(path, am, []string{"denylist", "allowlist"})}
		if _, ok := am["allowlist"]; ok {
			p.warnf(path+".allowlist", "a managed policy cannot allow anything (allowlists are each user's); ignored")
		}
		a.Denylist = p.parseList(name, path+".denylist", am["denylist"], true)
		for i := range a.Denylist {
			a.Denylist[i].Source = ManagedSource
		}
		agents[name] = a
	}
	return agents
}

// parseProtectedPaths reads the extra protected paths: absolute, or under
// "~/". A path that cannot be used is dropped with a warning and makes every
// agent's floor "deny": what it protected is not protected any more.
func (p *parser) parseProtectedPaths(v any) []string {
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		p.warnf("protectedPaths", "want an array of paths, got %s; %s", describe(v), p.denyDropped(WildcardAgent))
		return nil
	}
	var out []string
	for i, it := range items {
		path := fmt.Sprintf("protectedPaths[%d]", i)
		s, ok := it.(string)
		switch {
		case !ok:
			p.warnf(path, "want a path, got %s; %s", describe(it), p.denyDropped(WildcardAgent))
		case !filepath.IsAbs(s) && !strings.HasPrefix(s, "~/"):
			p.warnf(path, "want an absolute path or one under ~/, got %s; %s", quote(s), p.denyDropped(WildcardAgent))
		default:
			out = append(out, s)
		}
	}
	return out
}

// parseManagedAudit reads the managed file's audit section: only export.
func (p *parser) parseManagedAudit(v any) AuditExport {
	if v == nil {
		return AuditExport{}
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf("audit", "want an object, got %s; ignoring it", describe(v))
		return AuditExport{}
	}
	p.unknownFields("audit", m, []string{"export"})
	return p.parseExport("audit.export", m["export"])
}

// floor is the floor the managed policy sets for agent: per field, the
// agent's own level, else "*", else defaults. nil when there is no
// managed policy.
func (m *Managed) floor(agent string) *Floor {
	if m == nil {
		return nil
	}
	levels := []PolicyFields{m.Defaults}
	if star, ok := m.Agents[WildcardAgent]; ok {
		levels = append(levels, star.PolicyFields)
	}
	if own, ok := m.Agents[agent]; ok && agent != WildcardAgent {
		levels = append(levels, own.PolicyFields)
	}
	f := &Floor{Path: m.Path}
	for _, l := range levels {
		if l.Security.Valid() {
			f.Security = l.Security
		}
		if l.Ask.Valid() {
			f.Ask = l.Ask
		}
		if l.AskFallback.Valid() {
			f.AskFallback = l.AskFallback
		}
		if l.AutoAllowSafe != nil {
			f.AutoAllowSafe = l.AutoAllowSafe
		}
		if l.AutoAllowWorkspaceRunners != nil {
			f.AutoAllowWorkspaceRunners = l.AutoAllowWorkspaceRunners
		}
	}
	return f
}

// denylist is the managed denylist entries that apply to agent: "*"'s,
// then its own.
func (m *Managed) denylist(agent string) []pattern.Entry {
	if m == nil {
		return nil
	}
	out := slices.Clone(m.Agents[WildcardAgent].Denylist)
	if agent != WildcardAgent {
		out = append(out, m.Agents[agent].Denylist...)
	}
	return out
}

// Floor is the strictest a policy may be loosened to: a policy value past
// it in looseness is replaced by the floor's. Zero fields set no floor.
type Floor struct {
	PolicyFields
	// Path is the managed file the floor comes from.
	Path string
}

// askRank orders ask values from strictest to loosest for floors:
// "always" asks a person for every command; "off" never asks, so a command
// the policy does not allow is refused and no person can let it through;
// "on-miss" asks for those.
func (a Ask) askRank() int {
	switch a {
	case AskAlways:
		return 0
	case AskOff:
		return 1
	}
	return 2
}

// Hold returns p with every field looser than the floor set to the floor.
func (f *Floor) Hold(p Policy) Policy {
	if f == nil {
		return p
	}
	if f.Security.Valid() && p.Security.rank() > f.Security.rank() {
		p.Security = f.Security
	}
	if f.AskFallback.Valid() && p.AskFallback.rank() > f.AskFallback.rank() {
		p.AskFallback = f.AskFallback
	}
	if f.Ask.Valid() && p.Ask.askRank() > f.Ask.askRank() {
		p.Ask = f.Ask
	}
	if f.AutoAllowSafe != nil && !*f.AutoAllowSafe {
		p.AutoAllowSafe = false
	}
	if f.AutoAllowWorkspaceRunners != nil && !*f.AutoAllowWorkspaceRunners {
		p.AutoAllowWorkspaceRunners = false
	}
	return p
}

// Loosens lists the fields of o that the floor does not let apply, each
// as "security=full" (the override's value), for a refusal that names
// them.
func (f *Floor) Loosens(o Override) []string {
	if f == nil {
		return nil
	}
	var out []string
	if f.Security.Valid() && o.Security.Valid() && o.Security.rank() > f.Security.rank() {
		out = append(out, "security="+string(o.Security)+" (floor "+string(f.Security)+")")
	}
	if f.Ask.Valid() && o.Ask.Valid() && o.Ask.askRank() > f.Ask.askRank() {
		out = append(out, "ask="+string(o.Ask)+" (floor "+string(f.Ask)+")")
	}
	if f.AskFallback.Valid() && o.AskFallback.Valid() && o.AskFallback.rank() > f.AskFallback.rank() {
		out = append(out, "askFallback="+string(o.AskFallback)+" (floor "+string(f.AskFallback)+")")
	}
	return out
}

// ManagedFloor is the managed floor for agent under c; nil when no
// managed policy applies.
func (c *Config) ManagedFloor(agent string) *Floor {
	if c == nil {
		return nil
	}
	return c.Managed.floor(agent)
}

// ManagedConflicts lists the settings of the user's file that the managed
// policy overrules, one line each, saying which value applies instead:
//
//	defaults.security "full" is looser than the managed policy allows; "allowlist" applies (/etc/execgate/managed.json)
//
// They are reported, never silently dropped.
func (c *Config) ManagedConflicts() []string {
	var out []string
	for _, k := range c.conflicts() {
		out = append(out, k.text)
	}
	return out
}

// ManagedConflict is the line ManagedConflicts has for field key of
// agent's level ("" for defaults), or "" when the managed policy lets it
// apply.
func (c *Config) ManagedConflict(agent, key string) string {
	for _, k := range c.conflicts() {
		if k.agent == agent && k.key == key {
			return k.text
		}
	}
	return ""
}

// ManagedFields lists the policy fields whose value for agent the managed
// floor changed, each with the value the user's levels gave it.
func (c *Config) ManagedFields(agent string) map[string]string {
	if c == nil || c.Managed == nil {
		return nil
	}
	u := c.resolveUser(agent).Policy
	h := c.Managed.floor(agent).Hold(u)
	out := map[string]string{}
	for _, f := range []struct{ key, was, now string }{
		{"security", string(u.Security), string(h.Security)},
		{"ask", string(u.Ask), string(h.Ask)},
		{"askFallback", string(u.AskFallback), string(h.AskFallback)},
		{"autoAllowSafe", fmt.Sprint(u.AutoAllowSafe), fmt.Sprint(h.AutoAllowSafe)},
		{"autoAllowWorkspaceRunners", fmt.Sprint(u.AutoAllowWorkspaceRunners), fmt.Sprint(h.AutoAllowWorkspaceRunners)},
	} {
		if f.was != f.now {
			out[f.key] = f.was
		}
	}
	return out
}

// conflict is one user setting the managed policy overrules.
type conflict struct{ agent, key, text string }

func (c *Config) conflicts() []conflict {
	if c == nil || c.Managed == nil {
		return nil
	}
	var out []conflict
	check := func(agent, path string, user PolicyFields, f *Floor) {
		held := f.Hold(user.apply(looseReference()))
		for _, fv := range []struct {
			key         string
			set         bool
			value, kept string
		}{
			{"security", user.Security.Valid(), string(user.Security), string(held.Security)},
			{"ask", user.Ask.Valid(), string(user.Ask), string(held.Ask)},
			{"askFallback", user.AskFallback.Valid(), string(user.AskFallback), string(held.AskFallback)},
			{"autoAllowSafe", user.AutoAllowSafe != nil, boolText(user.AutoAllowSafe), fmt.Sprint(held.AutoAllowSafe)},
			{"autoAllowWorkspaceRunners", user.AutoAllowWorkspaceRunners != nil, boolText(user.AutoAllowWorkspaceRunners), fmt.Sprint(held.AutoAllowWorkspaceRunners)},
		} {
			if fv.set && fv.value != fv.kept {
				out = append(out, conflict{agent, fv.key, fmt.Sprintf("%s.%s %s is looser than the managed policy allows; %s applies (%s)",
					path, fv.key, jsonTextOf(fv.value), jsonTextOf(fv.kept), c.Managed.Path)})
			}
		}
	}
	check("", "defaults", c.Defaults, c.Managed.floor(WildcardAgent))
	for _, name := range sortedAgentNames(c.Agents) {
		check(name, joinPath("agents", name), c.Agents[name].PolicyFields, c.Managed.floor(name))
	}
	return out
}

// looseReference is the loosest policy: what a level's unset fields are
// compared at, so that only the fields it sets can conflict.
func looseReference() Policy {
	return Policy{Security: SecurityFull, Ask: AskOnMiss, AskFallback: SecurityFull, AutoAllowSafe: true, AutoAllowWorkspaceRunners: true}
}

func boolText(b *bool) string {
	if b == nil {
		return ""
	}
	return fmt.Sprint(*b)
}

// jsonTextOf shows a field value as the file spells it.
func jsonTextOf(v string) string {
	if v == "true" || v == "false" {
		return v
	}
	return jsonText(v)
}

func sortedAgentNames(m map[string]AgentConfig) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ProtectedPaths are the managed protected paths with "~/" expanded to
// home (dropped when home is not absolute: no path of the command can be
// under it then), each followed by what it resolves to on disk when that
// differs, so that a write through either name is caught.
func (c *Config) ProtectedPaths(home string) []string {
	if c == nil || c.Managed == nil {
		return nil
	}
	var out []string
	for _, p := range c.Managed.ProtectedPaths {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if !filepath.IsAbs(home) {
				continue
			}
			p = filepath.Join(home, rest)
		}
		p = filepath.Clean(p)
		out = append(out, p)
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			out = append(out, r)
		}
	}
	return out
}
