package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gobwas/glob"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/policy/shparse"
)

// Envelope is the wrapper a coding agent puts around the model's command
// before handing it to bash: sourcing its snapshot of the user's shell,
// setting shell options, recording the working directory afterwards. The
// pieces are the agent's plumbing; the payload is what the model asked for,
// and the only part worth judging and showing.
type Envelope struct {
	// Agent is the policy's id for the agent whose envelope this is.
	Agent string
	// Via names the agent for people: "Claude Code".
	Via string
	// Payload is the model's command, as it will run inside the envelope.
	Payload string
	// Shell is set when the envelope runs the payload in a shell of its
	// own (Codex's snapshot form execs `SHELL -lc PAYLOAD`): that shell as
	// written.
	Shell string
	// Harness is set, and Payload empty, when the whole program is the
	// agent's own start-up command (see Trust.Harness): what it is, for
	// people ("shell snapshot").
	Harness string
	// Reads lists the shell variables the envelope reads after the payload
	// ran in the same shell. A payload that may set one of them
	// (Result.MayAssign) re-aims the envelope's own plumbing — Gemini
	// CLI's EXIT trap writes to "$_bgpids_file" — so the envelope no
	// longer stands apart from it: the program must be judged whole.
	Reads []string
}

// Holds reports whether res, the judgement of this envelope's payload,
// leaves the envelope as recognised: the payload sets none of the
// variables the envelope reads after it.
func (e Envelope) Holds(res Result) bool {
	for _, v := range e.Reads {
		if res.MayAssign(v) {
			return false
		}
	}
	return true
}

// Envelope kinds, which are also the agents' policy ids.
const (
	AgentClaudeCode = "claude-code"
	AgentGeminiCLI  = "gemini-cli"
	AgentCodex      = "codex"
)

// AgentLabel is the name people know an agent by ("Claude Code" for
// claude-code), or "" for an agent execgate has no name for. (A switch: a
// map would be built at start-up of every shim process.)
func AgentLabel(agent string) string {
	switch agent {
	case AgentClaudeCode:
		return "Claude Code"
	case AgentGeminiCLI:
		return "Gemini CLI"
	case AgentCodex:
		return "Codex"
	}
	return ""
}

// defaultTrustedSources are where the agents keep their shell snapshots,
// by agent (see table).
var defaultTrustedSources = table[[]snapshotDir]{
	{AgentClaudeCode, []snapshotDir{{"CLAUDE_CONFIG_DIR", "~/.claude", "shell-snapshots/snapshot-*.sh"}}},
	{AgentCodex, []snapshotDir{{"CODEX_HOME", "~/.codex", "shell_snapshots/*.sh"}}},
}

// snapshotDir is a directory variable (with its default under the home
// directory) and the snapshot names below it.
type snapshotDir struct{ env, dflt, glob string }

// Trust holds the files each agent's envelope may source.
type Trust struct {
	// sources are absolute path globs by agent, compiled only when an
	// envelope is met: most commands are not in one.
	sources map[string][]string
	tmp     []string // directories the agents' scratch files may be in
	home    string
	getenv  func(string) string
	// dialect is the shell the envelope was handed to (see UnwrapAs).
	dialect Dialect
	// agentExe is the agent's own executable when the caller knows it
	// (WithAgentExecutable); else it is the executable of the process
	// that started this one (see agentExecutable).
	agentExe string
}

// WithAgentExecutable returns t knowing the agent's own executable, for a
// caller that is not the agent's child (the end-to-end tests).
func (t Trust) WithAgentExecutable(path string) Trust {
	t.agentExe = path
	return t
}

