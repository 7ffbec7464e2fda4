package policy

import (
	"cmp"
	"embed"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// This file holds the harness shapes that are not a payload in plumbing:
// Gemini CLI 0.61's subshell wrapper, Claude Code's environment scripts
// before its prologue, and Claude Code's own start-up commands (the `env`
// probe and the shell-snapshot writer), which run no model command at all.
// Each is recognised by its exact structure; anything more or less around
// it is judged like any other command.

// geminiSubshell recognises the wrapper of Gemini CLI 0.61 and later:
//
//	shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/tmp/gemini-shell-XXXXXX/bgpids.tmp
//	(
//	  trap 'jobs -p > "$_bgpids_file"' EXIT
//	PAYLOAD
//	)
//	__code=$?
//	exit $__code
func (t Trust) geminiSubshell(src string, f *syntax.File, _ []string) (Envelope, bool) {
	if len(f.Stmts) != 5 || len(f.Last) > 0 {
		return Envelope{}, false
	}
	for _, s := range f.Stmts {
		if !plainStmt(s) {
			return Envelope{}, false
		}
	}
	if !geminiShopt(f.Stmts[0]) {
		return Envelope{}, false
	}
	// _bgpids_file=/tmp/gemini-shell-XXXXXX/bgpids.tmp
	c, ok := f.Stmts[1].Cmd.(*syntax.CallExpr)
	if !ok || len(f.Stmts[1].Redirs) > 0 || len(c.Args) > 0 || len(c.Assigns) != 1 {
		return Envelope{}, false
	}
	a := c.Assigns[0]
	if a.Name == nil || a.Name.Value != "_bgpids_file" || a.Append || a.Naked || a.Index != nil || a.Array != nil || a.Value == nil {
		return Envelope{}, false
	}
	if path, ok := wordValue(a.Value); !ok || !t.geminiBgpidsFile(path) {
		return Envelope{}, false
	}
	// ( trap 'jobs -p > "$_bgpids_file"' EXIT \n PAYLOAD \n )
	sub, ok := f.Stmts[2].Cmd.(*syntax.Subshell)
	if !ok || len(f.Stmts[2].Redirs) > 0 || len(sub.Stmts) < 2 || len(sub.Last) > 0 {
		return Envelope{}, false
	}
	trap := sub.Stmts[0]
	args, rs, ok := call(trap)
	if !ok || len(rs) > 0 || !plainStmt(trap) || !slices.Equal(args, []string{"trap", `jobs -p > "$_bgpids_file"`, "EXIT"}) {
		return Envelope{}, false
	}
	start, end := int(trap.End().Offset()), int(sub.Rparen.Offset())
	if start > end || end > len(src) {
		return Envelope{}, false
	}
	// The payload is on lines of its own between the trap and the ")".
	payload, ok := strings.CutPrefix(src[start:end], "\n")
	if payload, ok = strings.CutSuffix(payload, "\n"); !ok || strings.TrimSpace(payload) == "" {
		return Envelope{}, false
	}
	if !isCodeAssign(f.Stmts[3]) || !isExitCode(f.Stmts[4]) {
		return Envelope{}, false
	}
	return Envelope{Agent: AgentGeminiCLI, Via: AgentLabel(AgentGeminiCLI), Payload: payload, Reads: []string{"_bgpids_file"}}, true
}

// geminiShopt is `shopt -u` with only the options Gemini CLI turns off.
func geminiShopt(s *syntax.Stmt) bool {
	args, rs, ok := call(s)
	if !ok || len(rs) > 0 || len(args) < 3 || args[0] != "shopt" || args[1] != "-u" {
		return false
	}
	for _, o := range args[2:] {
		if !slices.Contains(geminiOptions, o) {
			return false
		}
	}
	return true
}

// isCodeAssign is the statement `__code=$?`.
func isCodeAssign(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(s.Redirs) == 0 && len(c.Args) == 0 && len(c.Assigns) == 1 && isExitStatusAssign(c.Assigns[0])
}

// isExitCode is the statement `exit $__code`.
func isExitCode(s *syntax.Stmt) bool {
	x, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(s.Redirs) == 0 && len(x.Assigns) == 0 && len(x.Args) == 2 &&
		x.Args[0].Lit() == "exit" && isParam(x.Args[1], "__code")
}

// geminiBgpidsFile is bgpids.tmp in a gemini-shell-* directory directly
// in a temporary directory.
func (t Trust) geminiBgpidsFile(path string) bool {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path || filepath.Base(path) != "bgpids.tmp" {
		return false
	}
	dir := filepath.Dir(path)
	ok, err := filepath.Match("gemini-shell-*", filepath.Base(dir))
	return err == nil && ok && slices.Contains(t.tmp, filepath.Dir(dir))
}

// maxEnvScript bounds one environment script execgate reads to compare.
const maxEnvScript = 1 << 20

// claudeEnvHookFile names the scripts Claude Code's env hooks leave in
// its session-env directory.
var claudeEnvHookFile = &lazyRegexp{expr: `^(setup|sessionstart|cwdchanged|filechanged)-hook-(\d+)\.sh$`}

// claudeEnvHookOrder is the order Claude Code reads its env hooks' kinds
// in (then by number); the table is sorted by name (see table).
var claudeEnvHookOrder = table[int]{{"cwdchanged", 2}, {"filechanged", 3}, {"sessionstart", 1}, {"setup", 0}}

// claudeWithEnvScript recognises Claude Code's envelope with environment
// scripts among its prologue pieces: "… && SCRIPT\n: && …". Claude Code
// reads $CLAUDE_ENV_FILE and then the env hooks' scripts of the session
// (CLAUDE_CONFIG_DIR/session-env/SESSION/), each trimmed, the empty ones
// left out, joined by newlines; execgate reads the same files and looks for
// exactly that text. The scripts are the user's own set-up, like the shell
// snapshot, and are not judged; a script that differs from them by one
// byte is no harness. With SCRIPT\n: taken out, the rest must be the
// ordinary envelope.
func (t Trust) claudeWithEnvScript(src string, f *syntax.File) (Envelope, bool) {
	if len(f.Stmts) < 2 || len(f.Last) > 0 || !strings.Contains(src, "\n: && ") {
		return Envelope{}, false
	}
	script, ok := t.claudeEnvScript()
	if !ok || script == "" {
		return Envelope{}, false
	}
	marker := script + "\n: && "
	i := strings.Index(src, marker)
	if i < 0 || i > 0 && !strings.HasSuffix(src[:i], " && ") {
		return Envelope{}, false
	}
	// The script ends where bash ends it: the last statement is the one
	// that starts with ":", so nothing of the script runs on into it.
	colon := i + len(script) + 1
	last := f.Stmts[len(f.Stmts)-1]
	if int(last.Pos().Offset()) != colon {
		return Envelope{}, false
	}
	if _, err := parseProgram(script, t.dialect.lang()); err != nil {
		return Envelope{}, false
	}
	rest := src[:i] + src[i+len(marker):]
	g, err := parseProgram(rest, t.dialect.lang())
	if err != nil || len(g.Stmts) != 1 {
		return Envelope{}, false
	}
	return t.claudeCode(rest, g, nil)
}

func (t Trust) claudeEnvScript() (string, bool) {
	var parts []string
	if f := t.getenv("CLAUDE_ENV_FILE"); f != "" {
		text, err := readLimited(f)
		if err != nil && !os.IsNotExist(err) {
			return "", false
		}
		if text = strings.TrimSpace(text); text != "" {
			parts = append(parts, text)
		}
	}
	session := t.getenv("CLAUDE_CODE_SESSION_ID")
	if session != "" && filepath.Base(session) == session && session != "." && session != ".." {
		dir := filepath.Join(t.claudeConfigDir(), "session-env", session)
		entries, err := os.ReadDir(dir)
		if err != nil && !os.IsNotExist(err) {
			return "", false
		}
		type hookFile struct {
			name, kind string
			n          int
		}
		var files []hookFile
		for _, e := range entries {
			if m := claudeEnvHookFile.get().FindStringSubmatch(e.Name()); m != nil {
				n, _ := strconv.Atoi(m[2])
				files = append(files, hookFile{e.Name(), m[1], n})
			}
		}
		slices.SortStableFunc(files, func(a, b hookFile) int {
			return cmp.Or(cmp.Compare(claudeEnvHookOrder.get(a.kind), claudeEnvHookOrder.get(b.kind)), cmp.Compare(a.n, b.n))
		})
		for _, h := range files {
			text, err := readLimited(filepath.Join(dir, h.name))
			if err != nil {
				return "", false
			}
			if text = strings.TrimSpace(text); text != "" {
				parts = append(parts, text)
			}
		}
	}
	return strings.Join(parts, "\n"), true
}

// claudeConfigDir is where Claude Code keeps its state.
func (t Trust) claudeConfigDir() string {
	if d := t.getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(t.home, ".claude")
}

func readLimited(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEnvScript+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxEnvScript {
		return "", os.ErrInvalid
	}
	return string(b), nil
}

// Harness recognises an agent's own start-up commands, which carry no
// model command: Claude Code's `bash -c env` probe and its shell-snapshot
// writer (`bash -c -l "SNAPSHOT_FILE=…"`). agent is the agent the caller's
// environment names: only Claude Code's own process runs them. The writer
// is compared with the templates in harness/, made from the scripts the
// real CLI sent (testdata/envelopes/captured); its variable parts (the
// snapshot file, the rc file, Claude's own path, the PATH it records, a
// random here-document delimiter) must each have their expected form.
// The result has Harness set and no payload.
func (t Trust) Harness(program string, params []string, agent string) (Envelope, bool) {
	return t.HarnessAs(program, params, agent, DialectBash)
}

// HarnessAs is Harness for a program handed to the shell d: a zsh's
// snapshot writer must write a snapshot-zsh-* file, as Claude Code's
// writer for zsh does.
func (t Trust) HarnessAs(program string, params []string, agent string, d Dialect) (Envelope, bool) {
	t.dialect = d
	if agent != AgentClaudeCode || len(params) > 0 || len(program) > maxInput {
		return Envelope{}, false
	}
	env := Envelope{Agent: AgentClaudeCode, Via: AgentLabel(AgentClaudeCode)}
	switch {
	case program == "env":
		env.Harness = "environment probe"
		return env, true
	case strings.HasPrefix(program, "SNAPSHOT_FILE=") && t.claudeSnapshotWriter(program):
		env.Harness = "shell snapshot"
		return env, true
	}
	return Envelope{}, false
}

//go:embed harness
var harnessFiles embed.FS

// snapshotSlots are the slots of the snapshot-writer templates, with the
// bytes each value may hold. Every template puts a byte outside the set
// right after each slot, so a value is the longest run of such bytes.
var snapshotSlots = table[func(byte) bool]{
	{"{{CLAUDE_BIN}}", pathByte},
	{"{{CLAUDE_EXE}}", pathByte},
	{"{{DELIM}}", func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }},
	{"{{PATH}}", func(c byte) bool { return pathByte(c) || c == ':' }},
	{"{{RCFILE}}", pathByte},
	{"{{SNAPSHOT_FILE}}", pathByte},
}

