package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/internal/jsonstrict"
	"github.com/execgate/execgate/internal/state"
	"github.com/execgate/execgate/pattern"
)

// Environment variables that choose the configuration file.
const (
	configEnv  = "EXECGATE_CONFIG"
	xdgEnv     = "XDG_CONFIG_HOME"
	configDir  = "execgate"
	configName = "exec-approvals.json"
)

// maxConfigSize bounds what Load and Store read: a file this large is not a
// hand-edited policy, and reading it unbounded would let it exhaust memory.
const maxConfigSize = 16 << 20

// maxTimeoutMs keeps timeoutMs convertible to a time.Duration everywhere
// (about 24.8 days).
const maxTimeoutMs = math.MaxInt32

// timeoutWant says what timeoutMs takes. It spells maxTimeoutMs out as a
// constant rather than formatting it, which would run at start-up of every
// shim process; TestTimeoutWantNamesMax keeps the two in step.
const timeoutWant = "a whole number of milliseconds from 1 to 2147483647"

// ConfigPath returns the configuration file to use: flag when set, else
// $EXECGATE_CONFIG, else exec-approvals.json under $XDG_CONFIG_HOME/execgate.
// getenv is consulted on every call (xdg caches the environment at start-up,
// which would make the default impossible to redirect in tests).
func ConfigPath(flag string, getenv func(string) string) string {
	if flag != "" {
		return flag
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if p := getenv(configEnv); p != "" {
		return p
	}
	// The XDG spec says relative values are invalid and must be ignored.
	base := getenv(xdgEnv)
	if base == "" || !filepath.IsAbs(base) {
		base = defaultConfigHome(getenv)
	}
	return filepath.Join(base, configDir, configName)
}

// Load reads the configuration file at path without ever writing it. A
// missing file yields an empty Config (the built-in defaults) and hash "".
// A file that exists but cannot be used (see UnusableError) yields an
// *UnusableError and a Config at its strictest (security "deny" everywhere),
// never the defaults: callers must refuse what the policy would have judged,
// and one that forgets still denies. hash is then the digest of whatever was
// read ("" when nothing could be). hash is the lowercase hex SHA-256 of the
// file's bytes. warnings are ParseConfig's.
//
// The managed policy (ManagedPath) is merged in: cfg.Managed holds it, and
// Resolve applies it. A managed file that cannot be used is an
// *UnusableError too (Managed set), with the strictest Config, whatever
// the user's file says.
func Load(path string) (cfg *Config, hash string, warnings []string, err error) {
	return load(path, ManagedPath())
}

// load is Load with the managed policy read from managedPath.
func load(path, managedPath string) (cfg *Config, hash string, warnings []string, err error) {
	cfg, hash, warnings, err = loadUser(path)
	m, mwarnings, merr := LoadManaged(managedPath)
	if merr != nil {
		return denyAllConfig(), hash, warnings, merr
	}
	if m != nil {
		m.Warnings = mwarnings
		cfg.Managed = m
	}
	return cfg, hash, warnings, err
}

// loadUser is Load of the user's file alone.
func loadUser(path string) (cfg *Config, hash string, warnings []string, err error) {
	raw, err := readConfigFile(path, false)
	if errors.Is(err, fs.ErrNotExist) {
		// A symbolic link to nothing is a file that exists and is broken
		// (a dotfiles checkout not mounted), not a file never written.
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return denyAllConfig(), "", nil, &UnusableError{Path: path, Err: errors.New("symbolic link to a missing file")}
		}
		return emptyConfig(), "", nil, nil
	}
	if err != nil {
		return denyAllConfig(), "", nil, &UnusableError{Path: path, Err: err}
	}
	hash = hashBytes(raw)
	cfg, warnings, err = ParseConfig(raw)
	if err != nil {
		return denyAllConfig(), hash, warnings, &UnusableError{Path: path, Err: err}
	}
	return cfg, hash, warnings, nil
}