// NewTrust compiles the trusted sources for the agents: cfg's when it sets
// them, else the agents' own snapshot directories. Globs that do not
// compile or are not absolute trust nothing.
func NewTrust(cfg *config.Config, home string, getenv func(string) string) Trust {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	t := Trust{sources: map[string][]string{}, tmp: []string{"/tmp", "/private/tmp"}, home: home, getenv: getenv}
	if d := getenv("TMPDIR"); filepath.IsAbs(d) && !slices.Contains(t.tmp, filepath.Clean(d)) {
		t.tmp = append(t.tmp, filepath.Clean(d))
	}
	expand := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		return p
	}
	add := func(agent, pattern string) {
		if pattern = expand(pattern); filepath.IsAbs(pattern) {
			t.sources[agent] = append(t.sources[agent], pattern)
		}
	}
	for agent, dirs := range defaultTrustedSources.all() {
		if cfg != nil {
			if c, ok := cfg.Envelopes[agent]; ok && c.TrustedSources != nil {
				continue
			}
		}
		for _, d := range dirs {
			dir := getenv(d.env)
			if !filepath.IsAbs(dir) {
				dir = d.dflt
			}
			add(agent, filepath.Join(expand(dir), d.glob))
		}
	}
	if cfg != nil {
		for agent, c := range cfg.Envelopes {
			for _, p := range c.TrustedSources {
				add(agent, p)
			}
		}
	}
	return t
}

// trustedSource reports whether agent's envelope may source path.
func (t Trust) trustedSource(agent, path string) bool {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return false // no "..", no "//": the glob must see the real name
	}
	for _, pattern := range t.sources[agent] {
		if g, err := glob.Compile(pattern, '/'); err == nil && g.Match(path) {
			return true
		}
	}
	return false
}

// scratchFile reports whether path is a file named like pattern (a glob
// on the base name) directly in a temporary directory.
func (t Trust) scratchFile(path, pattern string) bool {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return false
	}
	if !slices.Contains(t.tmp, filepath.Dir(path)) {
		return false
	}
	ok, err := filepath.Match(pattern, filepath.Base(path))
	return err == nil && ok
}

// Unwrap recognises an agent's envelope around a command: program is the
// -c string, params the words after it ($0 $1 …). It reports false for
// anything that is not exactly one of the known shapes, so that whatever
// else surrounds a payload is judged with it.
//
// The shapes (see testdata/envelopes for real examples):
//
//	Claude Code: [ENVSCRIPT\n: &&] [source SNAPSHOT 2>/dev/null || true &&]
//	             [[\builtin ]shopt -u extglob 2>/dev/null || true &&]
//	             [{ \builtin unalias -- 'NAME'; \builtin unset -f -- 'NAME'; } >/dev/null 2>&1 || true &&]…
//	             eval 'PAYLOAD' [< /dev/null] && pwd -P >| /tmp/claude-XXXX-cwd
//	             (zsh: setopt NO_EXTENDED_GLOB [NO_BARE_GLOB_QUAL] instead of shopt;
//	             ENVSCRIPT is exactly the scripts of $CLAUDE_ENV_FILE and the session's
//	             env hooks, see claudeEnvScript)
//	Gemini CLI:  shopt -u promptvars nullglob extglob nocaseglob dotglob; { PAYLOAD; };
//	             __code=$?; pgrep -g 0 >/tmp/shell_pgrep_HEX.tmp 2>&1; exit $__code;
//	Gemini CLI 0.61 and later:
//	             shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/tmp/gemini-shell-XXXXXX/bgpids.tmp
//	             (
//	               trap 'jobs -p > "$_bgpids_file"' EXIT
//	             PAYLOAD
//	             )
//	             __code=$?
//	             exit $__code
//	Codex:       . "$1" && shift && exec "$@"   with $1 = SNAPSHOT and then SHELL -lc PAYLOAD
func (t Trust) Unwrap(program string, params []string) (Envelope, bool) {
	return t.UnwrapAs(program, params, DialectBash)
}