// pathByte is a byte of a path that needs no quoting anywhere in a script.
func pathByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_./@+-", c) >= 0
}

var slotName = &lazyRegexp{expr: `\{\{[A-Z_]+\}\}`}

// snapshotTemplate is one template: literal text and slots, alternating,
// starting and ending with literal text (maybe empty).
type snapshotTemplate struct {
	literals []string
	slots    []string
}

// snapshotTemplates returns the templates of harness/*.tmpl, read on first
// use; they are fixed at build time.
func snapshotTemplates() []snapshotTemplate {
	harnessTemplates.once.Do(func() { harnessTemplates.list = readSnapshotTemplates() })
	return harnessTemplates.list
}

// harnessTemplates holds what snapshotTemplates read. A zero sync.Once
// costs nothing at start-up, where a package-level sync.OnceValue is
// built by init code in every shim process. Should reading panic, the
// list stays empty: no snapshot writer is recognised, the strict side.
var harnessTemplates struct {
	once sync.Once
	list []snapshotTemplate
}

// readSnapshotTemplates reads and compiles harness/*.tmpl.
func readSnapshotTemplates() []snapshotTemplate {
	entries, _ := harnessFiles.ReadDir("harness")
	var out []snapshotTemplate
	for _, e := range entries {
		raw, err := harnessFiles.ReadFile("harness/" + e.Name())
		if err != nil || !strings.HasPrefix(e.Name(), "claude-snapshot-") {
			continue
		}
		if tm, ok := compileTemplate(string(raw)); ok {
			out = append(out, tm)
		}
	}
	return out
}