// emptyConfig is the configuration of a missing file: every field unset.
func emptyConfig() *Config { return &Config{Version: 1} }

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// readConfigFile reads at most maxConfigSize bytes of a regular file. With
// noSymlink it refuses a symbolic link without following it. Errors carry no
// path (callers add it once).
func readConfigFile(path string, noSymlink bool) ([]byte, error) {
	stat := os.Stat
	if noSymlink {
		stat = os.Lstat
	}
	fi, err := stat(path)
	if err != nil {
		return nil, pathless(err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, errSymlink
	}
	if fi.IsDir() {
		return nil, errors.New("is a directory, not a file")
	}
	// Opening a FIFO or device could block or never end.
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	flag := os.O_RDONLY
	if noSymlink {
		flag |= noFollow
	}
	f, err := state.OpenFile(path, flag, 0)
	if err != nil {
		return nil, pathless(err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, pathless(err)
	}
	if len(raw) > maxConfigSize {
		return nil, fmt.Errorf("file larger than %d bytes", maxConfigSize)
	}
	return raw, nil
}

// errSymlink refuses to write through a symbolic link, which could point
// anywhere (another user's file, a file the policy should not own).
var errSymlink = errors.New("is a symbolic link; refusing to write through it (point --config at the real file)")

// pathless drops the path an *fs.PathError repeats, keeping the cause so that
// errors.Is still sees fs.ErrNotExist and friends.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ParseConfig decodes a configuration file. Problems inside it never make it
// unusable: each is reported as one warning line and the offending value is
// replaced by the strictest one for its field (security and askFallback
// "deny", ask "always", autoAllowSafe false; a bad timeoutMs is dropped and
// falls through), so a mistake can only ever narrow the policy. For the same
// reason, a denylist entry that has to be dropped turns the security of the
// level it came from to "deny" (of every agent, for "*"). Unknown fields
// are ignored, with a warning where they sit beside policy fields (likely a
// typo). The error is non-nil, and the Config nil, only when the file is not a
// JSON object, repeats a key within an object (which makes it ambiguous) or
// declares a version other than 1.
func ParseConfig(raw []byte) (*Config, []string, error) {
	root, err := decodeObject(raw)
	if err != nil {
		return nil, nil, err
	}
	if err := checkDuplicateKeys(raw); err != nil {
		return nil, nil, err
	}
	return parseTree(root)
}

// checkDuplicateKeys rejects an object with the same key twice. The decoder
// would silently keep the last, yet in a hand-edited file the first may well
// be the one meant (a second "agents" block would hide a denylist), so the
// file is ambiguous. raw must already have decoded without error.
func checkDuplicateKeys(raw []byte) error {
	var dup *jsonstrict.DuplicateKeyError
	if err := jsonstrict.Check(raw); errors.As(err, &dup) {
		where := "at the top level"
		if len(dup.Path) > 0 {
			path := ""
			for _, k := range dup.Path {
				if strings.HasPrefix(k, "[") {
					path += k
				} else {
					path = joinPath(path, k)
				}
			}
			where = "in " + path
		}
		return positionError(raw, dup.Offset, "ambiguous JSON", fmt.Sprintf("duplicate key %s %s", quote(dup.Key), where))
	}
	return nil
}

// decodeObject decodes raw as a single JSON object, numbers kept as
// json.Number so that they survive a round trip untouched.
func decodeObject(raw []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("empty file (want a JSON object)")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, syntaxError(raw, se.Offset-1, se.Error())
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, syntaxError(raw, int64(len(raw)), "unexpected end of input")
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	rest := raw[dec.InputOffset():]
	if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 {
		off := int64(len(raw) - len(trimmed))
		return nil, syntaxError(raw, off, "unexpected data after the top-level object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object at the top level, got %s", describe(v))
	}
	return m, nil
}

// syntaxError reports invalid JSON at byte off of raw.
func syntaxError(raw []byte, off int64, msg string) error {
	return positionError(raw, off, "invalid JSON", msg)
}

// positionError says where in raw the byte at off sits, as people count.
func positionError(raw []byte, off int64, what, msg string) error {
	off = max(0, min(off, int64(len(raw))))
	before := raw[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("line %d, column %d: %s: %s", line, col, what, msg)
}

// fieldSpec describes one policy field; policyFieldSpecs is the table that
// parsing, validation and Document.SetPolicyField share.
type fieldSpec struct {
	key string
	// values lists an enum's allowed values; nil for the other kinds.
	values []string
	// want describes a non-enum field's valid values.
	want string
	// strictest replaces an invalid value; nil means drop it instead.
	strictest any
	// check returns the typed value of a decoded JSON value, ok false when
	// it is not valid for the field.
	check func(v any) (typed any, ok bool)
	// set stores a value check accepted.
	set func(f *PolicyFields, typed any)
	// fromText turns command-line text into the JSON value to store.
	fromText func(s string) any
}

var securityValues = []string{string(SecurityDeny), string(SecurityAllowlist), string(SecurityFull)}

var policyFieldSpecs = [...]fieldSpec{
	{
		key: "security", values: securityValues, strictest: string(SecurityDeny),
		set: func(f *PolicyFields, v any) { f.Security = Security(v.(string)) },
	},
	{
		key: "ask", values: []string{string(AskOff), string(AskOnMiss), string(AskAlways)}, strictest: string(AskAlways),
		set: func(f *PolicyFields, v any) { f.Ask = Ask(v.(string)) },
	},
	{
		key: "askFallback", values: securityValues, strictest: string(SecurityDeny),
		set: func(f *PolicyFields, v any) { f.AskFallback = Security(v.(string)) },
	},
	{
		key:   "timeoutMs",
		want:  timeoutWant,
		check: checkTimeout,
		set: func(f *PolicyFields, v any) {
			n := v.(int)
			f.TimeoutMs = &n
		},
		fromText: func(s string) any {
			// Normalise ("+5", "007") so that the file gets a valid JSON number.
			if n, err := strconv.Atoi(s); err == nil {
				return json.Number(strconv.Itoa(n))
			}
			return s
		},
	},
	{
		key: "autoAllowSafe", want: "true or false", strictest: false,
		check: func(v any) (any, bool) { b, ok := v.(bool); return b, ok },
		set: func(f *PolicyFields, v any) {
			b := v.(bool)
			f.AutoAllowSafe = &b
		},
		fromText: boolFromText,
	},
	{
		// Off unless set: see DefaultAutoAllowWorkspaceRunners. An invalid
		// value turns it off, the strictest setting.
		key: "autoAllowWorkspaceRunners", want: "true or false", strictest: false,
		check: func(v any) (any, bool) { b, ok := v.(bool); return b, ok },
		set: func(f *PolicyFields, v any) {
			b := v.(bool)
			f.AutoAllowWorkspaceRunners = &b
		},
		fromText: boolFromText,
	},
}

// boolFromText turns the command-line words true and false into JSON
// booleans; anything else stays text, which the field's check refuses.
func boolFromText(s string) any {
	if b, err := strconv.ParseBool(s); err == nil && (s == "true" || s == "false") {
		return b
	}
	return s
}

func checkTimeout(v any) (any, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	i, err := strconv.Atoi(n.String())
	if err != nil || i <= 0 || i > maxTimeoutMs {
		return nil, false
	}
	return i, true
}

// lookupField finds a policy field by its JSON key.
func lookupField(key string) (*fieldSpec, bool) {
	for i := range policyFieldSpecs {
		if policyFieldSpecs[i].key == key {
			return &policyFieldSpecs[i], true
		}
	}
	return nil, false
}

// validate returns the typed value of v, or a problem description.
func (s *fieldSpec) validate(v any) (any, string) {
	if s.values == nil {
		if t, ok := s.check(v); ok {
			return t, ""
		}
		return nil, fmt.Sprintf("want %s, got %s", s.want, describe(v))
	}
	str, ok := v.(string)
	if !ok {
		return nil, fmt.Sprintf("want one of %s, got %s", orList(s.values), describe(v))
	}
	if !slices.Contains(s.values, str) {
		return nil, fmt.Sprintf("unknown value %s (want %s)", quote(str), orList(s.values))
	}
	return str, ""
}

// textValue turns command-line text into the JSON value stored for the field.
func (s *fieldSpec) textValue(text string) any {
	if s.fromText == nil {
		return text
	}
	return s.fromText(text)
}

// strictestFields is what a level that cannot be read at all stands for.
func strictestFields() PolicyFields {
	var f PolicyFields
	for i := range policyFieldSpecs {
		s := &policyFieldSpecs[i]
		if s.strictest != nil {
			s.set(&f, s.strictest)
		}
	}
	return f
}

// strictestText spells out strictestFields for warnings.
func strictestText() string {
	var parts []string
	for i := range policyFieldSpecs {
		s := &policyFieldSpecs[i]
		if s.strictest != nil {
			parts = append(parts, s.key+" "+jsonText(s.strictest))
		}
	}
	return strings.Join(parts, ", ")
}

// Top-level and level keys, for spotting unknown (likely misspelt) fields.
var (
	topLevelKeys = []string{"version", "socket", "defaults", "agents", "shell", "output", "audit", "envelopes"}
	listKeys     = []string{"allowlist", "denylist"}
)

// parser accumulates warnings while walking a decoded configuration.
type parser struct {
	warnings []string
	// denyAll is set when a "*" denylist entry may have been lost: every
	// level then gets security "deny".
	denyAll bool
	// denyAgents lists agents that lost denylist entries of their own.
	denyAgents map[string]bool
}

func (p *parser) warnf(path, format string, a ...any) {
	p.warnings = append(p.warnings, path+": "+fmt.Sprintf(format, a...))
}

// parseTree builds the typed Config from a decoded JSON object.
func parseTree(root map[string]any) (*Config, []string, error) {
	if v, ok := root["version"]; ok && v != nil {
		if n, isNum := v.(json.Number); !isNum || n.String() != "1" {
			return nil, nil, fmt.Errorf("unsupported version %s (want 1)", describe(v))
		}
	}
	p := &parser{denyAgents: map[string]bool{}}
	cfg := &Config{Version: 1}
	cfg.Socket = p.parseSocket(root["socket"])
	cfg.Defaults = p.parseLevel("defaults", root["defaults"], nil)
	cfg.Agents = p.parseAgents(root["agents"])
	cfg.Shell = p.parseShell(root["shell"])
	cfg.Output = p.parseOutput("output", root["output"])
	cfg.Audit = p.parseAudit(root["audit"])
	cfg.Envelopes = p.parseEnvelopes(root["envelopes"])
	p.unknownFields("", root, topLevelKeys)

	if p.denyAll {
		cfg.Defaults.Security = SecurityDeny
	}
	for name, a := range cfg.Agents {
		if p.denyAll || p.denyAgents[name] {
			a.Security = SecurityDeny
			cfg.Agents[name] = a
		}
	}
	return cfg, p.warnings, nil
}

func (p *parser) parseSocket(v any) SocketConfig {
	var s SocketConfig
	if v == nil {
		return s
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf("socket", "want an object, got %s; ignoring it", describe(v))
		return s
	}
	s.Path = p.stringField("socket", m, "path")
	s.Token = p.stringField("socket", m, "token")
	s.RequesterUids = p.parseRequesterUids(m["requesterUids"])
	s.IdleTimeoutMs = p.parseIdleTimeout(m["idleTimeoutMs"])
	return s
}

// stringField reads an optional string; a wrong type is ignored with a
// warning.
func (p *parser) stringField(path string, m map[string]any, key string) string {
	v, ok := m[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.warnf(path+"."+key, "want a string, got %s; ignoring it", describe(v))
	}
	return s
}

// parseLevel reads the policy fields of one level (defaults or an agent).
// extra lists further keys that are known at this level.
func (p *parser) parseLevel(path string, v any, extra []string) PolicyFields {
	var f PolicyFields
	if v == nil {
		return f
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf(path, "want an object, got %s; using the strictest settings (%s)", describe(v), strictestText())
		return strictestFields()
	}
	known := slices.Clone(extra)
	for i := range policyFieldSpecs {
		s := &policyFieldSpecs[i]
		known = append(known, s.key)
		raw, ok := m[s.key]
		if !ok || raw == nil {
			continue
		}
		typed, problem := s.validate(raw)
		switch {
		case problem == "":
			s.set(&f, typed)
		case s.strictest != nil:
			p.warnf(path+"."+s.key, "%s; using %s", problem, jsonText(s.strictest))
			s.set(&f, s.strictest)
		default:
			p.warnf(path+"."+s.key, "%s; ignoring it", problem)
		}
	}
	p.unknownFields(path, m, known)
	return f
}

// unknownFields warns about keys of m outside known, in a stable order.
func (p *parser) unknownFields(path string, m map[string]any, known []string) {
	var unknown []string
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		p.warnf(joinPath(path, k), "unknown field; ignored")
	}
}

func (p *parser) parseAgents(v any) map[string]AgentConfig {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf("agents", "want an object, got %s; using the strictest settings for agent * and security %q for every agent",
			describe(v), SecurityDeny)
		p.denyAll = true
		return map[string]AgentConfig{WildcardAgent: {PolicyFields: strictestFields()}}
	}
	agents := make(map[string]AgentConfig, len(m))
	for _, name := range sortedKeys(m) {
		raw := m[name]
		if raw == nil {
			continue
		}
		path := joinPath("agents", name)
		am, ok := raw.(map[string]any)
		if !ok {
			// The level's denylist is unknown too, so fail closed on it.
			who := "for it"
			if name == WildcardAgent {
				who = fmt.Sprintf("for it and security %q for every agent", SecurityDeny)
				p.denyAll = true
			}
			p.warnf(path, "want an object, got %s; using the strictest settings %s", describe(raw), who)
			agents[name] = AgentConfig{PolicyFields: strictestFields()}
			continue
		}
		a := AgentConfig{PolicyFields: p.parseLevel(path, am, append(slices.Clone(listKeys), "output", "sandbox"))}
		a.Output = p.parseOutput(path+".output", am["output"])
		a.Sandbox = p.parseSandbox(path+".sandbox", am["sandbox"])
		a.Allowlist = p.parseList(name, path+".allowlist", am["allowlist"], false)
		a.Denylist = p.parseList(name, path+".denylist", am["denylist"], true)
		agents[name] = a
	}
	return agents
}

// parseList reads an allowlist or denylist. Dropping an allowlist entry only
// narrows the policy; dropping a denylist entry would widen it, so it also
// turns the agent's (or, for "*", everyone's) security to "deny".
func (p *parser) parseList(agent, path string, v any, deny bool) []pattern.Entry {
	if v == nil {
		return nil
	}
	// consequence is computed only when something is dropped: for a
	// denylist it also records the fail-closed fallback.
	consequence := func(what string) string {
		if deny {
			return what + "; " + p.denyDropped(agent)
		}
		return what
	}
	items, ok := v.([]any)
	if !ok {
		p.warnf(path, "want an array, got %s; %s", describe(v), consequence("list ignored"))
		return nil
	}
	var out []pattern.Entry
	for i, it := range items {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		m, ok := it.(map[string]any)
		if !ok {
			p.warnf(ipath, "want an object, got %s; %s", describe(it), consequence("entry dropped"))
			continue
		}
		rawPat, present := m["pattern"]
		pat, ok := rawPat.(string)
		switch {
		case !present:
			p.warnf(ipath+".pattern", "missing; %s", consequence("entry dropped"))
			continue
		case !ok:
			p.warnf(ipath+".pattern", "want a string, got %s; %s", describe(rawPat), consequence("entry dropped"))
			continue
		}
		if err := pattern.ValidatePattern(pat); err != nil {
			p.warnf(ipath+".pattern", "%v; %s", err, consequence("entry dropped"))
			continue
		}
		e := pattern.Entry{
			Pattern:          pat,
			ID:               p.stringField(ipath, m, "id"),
			Source:           p.stringField(ipath, m, "source"),
			LastUsedCommand:  p.stringField(ipath, m, "lastUsedCommand"),
			LastResolvedPath: p.stringField(ipath, m, "lastResolvedPath"),
		}
		if raw, ok := m["lastUsedAt"]; ok && raw != nil {
			n, isNum := raw.(json.Number)
			ms, err := strconv.ParseInt(n.String(), 10, 64)
			if !isNum || err != nil || ms < 0 {
				p.warnf(ipath+".lastUsedAt", "want a time in Unix milliseconds, got %s; ignoring it", describe(raw))
			} else {
				e.LastUsedAt = ms
			}
		}
		out = append(out, e)
	}
	return out
}

// denyDropped records that agent's denylist lost something and says what
// that does.
func (p *parser) denyDropped(agent string) string {
	if agent == WildcardAgent {
		p.denyAll = true
		return fmt.Sprintf("using security %q for every agent", SecurityDeny)
	}
	p.denyAgents[agent] = true
	return fmt.Sprintf("using security %q for agent %s", SecurityDeny, pathKey(agent))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// joinPath appends a key to a dotted path, quoting keys that would make the
// path ambiguous or span lines.
func joinPath(path, key string) string {
	if path == "" {
		return pathKey(key)
	}
	return path + "." + pathKey(key)
}

func pathKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("*-_", r)) {
			return quote(k)
		}
	}
	return k
}

// describe names a decoded JSON value for a message, briefly and on one line.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + quote(v)
	case json.Number:
		return "number " + truncate(v.String())
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// quote quotes s for a message, shortened so a warning stays one short line.
func quote(s string) string { return strconv.Quote(truncate(s)) }

// truncate shortens s for a message.
func truncate(s string) string { return display.Shorten(s, 60) }

// jsonText shows a value as it would be written in the file.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// orList joins values as "a, b or c".
func orList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