// UnwrapAs is Unwrap for a program handed to the shell d. A zsh reads the
// program as zsh, and only Claude Code's zsh forms are its envelope: the
// prologue's pieces are the zsh ones (setopt, a snapshot-zsh-* file), never
// bash's shopt, so that a program is unwrapped exactly in the shape the
// agent sends that shell. Gemini CLI and Codex never hand a zsh an
// envelope.
func (t Trust) UnwrapAs(program string, params []string, d Dialect) (Envelope, bool) {
	if len(program) > maxInput || !mayBeEnvelope(program, params) || shparse.CheckNesting(program) != nil {
		return Envelope{}, false
	}
	t.dialect = d
	// Refused like any program bash would read otherwise (shparse.Parse):
	// the plumbing is trusted only as bash reads it.
	f, err := shparse.Parse(program, d.lang())
	if err != nil {
		return Envelope{}, false
	}
	shapes := []func(string, *syntax.File, []string) (Envelope, bool){
		t.claudeCode, t.geminiCLI, t.geminiSubshell, t.codexSnapshot,
	}
	if d == DialectZsh {
		shapes = shapes[:1]
	}
	for _, shape := range shapes {
		if env, ok := shape(program, f, params); ok {
			return env, true
		}
	}
	return Envelope{}, false
}

// mayBeEnvelope is a quick look for a word each shape must contain, so
// that the commands in no envelope (nearly all of them) are not parsed
// twice.
func mayBeEnvelope(program string, params []string) bool {
	return strings.Contains(program, "pwd") || strings.Contains(program, "__code") ||
		len(params) >= 4 && strings.Contains(program, "exec")
}

// step is one command of an && / || list, with the operator after it.
type step struct {
	stmt *syntax.Stmt
	op   syntax.BinCmdOperator // 0 after the last
}

// andOrList flattens a statement made only of && and || into its commands
// in source order, which is the order bash runs them in (the operators
// have equal precedence and group to the left).
func andOrList(s *syntax.Stmt) ([]step, bool) {
	if !plainStmt(s) {
		return nil, false
	}
	b, ok := s.Cmd.(*syntax.BinaryCmd)
	if !ok {
		return []step{{stmt: s}}, true
	}
	if b.Op != syntax.AndStmt && b.Op != syntax.OrStmt || len(s.Redirs) > 0 {
		return nil, false
	}
	left, ok := andOrList(b.X)
	if !ok {
		return nil, false
	}
	right, ok := andOrList(b.Y)
	if !ok {
		return nil, false
	}
	left[len(left)-1].op = b.Op
	return append(left, right...), true
}

// plainStmt is a statement that is not negated, backgrounded or a
// coprocess: those change what the pieces around it mean.
func plainStmt(s *syntax.Stmt) bool {
	return s != nil && s.Cmd != nil && !s.Negated && !s.Background && !s.Coprocess && !s.Disown
}

// call returns the literal words of a simple command without assignments,
// and its redirections; ok is false for anything else.
func call(s *syntax.Stmt) (args []string, redirs []*syntax.Redirect, ok bool) {
	c, isCall := s.Cmd.(*syntax.CallExpr)
	if !isCall || len(c.Assigns) > 0 || len(c.Args) == 0 {
		return nil, nil, false
	}
	for _, w := range c.Args {
		lit, isLit := wordValue(w)
		if !isLit {
			return nil, nil, false
		}
		args = append(args, lit)
	}
	return args, s.Redirs, true
}

// LiteralWord is a word's value when it has no expansions: plain text and
// quotes only, with no escape, glob, tilde or brace that bash would change.
func LiteralWord(w *syntax.Word) (string, bool) { return wordValue(w) }