// compileTemplate splits a template at its slots. A template with an
// unknown slot, or a slot followed by a byte it could hold, is dropped (it
// could only match less).
func compileTemplate(text string) (snapshotTemplate, bool) {
	var tm snapshotTemplate
	last := 0
	for _, loc := range slotName.get().FindAllStringIndex(text, -1) {
		name := text[loc[0]:loc[1]]
		in, ok := snapshotSlots.lookup(name)
		if !ok || loc[1] >= len(text) || in(text[loc[1]]) {
			return snapshotTemplate{}, false
		}
		tm.literals = append(tm.literals, text[last:loc[0]])
		tm.slots = append(tm.slots, name)
		last = loc[1]
	}
	tm.literals = append(tm.literals, text[last:])
	return tm, true
}

// match returns the slots' values when program is exactly the template.
func (tm snapshotTemplate) match(program string) ([]string, bool) {
	rest, ok := strings.CutPrefix(program, tm.literals[0])
	if !ok {
		return nil, false
	}
	values := make([]string, len(tm.slots))
	for i, name := range tm.slots {
		in := snapshotSlots.get(name)
		n := 0
		for n < len(rest) && in(rest[n]) {
			n++
		}
		values[i] = rest[:n]
		if rest, ok = strings.CutPrefix(rest[n:], tm.literals[i+1]); !ok {
			return nil, false
		}
	}
	return values, rest == ""
}

