package policy

import (
	"cmp"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/policy/shparse"
)

// This file holds the harness shapes that are not a payload in plumbing:
// Gemini CLI 0.61's subshell wrapper, Claude Code's environment scripts
// before its prologue, and Claude Code's own start-up commands (the `env`
// probe and the shell-snapshot writer), which run no model command at all.
// The wrappers are recognised by their structure, the snapshot writer by
// what it does (plumbing.go); anything more around them is judged like any
// other command.

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
	if _, err := shparse.Parse(script, t.dialect.lang()); err != nil {
		return Envelope{}, false
	}
	rest := src[:i] + src[i+len(marker):]
	g, err := shparse.Parse(rest, t.dialect.lang())
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
// is recognised by what it does (see plumbing.go), so that a release that
// rewords it still runs; the writers the real CLIs sent are kept as tests
// (testdata/envelopes/captured). The result has Harness set and no
// payload.
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
	case strings.HasPrefix(program, snapshotVar+"=") && t.claudeSnapshotByEffect(program):
		env.Harness = "shell snapshot"
		return env, true
	}
	return Envelope{}, false
}

// HarnessProblem says why program is not the agent's start-up command it
// looks like ("" when it is one, or looks like none): for the end-to-end
// tests' note on a new release's writer.
func (t Trust) HarnessProblem(program string, d Dialect) string {
	t.dialect = d
	if !strings.HasPrefix(program, snapshotVar+"=") {
		return ""
	}
	return t.snapshotWriterProblem(program)
}

// claudeRCFiles are the start-up files the snapshot writer may source,
// under the home directory.
var claudeRCFiles = []string{".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".zshenv"}