// wordValue is LiteralWord.
func wordValue(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "\\*?[~{") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(lit.Value, "\\$`") {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// redirect describes one redirection a piece may carry: the fd, operator
// and literal target; target "" accepts any target that check accepts.
type redirect struct {
	n      string
	op     syntax.RedirOperator
	target string
}

var (
	errNullRedirect = redirect{n: "2", op: syntax.RdrOut, target: "/dev/null"}
	inNullRedirect  = redirect{op: syntax.RdrIn, target: "/dev/null"}
)

// redirectsAre reports whether rs are exactly want, in order; check
// vets targets left empty in want.
func redirectsAre(rs []*syntax.Redirect, want []redirect, check func(string) bool) bool {
	if len(rs) != len(want) {
		return false
	}
	for i, r := range rs {
		w := want[i]
		n := ""
		if r.N != nil {
			n = r.N.Value
		}
		if n != w.n || r.Op != w.op || r.Hdoc != nil || r.Word == nil {
			return false
		}
		target, ok := wordValue(r.Word)
		if !ok || w.target != "" && target != w.target || w.target == "" && (check == nil || !check(target)) {
			return false
		}
	}
	return true
}

// claudeShellOptions are the option settings Claude Code's prologue may
// make, with the redirection it may carry.
var claudeShellOptions = [][]string{
	{"shopt", "-u", "extglob"},
	{"setopt", "NO_EXTENDED_GLOB"},
	{"setopt", "NO_EXTENDED_GLOB", "NO_BARE_GLOB_QUAL"},
}

// claudeBuiltinPieces are prologue pieces written with `\builtin` (Claude
// Code 2.1.2xx and later), so that a user's alias or function cannot stand
// in for them; wordValue refuses the backslash, so they are compared as
// source text.
var claudeBuiltinPieces = []string{
	`\builtin shopt -u extglob 2>/dev/null`,
	`\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null`,
	`\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS 2>/dev/null`,
}

// claudeGuard is the piece that takes away a user's alias and function of
// one name before the payload runs:
// { \builtin unalias -- 'NAME'; \builtin unset -f -- 'NAME'; } >/dev/null 2>&1
var claudeGuard = &lazyRegexp{expr: `^\{ \\builtin unalias -- '([A-Za-z_][A-Za-z0-9_.-]*)'; \\builtin unset -f -- '([A-Za-z_][A-Za-z0-9_.-]*)'; \} >/dev/null 2>&1$`}

// claudeCode recognises Claude Code's envelope.
func (t Trust) claudeCode(src string, f *syntax.File, _ []string) (Envelope, bool) {
	if len(f.Stmts) != 1 || len(f.Last) > 0 {
		return t.claudeWithEnvScript(src, f)
	}
	steps, ok := andOrList(f.Stmts[0])
	if !ok || len(steps) < 2 {
		return Envelope{}, false
	}
	// The epilogue: && pwd -P >| /tmp/claude-XXXX-cwd, last.
	last := steps[len(steps)-1]
	args, rs, ok := call(last.stmt)
	cwdFile := func(p string) bool { return t.scratchFile(p, "claude-*-cwd") }
	if !ok || !slices.Equal(args, []string{"pwd", "-P"}) ||
		!redirectsAre(rs, []redirect{{op: syntax.ClbOut}}, cwdFile) ||
		steps[len(steps)-2].op != syntax.AndStmt {
		return Envelope{}, false
	}
	// The payload: eval 'PAYLOAD' [< /dev/null], just before.
	args, rs, ok = call(steps[len(steps)-2].stmt)
	if !ok || len(args) != 2 || args[0] != "eval" ||
		!redirectsAre(rs, nil, nil) && !redirectsAre(rs, []redirect{inNullRedirect}, nil) {
		return Envelope{}, false
	}
	payload := args[1]
	// The prologue: each piece either "X &&" or "X || true &&".
	for rest := steps[:len(steps)-2]; len(rest) > 0; {
		if !t.claudePrologue(src, rest[0].stmt) {
			return Envelope{}, false
		}
		switch {
		case rest[0].op == syntax.AndStmt:
			rest = rest[1:]
		case rest[0].op == syntax.OrStmt && len(rest) > 1 && rest[1].op == syntax.AndStmt && isTrue(rest[1].stmt):
			rest = rest[2:]
		default:
			return Envelope{}, false
		}
	}
	return Envelope{Agent: AgentClaudeCode, Via: AgentLabel(AgentClaudeCode), Payload: payload}, true
}

// claudePrologue reports whether s is one of the pieces Claude Code puts
// before the payload, optionally with 2>/dev/null.
func (t Trust) claudePrologue(src string, s *syntax.Stmt) bool {
	if t.dialect == DialectZsh {
		return t.claudeZshPrologue(src, s)
	}
	if text, ok := stmtSource(src, s); ok {
		// A bash has no setopt: `\builtin setopt …` fails there, quietly.
		if slices.Contains(claudeBuiltinPieces, text) || claudeZshSetopt(text) {
			return true
		}
		if m := claudeGuard.get().FindStringSubmatch(text); m != nil && m[1] == m[2] {
			return true
		}
	}
	args, rs, ok := call(s)
	if !ok || !redirectsAre(rs, nil, nil) && !redirectsAre(rs, []redirect{errNullRedirect}, nil) {
		return false
	}
	if len(args) == 2 && (args[0] == "source" || args[0] == ".") {
		return t.trustedSource(AgentClaudeCode, args[1])
	}
	for _, o := range claudeShellOptions {
		if slices.Equal(args, o) {
			return true
		}
	}
	return false
}

// stmtSource is the source text of a plain statement (no heredoc, which
// would put text elsewhere).
func stmtSource(src string, s *syntax.Stmt) (string, bool) {
	if !plainStmt(s) || hasHeredoc(s) {
		return "", false
	}
	start, end := int(s.Pos().Offset()), int(s.End().Offset())
	if start < 0 || start > end || end > len(src) {
		return "", false
	}
	return src[start:end], true
}

func isTrue(s *syntax.Stmt) bool {
	args, rs, ok := call(s)
	return ok && len(rs) == 0 && slices.Equal(args, []string{"true"})
}

// geminiOptions are the shell options Gemini CLI turns off first.
var geminiOptions = []string{"promptvars", "nullglob", "extglob", "nocaseglob", "dotglob"}

// geminiCLI recognises Gemini CLI's envelope.
func (t Trust) geminiCLI(src string, f *syntax.File, _ []string) (Envelope, bool) {
	if len(f.Stmts) != 5 || len(f.Last) > 0 {
		return Envelope{}, false
	}
	for _, s := range f.Stmts {
		if !plainStmt(s) {
			return Envelope{}, false
		}
	}
	// shopt -u promptvars nullglob extglob nocaseglob dotglob
	args, rs, ok := call(f.Stmts[0])
	if !ok || len(rs) > 0 || len(args) < 3 || args[0] != "shopt" || args[1] != "-u" {
		return Envelope{}, false
	}
	for _, o := range args[2:] {
		if !slices.Contains(geminiOptions, o) {
			return Envelope{}, false
		}
	}
	// { PAYLOAD; }
	block, ok := f.Stmts[1].Cmd.(*syntax.Block)
	if !ok || len(f.Stmts[1].Redirs) > 0 || len(block.Stmts) == 0 {
		return Envelope{}, false
	}
	// __code=$?
	c, ok := f.Stmts[2].Cmd.(*syntax.CallExpr)
	if !ok || len(f.Stmts[2].Redirs) > 0 || len(c.Args) > 0 || len(c.Assigns) != 1 || !isExitStatusAssign(c.Assigns[0]) {
		return Envelope{}, false
	}
	// pgrep -g 0 >/tmp/shell_pgrep_HEX.tmp 2>&1
	args, rs, ok = call(f.Stmts[3])
	pgrepFile := func(p string) bool { return t.scratchFile(p, "shell_pgrep_*.tmp") }
	if !ok || !slices.Equal(args, []string{"pgrep", "-g", "0"}) ||
		!redirectsAre(rs, []redirect{{op: syntax.RdrOut}, {n: "2", op: syntax.DplOut, target: "1"}}, pgrepFile) {
		return Envelope{}, false
	}
	// exit $__code
	x, ok := f.Stmts[4].Cmd.(*syntax.CallExpr)
	if !ok || len(f.Stmts[4].Redirs) > 0 || len(x.Assigns) > 0 || len(x.Args) != 2 ||
		x.Args[0].Lit() != "exit" || !isParam(x.Args[1], "__code") {
		return Envelope{}, false
	}
	if hasHeredoc(block) {
		// A here-document's body follows the line it starts on, past the
		// closing brace, where blockSource would not show it; Gemini's
		// own envelope cannot carry one anyway.
		return Envelope{}, false
	}
	payload := blockSource(src, block)
	if payload == "" {
		return Envelope{}, false
	}
	return Envelope{Agent: AgentGeminiCLI, Via: AgentLabel(AgentGeminiCLI), Payload: payload}, true
}

// hasHeredoc reports whether n holds a here-document.
func hasHeredoc(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && r.Hdoc != nil {
			found = true
		}
		return !found
	})
	return found
}