// claudeRCFiles are the start-up files the snapshot writer may source,
// under the home directory.
var claudeRCFiles = []string{".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".zshenv"}

// claudeSnapshotWriter reports whether program is one of the snapshot
// writer's templates with acceptable values in its slots.
func (t Trust) claudeSnapshotWriter(program string) bool {
	for _, tm := range snapshotTemplates() {
		if values, ok := tm.match(program); ok && t.snapshotValues(tm.slots, values) {
			return true
		}
	}
	return false
}

// snapshotValues checks the values a template matched: the snapshot is a
// trusted snapshot file, the rc file one of the user's own, and each slot
// that recurs has one value.
func (t Trust) snapshotValues(slots, values []string) bool {
	seen := map[string]string{}
	for i, name := range slots {
		v := values[i]
		if prev, ok := seen[name]; ok && prev != v {
			return false
		}
		seen[name] = v
		switch name {
		case "{{SNAPSHOT_FILE}}":
			if !t.trustedSource(AgentClaudeCode, v) {
				return false
			}
			if t.dialect == DialectZsh && !strings.HasPrefix(filepath.Base(v), "snapshot-zsh-") {
				return false
			}
		case "{{RCFILE}}":
			if t.home == "" || !slices.ContainsFunc(claudeRCFiles, func(rc string) bool { return v == filepath.Join(t.home, rc) }) {
				return false
			}
		case "{{CLAUDE_BIN}}", "{{CLAUDE_EXE}}":
			if !filepath.IsAbs(v) || filepath.Clean(v) != v {
				return false
			}
		}
	}
	return true
}