// blockSource is the text between a block's braces, without the blank
// space and the one ";" the envelope adds before "}".
func blockSource(src string, b *syntax.Block) string {
	start, end := int(b.Lbrace.Offset())+1, int(b.Rbrace.Offset())
	if start > end || end > len(src) {
		return ""
	}
	s := strings.TrimSpace(src[start:end])
	s = strings.TrimSuffix(s, ";")
	return strings.TrimSpace(s)
}

// isExitStatusAssign is `__code=$?`.
func isExitStatusAssign(a *syntax.Assign) bool {
	if a.Name == nil || a.Name.Value != "__code" || a.Append || a.Naked || a.Index != nil || a.Array != nil || a.Value == nil {
		return false
	}
	return isParam(a.Value, "?")
}

// isParam is a word that is exactly $name.
func isParam(w *syntax.Word, name string) bool {
	if len(w.Parts) != 1 {
		return false
	}
	p, ok := w.Parts[0].(*syntax.ParamExp)
	return ok && p.Short && p.Param != nil && p.Param.Value == name &&
		!p.Excl && !p.Length && !p.Width && p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil
}

// codexShells are the shells Codex's snapshot envelope may exec and have
// the payload judged as bash: only bash, since sh (dash) and zsh read some
// text differently (`$'…'`), and the payload is judged as bash reads it.
var codexShells = []string{"bash"}

// codexSnapshot recognises the envelope Codex uses with shell snapshots:
// the -c program sources a positional parameter, shifts it away and execs
// the rest, which is `SHELL -lc PAYLOAD`.
func (t Trust) codexSnapshot(src string, f *syntax.File, params []string) (Envelope, bool) {
	if len(f.Stmts) != 1 || len(f.Last) > 0 || len(params) == 0 {
		return Envelope{}, false
	}
	steps, ok := andOrList(f.Stmts[0])
	if !ok || len(steps) < 2 {
		return Envelope{}, false
	}
	positional := params[1:] // $1 …
	// . "$N"
	c, ok := steps[0].stmt.Cmd.(*syntax.CallExpr)
	if !ok || len(steps[0].stmt.Redirs) > 0 || len(c.Assigns) > 0 || len(c.Args) != 2 ||
		c.Args[0].Lit() != "." && c.Args[0].Lit() != "source" || steps[0].op != syntax.AndStmt {
		return Envelope{}, false
	}
	n, ok := quotedPositional(c.Args[1])
	if !ok || n > len(positional) {
		return Envelope{}, false
	}
	var sourced string
	if n == 0 {
		sourced = params[0]
	} else {
		sourced = positional[n-1]
	}
	if !t.trustedSource(AgentCodex, sourced) {
		return Envelope{}, false
	}
	// [shift &&]… exec "$@"
	for _, st := range steps[1 : len(steps)-1] {
		args, rs, ok := call(st.stmt)
		if !ok || len(rs) > 0 || !slices.Equal(args, []string{"shift"}) || st.op != syntax.AndStmt || len(positional) == 0 {
			return Envelope{}, false
		}
		positional = positional[1:]
	}
	x, ok := steps[len(steps)-1].stmt.Cmd.(*syntax.CallExpr)
	if !ok || len(steps[len(steps)-1].stmt.Redirs) > 0 || len(x.Assigns) > 0 || len(x.Args) != 2 ||
		x.Args[0].Lit() != "exec" || !isQuotedAt(x.Args[1]) {
		return Envelope{}, false
	}
	if len(positional) != 3 || !slices.Contains(codexShells, filepath.Base(positional[0])) ||
		positional[1] != "-lc" && positional[1] != "-c" {
		return Envelope{}, false
	}
	return Envelope{Agent: AgentCodex, Via: AgentLabel(AgentCodex), Payload: positional[2], Shell: positional[0]}, true
}

// quotedPositional is the N of a word that is exactly "$N" (N < 10).
func quotedPositional(w *syntax.Word) (int, bool) {
	if len(w.Parts) != 1 {
		return 0, false
	}
	q, ok := w.Parts[0].(*syntax.DblQuoted)
	if !ok || q.Dollar || len(q.Parts) != 1 {
		return 0, false
	}
	p, ok := q.Parts[0].(*syntax.ParamExp)
	if !ok || !p.Short || p.Param == nil || len(p.Param.Value) != 1 || p.Param.Value[0] < '0' || p.Param.Value[0] > '9' {
		return 0, false
	}
	return int(p.Param.Value[0] - '0'), true
}

// isQuotedAt is a word that is exactly "$@".
func isQuotedAt(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	q, ok := w.Parts[0].(*syntax.DblQuoted)
	if !ok || q.Dollar || len(q.Parts) != 1 {
		return false
	}
	p, ok := q.Parts[0].(*syntax.ParamExp)
	return ok && p.Short && p.Param != nil && p.Param.Value == "@"
}

// String describes the envelope for logs: "Claude Code envelope".
func (e Envelope) String() string {
	return fmt.Sprintf("%s envelope", e.Via)
}

// claudeZshPieces are the option settings of Claude Code's prologue for a
// zsh, as source text: zsh's own options, which a bash would not have.
var claudeZshPieces = []string{
	`setopt NO_EXTENDED_GLOB 2>/dev/null`,
	`setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null`,
	`\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null`,
	`\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS 2>/dev/null`,
}

// claudeZshSetopt is a zsh prologue piece by what it does: `\builtin
// setopt` of options that each turn an expansion off or keep zsh's
// default (Claude Code adds to the list from release to release: 2.1.332
// has NO_RC_QUOTES), so zsh reads the payload as execgate does or with
// less expanded.
func claudeZshSetopt(text string) bool {
	rest, ok := strings.CutPrefix(text, `\builtin setopt `)
	if !ok {
		return false
	}
	rest, ok = strings.CutSuffix(rest, " 2>/dev/null")
	if !ok || rest == "" {
		return false
	}
	for _, opt := range strings.Split(rest, " ") {
		switch opt {
		case "NO_BARE_GLOB_QUAL", // no (…) qualifiers after a glob
			"NO_BRACE_CCL",         // the default: no {a-z} ranges
			"NO_EQUALS",            // no =cmd path expansion
			"NO_EXTENDED_GLOB",     // the default: no ^, ~ or # in globs
			"NO_MAGIC_EQUAL_SUBST", // the default: no ~ after = in words
			"NO_RC_QUOTES":         // the default: '' is no quote in '…'
		default:
			return false
		}
	}
	return true
}

// claudeZshPrologue is claudePrologue for a zsh: the zsh option pieces,
// the unalias/unset guards, and the source of a zsh snapshot in Claude
// Code's snapshot directory.
func (t Trust) claudeZshPrologue(src string, s *syntax.Stmt) bool {
	text, ok := stmtSource(src, s)
	if !ok {
		return false
	}
	if slices.Contains(claudeZshPieces, text) || claudeZshSetopt(text) {
		return true
	}
	if m := claudeGuard.get().FindStringSubmatch(text); m != nil && m[1] == m[2] {
		return true
	}
	args, rs, ok := call(s)
	if !ok || !redirectsAre(rs, nil, nil) && !redirectsAre(rs, []redirect{errNullRedirect}, nil) {
		return false
	}
	return len(args) == 2 && (args[0] == "source" || args[0] == ".") &&
		strings.HasPrefix(filepath.Base(args[1]), "snapshot-zsh-") && t.trustedSource(AgentClaudeCode, args[1])
}
