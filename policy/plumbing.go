package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/policy/shparse"
)

// This file recognises Claude Code's shell-snapshot writer by what it
// does, not by its bytes: Claude Code ships several releases a week, and
// each may reword, re-indent or reorder the script. The writer is
// `SNAPSHOT_FILE=PATH` followed by a script; it is Claude Code's own
// plumbing when
//
//   - PATH is a snapshot file in Claude Code's own snapshot directory
//     (the trusted sources the envelope may source later);
//   - every redirection in the script writes that file ("$SNAPSHOT_FILE",
//     never reassigned), reads or writes /dev/null, duplicates stdout and
//     stderr, or is a here-document with a quoted delimiter (data: nothing
//     in it is expanded);
//   - the same analysis that judges every command finds nothing in the
//     script but read-only programs and the few things a snapshot writer
//     does to its own shell (writerAllows): list functions and options,
//     source one of the user's own start-up files;
//   - the code it writes into the snapshot, which every later command
//     sources, is judged too (snapshotCodeAllows): it may take aliases
//     away, turn on expand_aliases, record the very PATH it runs with, and
//     define the functions that stand in for the tools Claude Code
//     bundles (bundledTools), which run nothing but that tool or the
//     program they are named for. The shell state it copies (the user's
//     functions, options and aliases, from their own start-up files) is
//     the user's, trusted as before.
//
// Anything else — a command before, after or among it, a write elsewhere,
// an unquoted here-document, a snapshot outside the state directory, a
// function for another command, a PATH of its own — and it is judged as
// any program is.

// snapshotVar is the variable the writer keeps the snapshot's path in.
const snapshotVar = "SNAPSHOT_FILE"

// claudeSnapshotByEffect reports whether program is a snapshot writer
// whose every effect is Claude Code's own plumbing (see above).
func (t Trust) claudeSnapshotByEffect(program string) bool {
	return t.snapshotWriterProblem(program) == ""
}

// snapshotWriterProblem is why program is not Claude Code's snapshot
// writer, or "" when it is.
func (t Trust) snapshotWriterProblem(program string) string {
	f, err := shparse.Parse(program, t.dialect.lang())
	if err != nil {
		return "does not parse: " + err.Error()
	}
	if len(f.Stmts) < 2 || len(f.Last) > 0 {
		return "no script after the assignment"
	}
	path, ok := snapshotAssign(f.Stmts[0])
	if !ok {
		return "does not start with SNAPSHOT_FILE=PATH"
	}
	if !t.snapshotFile(path) {
		return "the snapshot " + path + " is not in Claude Code's snapshot directory"
	}
	end := int(f.Stmts[0].End().Offset())
	if end >= len(program) || program[end] != '\n' {
		return "more on the assignment's line"
	}
	// The rest is judged on its own: the assignment has no redirection,
	// so nothing of it reaches past its line.
	rest := program[end:]
	g, err := shparse.Parse(rest, t.dialect.lang())
	if err != nil {
		return "does not parse: " + err.Error()
	}
	scan, why := scanWriter(g, rest)
	if why != "" {
		return why
	}
	eng, err := NewEngine()
	if err != nil {
		return err.Error()
	}
	// Judged where it runs: the directory Claude Code started it in.
	cwd, err := os.Getwd()
	if err != nil {
		return "no current directory: " + err.Error()
	}
	// The whole program is judged, the assignment too: the analysis then
	// knows what "$SNAPSHOT_FILE" holds where the writer prints it.
	res := eng.Analyze(Request{Command: program, Cwd: cwd, Home: t.home, Getenv: t.getenv, Dialect: t.dialect})
	switch {
	case res.ParseError != "":
		return "does not parse: " + res.ParseError
	case !readsOnlyAssigned(f, snapshotVar):
		return "may set SNAPSHOT_FILE again, or read it before it is set"
	case res.assignsUnknown:
		return "sets a variable whose name is only known at run time, which may be SNAPSHOT_FILE"
	}
	for _, seg := range res.Segments {
		if why := t.writerProblem(seg, scan); why != "" {
			return why
		}
	}
	return t.snapshotCodeProblem(scan.code.String(), cwd)
}

// readsOnlyAssigned reports whether every read of name in f is of the
// literal text its one assignment gave it (see literalvars.go).
func readsOnlyAssigned(f *syntax.File, name string) bool {
	lv := findLiteralVars(f)
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		if p, isParam := n.(*syntax.ParamExp); isParam && p.Param != nil && p.Param.Value == name {
			if _, known := lv[p]; !known {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// snapshotFile is a snapshot file Claude Code's envelope may source: in
// its snapshot directory, and for a zsh a snapshot-zsh-* file.
func (t Trust) snapshotFile(path string) bool {
	if !t.trustedSource(AgentClaudeCode, path) {
		return false
	}
	return t.dialect != DialectZsh || strings.HasPrefix(filepath.Base(path), "snapshot-zsh-")
}

// snapshotAssign is the statement SNAPSHOT_FILE=PATH, with PATH literal.
func snapshotAssign(s *syntax.Stmt) (string, bool) {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || !plainStmt(s) || len(s.Redirs) > 0 || len(c.Args) > 0 || len(c.Assigns) != 1 {
		return "", false
	}
	a := c.Assigns[0]
	if a.Name == nil || a.Name.Value != snapshotVar || a.Append || a.Naked || a.Index != nil || a.Array != nil || a.Value == nil {
		return "", false
	}
	return wordValue(a.Value)
}

// writerScan is what the walk over the writer's syntax found.
type writerScan struct {
	// code is the text the writer puts into the snapshot, in the order
	// written: echo's and printf's words, quoted here-documents, with
	// copiedState where it copies the shell's own state.
	code strings.Builder
	// base64Vars hold only base64 text, of the shell's own state.
	base64Vars map[string]bool
	handled    map[*syntax.Stmt]bool
	// dests maps the text of each statement to where its standard output
	// goes: "snapshot", "null", "captured" (a command substitution),
	// "stderr" or "runner" (the writer's own output).
	dests map[string]map[string]bool
}

// printsOnlyInside reports whether every statement spelt text sends what
// it prints into the snapshot, /dev/null or a command substitution: none
// of it reaches a CI runner's log, where a workflow command would act.
func (scan writerScan) printsOnlyInside(text string) bool {
	dests := scan.dests[text]
	if len(dests) == 0 {
		return false
	}
	for d := range dests {
		if d != "snapshot" && d != "null" && d != "captured" {
			return false
		}
	}
	return true
}

// outputDests fills scan.dests for the statements of f.
func (scan *writerScan) outputDests(f *syntax.File, src string) {
	scan.dests = map[string]map[string]bool{}
	for _, s := range f.Stmts {
		scan.destStmt(s, src, "runner")
	}
}

// destStmt records where s prints, given that its context sends output to
// dest, and walks what is inside it.
func (scan *writerScan) destStmt(s *syntax.Stmt, src, dest string) {
	if to, writes := stdoutTarget(s); writes {
		dest = to
	}
	text := nodeText(src, s)
	if scan.dests[text] == nil {
		scan.dests[text] = map[string]bool{}
	}
	scan.dests[text][dest] = true
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		// What the stages before the last print flows into the last: it
		// ends where the last stage's output does.
		stages := flattenPipe(s)
		last := stages[len(stages)-1]
		into := dest
		if to, writes := stdoutTarget(last); writes {
			into = to
		}
		for _, st := range stages[:len(stages)-1] {
			scan.destStmt(st, src, into)
		}
		scan.destStmt(last, src, dest)
		for _, r := range s.Redirs {
			scan.destInside(r, src, dest)
		}
		return
	}
	scan.destInside(s, src, dest)
}

// destInside walks the statements inside node (not node itself): a
// function's body prints wherever its callers do, a command
// substitution's into a value.
func (scan *writerScan) destInside(node syntax.Node, src, dest string) {
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n == node {
				return true
			}
			scan.destStmt(n, src, dest)
			return false
		case *syntax.CmdSubst:
			for _, st := range n.Stmts {
				scan.destStmt(st, src, "captured")
			}
			return false
		case *syntax.FuncDecl:
			scan.destStmt(n.Body, src, "runner")
			return false
		}
		return true
	})
}

// copiedState stands in the snapshot's code for what the writer copies
// from its shell: the user's functions, options and aliases, from their
// own start-up files. It is a plain word, never a name anything has.
const copiedState = "__execgate_copied_shell_state__"

// scanWriter walks the writer: every redirection must be one it may make,
// SNAPSHOT_FILE is never assigned again nor another upper-case variable
// set but IFS (the writer's own word splitting), and what it writes into
// the snapshot is text it spells out or the shell's own state.
func scanWriter(f *syntax.File, src string) (writerScan, string) {
	scan := writerScan{base64Vars: base64Vars(f), handled: map[*syntax.Stmt]bool{}}
	scan.outputDests(f, src)
	why := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			if !writerRedirect(n) {
				why = "a redirection other than to the snapshot or /dev/null: " + nodeText(src, n)
			}
		case *syntax.Assign:
			if n.Name != nil && n.Name.Value != "IFS" && strings.ToLower(n.Name.Value) != n.Name.Value {
				why = "sets " + n.Name.Value
			}
		case *syntax.Stmt:
			if b, ok := n.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
				stages := flattenPipe(n)
				last := stages[len(stages)-1]
				if to, _ := stdoutTarget(last); to == "snapshot" {
					if !copiesState(stages) {
						why = "writes into the snapshot the output of " + oneLine(nodeText(src, n)) + ", which is not the shell's own state"
					}
					scan.handled[last] = true
					scan.code.WriteString("\n")
				}
			}
			if to, _ := stdoutTarget(n); to == "snapshot" && !scan.handled[n] {
				if w := scan.collect(n); w != "" {
					why = w + ": " + oneLine(nodeText(src, n))
				}
			}
		}
		return why == ""
	})
	return scan, why
}

// collect adds what s, a statement writing the snapshot, writes to the
// code, or says why it cannot tell what that is.
func (scan *writerScan) collect(s *syntax.Stmt) string {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Assigns) > 0 || len(c.Args) == 0 {
		return "writes into the snapshot what execgate cannot read"
	}
	name := strings.TrimPrefix(c.Args[0].Lit(), "\\")
	switch {
	case name == "cat" && len(c.Args) == 1:
		for _, r := range s.Redirs {
			if r.Hdoc != nil {
				for _, p := range r.Hdoc.Parts {
					lit, ok := p.(*syntax.Lit)
					if !ok {
						return "writes into the snapshot a here-document that is expanded"
					}
					scan.code.WriteString(lit.Value)
				}
				return ""
			}
		}
	case name == "echo":
		var words []string
		for i, w := range c.Args[1:] {
			text, ok := scan.echoWord(w)
			if !ok || i == 0 && strings.HasPrefix(text, "-") {
				return "echoes into the snapshot text execgate cannot read"
			}
			words = append(words, text)
		}
		scan.code.WriteString(strings.Join(words, " ") + "\n")
		return ""
	case name == "printf" && len(c.Args) >= 2:
		format, ok := wordValue(c.Args[1])
		if !ok {
			return "prints into the snapshot a format execgate cannot read"
		}
		code, ok := printfCode(format)
		if !ok {
			return "prints into the snapshot text execgate cannot read (only %q quotes what it copies)"
		}
		scan.code.WriteString(code)
		return ""
	case stateListers.has(name) && listsState(name, c.Args[1:]):
		scan.code.WriteString("\n")
		return ""
	}
	return "writes into the snapshot what execgate cannot read"
}

// echoWord is the text an echo argument puts into the snapshot, with
// copiedState for a variable of base64 text.
func (scan *writerScan) echoWord(w *syntax.Word) (string, bool) {
	if v, ok := wordValue(w); ok {
		return v, true
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					b.WriteString(unescapeDouble(q.Value))
				case *syntax.ParamExp:
					if q.Param == nil || !simpleParam(q, q.Param.Value) || !scan.base64Vars[q.Param.Value] {
						return "", false
					}
					b.WriteString(copiedState)
				default:
					return "", false
				}
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescapeDouble removes the backslashes bash removes inside double
// quotes: before $, `, ", \ and a newline.
func unescapeDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// printfCode is the text printf writes with format: %q (a quoted word)
// stands for what it copies; any other conversion, or an escape other
// than \n and \\, is text execgate does not read.
func printfCode(format string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		switch c := format[i]; {
		case c == '%' && i+1 < len(format) && format[i+1] == 'q':
			b.WriteString(copiedState)
			i++
		case c == '%' && i+1 < len(format) && format[i+1] == '%':
			b.WriteByte('%')
			i++
		case c == '\\' && i+1 < len(format) && format[i+1] == 'n':
			b.WriteByte('\n')
			i++
		case c == '\\' && i+1 < len(format) && format[i+1] == '\\':
			b.WriteByte('\\')
			i++
		case c == '%' || c == '\\':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// stateListers are the builtins that print the shell's own state as code
// that recreates it (see listsState).
var stateListers = nameSet{"alias", "declare", "functions", "set", "setopt", "shopt", "typeset"}

// listsState is a state lister with only its listing options.
func listsState(name string, args []*syntax.Word) bool {
	var argv []string
	for _, w := range args {
		v, ok := wordValue(w)
		if !ok {
			return false
		}
		argv = append(argv, v)
	}
	switch name {
	case "alias", "shopt", "setopt", "functions":
		return len(argv) == 0 || len(argv) == 1 && argv[0] == "-p"
	case "set":
		return slices.Equal(argv, []string{"-o"}) || slices.Equal(argv, []string{"+o"})
	case "declare", "typeset":
		return listsFunctions(append([]string{name}, argv...))
	}
	return false
}

// stateFilters are the programs a copy of the shell's state may pass
// through: each reads its input, with the options that take a value and
// how many operands it may have (its script or pattern), so that none
// reads a file (see table).
var stateFilters = table[stateFilter]{
	{"awk", stateFilter{valued: []string{"-F", "-v"}, operands: 1}},
	{"base64", stateFilter{valued: []string{"-w"}}},
	{"cut", stateFilter{valued: []string{"-d", "-f", "-c"}}},
	{"grep", stateFilter{valued: []string{"-e"}, operands: 1}},
	{"head", stateFilter{valued: []string{"-n", "-c"}}},
	{"sed", stateFilter{valued: []string{"-e"}, operands: 1}},
	{"sort", stateFilter{}},
}

// stateFilter is one entry of stateFilters.
type stateFilter struct {
	valued   []string
	operands int
}

// copiesState is a pipeline that prints the shell's own state through
// filters: a state lister, then stateFilters reading their input.
func copiesState(stages []*syntax.Stmt) bool {
	for i, st := range stages {
		c, ok := st.Cmd.(*syntax.CallExpr)
		if !ok || len(c.Assigns) > 0 || len(c.Args) == 0 {
			return false
		}
		name := strings.TrimPrefix(c.Args[0].Lit(), "\\")
		if i == 0 {
			if !stateListers.has(name) || !listsState(name, c.Args[1:]) {
				return false
			}
			continue
		}
		flt, ok := stateFilters.lookup(name)
		if !ok || !filtersInput(flt, c.Args[1:]) {
			return false
		}
	}
	return true
}

// filtersInput is a filter's arguments naming no file.
func filtersInput(flt stateFilter, args []*syntax.Word) bool {
	operands, scripts := 0, 0
	for i := 0; i < len(args); i++ {
		v, ok := wordValue(args[i])
		if !ok {
			return false
		}
		switch {
		case slices.Contains(flt.valued, v):
			if v == "-e" {
				scripts++
			}
			i++
		case strings.HasPrefix(v, "-") && v != "-":
		default:
			operands++
		}
	}
	if scripts > 0 {
		return operands == 0
	}
	return operands <= flt.operands
}

// base64Vars are the variables whose every assignment is the base64 text
// of a command's output, V=$(… | base64), and that no command names as
// an operand (read V).
func base64Vars(f *syntax.File) map[string]bool {
	return onlyAssigned(f, base64Output)
}

// onlyAssigned returns the variables below n whose every assignment is a
// plain one (no +=, index or array) of a value valid accepts, and that no
// command names as an operand (read V, printf -v V).
func onlyAssigned(n syntax.Node, valid func(*syntax.Word) bool) map[string]bool {
	ok, bad := map[string]bool{}, map[string]bool{}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name == nil {
				return true
			}
			if n.Append || n.Index != nil || n.Array != nil || n.Value == nil || !valid(n.Value) {
				bad[n.Name.Value] = true
			} else {
				ok[n.Name.Value] = true
			}
		case *syntax.CallExpr:
			for _, w := range n.Args[min(1, len(n.Args)):] {
				if v := w.Lit(); v != "" {
					bad[v] = true
				}
			}
		}
		return true
	})
	for v := range bad {
		delete(ok, v)
	}
	return ok
}

// base64Output is $(… | base64 [-w N]): text of A–Z, a–z, 0–9, +, / and =.
func base64Output(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	cs, ok := w.Parts[0].(*syntax.CmdSubst)
	if !ok || len(cs.Stmts) != 1 {
		return false
	}
	stages := flattenPipe(cs.Stmts[0])
	last, ok := stages[len(stages)-1].Cmd.(*syntax.CallExpr)
	if !ok || len(stages) < 2 || len(last.Assigns) > 0 || len(stages[len(stages)-1].Redirs) > 0 || last.Args[0].Lit() != "base64" {
		return false
	}
	return filtersInput(stateFilters.get("base64"), last.Args[1:])
}

// stdoutTarget says where a statement's own redirections send its
// standard output: "snapshot", "null" or "stderr"; writes is false when
// they leave it where it was.
func stdoutTarget(s *syntax.Stmt) (to string, writes bool) {
	for _, r := range s.Redirs {
		n := ""
		if r.N != nil {
			n = r.N.Value
		}
		if n != "" && n != "1" {
			continue
		}
		switch r.Op {
		case syntax.AppOut, syntax.ClbOut, syntax.RdrOut, syntax.RdrAll, syntax.AppAll:
			if isSnapshotWord(r.Word) {
				to, writes = "snapshot", true
			} else {
				to, writes = "null", true
			}
		case syntax.DplOut:
			if v, _ := wordValue(r.Word); v == "2" {
				to, writes = "stderr", true
			}
		}
	}
	return to, writes
}

// writerRedirect is a redirection the writer may make.
func writerRedirect(r *syntax.Redirect) bool {
	n := ""
	if r.N != nil {
		n = r.N.Value
	}
	if n != "" && n != "1" && n != "2" {
		return false
	}
	target, literal := "", false
	if r.Word != nil {
		target, literal = wordValue(r.Word)
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		return n == "" && quotedDelimiter(r.Word) && r.Hdoc != nil && literalBody(r.Hdoc)
	case syntax.AppOut, syntax.ClbOut, syntax.RdrOut:
		return isSnapshotWord(r.Word) || literal && target == "/dev/null"
	case syntax.RdrAll, syntax.AppAll:
		return n == "" && literal && target == "/dev/null"
	case syntax.RdrIn:
		return n == "" && literal && target == "/dev/null"
	case syntax.DplOut:
		return literal && (target == "1" || target == "2")
	}
	return false
}

// isSnapshotWord is exactly "$SNAPSHOT_FILE" or "${SNAPSHOT_FILE}",
// quoted: the path as assigned, not split or globbed.
func isSnapshotWord(w *syntax.Word) bool {
	if w == nil || len(w.Parts) != 1 {
		return false
	}
	q, ok := w.Parts[0].(*syntax.DblQuoted)
	if !ok || q.Dollar || len(q.Parts) != 1 {
		return false
	}
	p, ok := q.Parts[0].(*syntax.ParamExp)
	return ok && simpleParam(p, snapshotVar)
}

// simpleParam is $name or ${name}, with nothing more.
func simpleParam(p *syntax.ParamExp, name string) bool {
	return p.Param != nil && p.Param.Value == name && p.Flags == nil &&
		!p.Excl && !p.Length && !p.Width && !p.IsSet &&
		p.Split == syntax.OptUnset && p.GlobSubst == syntax.OptUnset && p.RcExpand == syntax.OptUnset &&
		p.NestedParam == nil && p.Index == nil && len(p.Modifiers) == 0 && p.Slice == nil &&
		p.Repl == nil && p.Names == 0 && p.Exp == nil
}

// quotedDelimiter is a here-document delimiter with a quote in it: bash
// then expands nothing in the body.
func quotedDelimiter(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		}
	}
	return false
}

// literalBody is a here-document body of plain text.
func literalBody(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if _, ok := p.(*syntax.Lit); !ok {
			return false
		}
	}
	return true
}

// writerProblem is what the analysis found in seg, a segment of the
// writer's script, that a snapshot writer does not do ("" when nothing).
func (t Trust) writerProblem(seg *Segment, scan writerScan) string {
	if seg.Depth > 0 || seg.Argv == nil || seg.Opaque && !t.sourcesRCFile(seg.Argv) {
		return "runs what the analysis cannot see: " + seg.Text
	}
	for _, r := range seg.Reasons {
		if r.Risk == Safe {
			continue
		}
		if allow, ok := writerReasons.lookup(r.Rule); !ok || !allow(t, seg, scan) {
			return seg.Text + ": " + r.Text + " [" + r.Rule + "]"
		}
	}
	return ""
}

// writerReasons are the findings the analysis may make about a snapshot
// writer's script, each with what makes it the writer's own plumbing
// (see table).
var writerReasons = table[func(Trust, *Segment, writerScan) bool]{
	// Values of the writer's own shell, in builtins that run nothing:
	// (( BASH_VERSINFO … )), ${!#}.
	{"arithmetic-value", func(_ Trust, seg *Segment, _ writerScan) bool { return runsNothing(seg.Argv) }},
	// In CI, what the writer prints into the snapshot, /dev/null or a
	// value reaches no runner's log; what it prints elsewhere is judged
	// (its error message is known text: literalvars.go).
	{"ci-workflow-command", func(_ Trust, seg *Segment, scan writerScan) bool { return scan.printsOnlyInside(seg.Text) }},
	// IFS=…: scanWriter let no other upper-case name be set; it splits
	// the writer's own words.
	{"dangerous-variable", func(_ Trust, seg *Segment, _ writerScan) bool {
		return len(seg.Argv) == 0 && strings.HasPrefix(seg.Text, "IFS=")
	}},
	// declare -f NAME, declare -F: functions, not variables.
	{"dynamic-name", func(_ Trust, seg *Segment, _ writerScan) bool { return listsFunctions(seg.Argv) }},
	// Every redirection was vetted by scanWriter: the snapshot, /dev/null.
	{"dynamic-redirect", func(Trust, *Segment, writerScan) bool { return true }},
	{"indirect-expansion", func(_ Trust, seg *Segment, _ writerScan) bool { return runsNothing(seg.Argv) }},
	// set --, trap - DEBUG, alias -p: the writer's own shell.
	{"not-read-only", func(_ Trust, seg *Segment, _ writerScan) bool { return ownShellState(seg.Argv) }},
	{"prints-environment", func(_ Trust, seg *Segment, _ writerScan) bool { return listsFunctions(seg.Argv) }},
	// set -o (a listing), set -f, set -- WORDS: the writer's own shell.
	{"set-option", func(_ Trust, seg *Segment, _ writerScan) bool { return ownSetOptions(seg.Argv) }},
	// source ~/.bashrc: the user's own start-up file.
	{"source-file", func(t Trust, seg *Segment, _ writerScan) bool { return t.sourcesRCFile(seg.Argv) }},
	// IFS=…: scanWriter let no other upper-case name be set.
	{"unknown-variable", func(Trust, *Segment, writerScan) bool { return true }},
}

// listsFunctions is declare or typeset with only -f/-F: it prints
// functions (or their names), never variables.
func listsFunctions(argv []string) bool {
	if len(argv) < 2 || argv[0] != "declare" && argv[0] != "typeset" {
		return false
	}
	opts := 0
	for _, a := range argv[1:] {
		if a == "--" {
			break
		}
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') {
			if strings.Trim(a[1:], "fF") != "" {
				return false
			}
			opts++
		}
	}
	return opts > 0
}

// runsNothing is a builtin that computes, tests or prints, and runs no
// program: a value only known at run time changes what it prints, not
// what runs.
func runsNothing(argv []string) bool {
	if len(argv) == 0 {
		return true // (( … )), [[ … ]], an assignment
	}
	switch argv[0] {
	case "[[", "((", "let", "test", "[", "printf", "echo", "set", "local", "declare", "typeset", "read", "shift", "return", "true", "false", ":":
		return true
	}
	return false
}

// ownShellState is a builtin that lists or resets the writer's own shell
// state: set's own options, trap - SIGNAL (back to the default), alias
// with nothing to define (a listing).
func ownShellState(argv []string) bool {
	switch {
	case len(argv) == 0:
		return false
	case argv[0] == "set":
		return ownSetOptions(argv)
	case argv[0] == "trap":
		return len(argv) >= 3 && argv[1] == "-"
	case argv[0] == "alias":
		return len(argv) == 1 || len(argv) == 2 && argv[1] == "-p"
	}
	return false
}

// ownSetOptions is set listing its options, turning globbing off or
// setting the positional parameters.
func ownSetOptions(argv []string) bool {
	if len(argv) < 2 || argv[0] != "set" {
		return false
	}
	for i, a := range argv[1:] {
		switch a {
		case "--":
			return true
		case "-f", "+f":
		case "-o", "+o":
			if i+2 < len(argv) {
				return false // set -o NAME changes an option
			}
		default:
			return false
		}
	}
	return true
}

// sourcesRCFile is `source FILE` of one of the user's own start-up files.
func (t Trust) sourcesRCFile(argv []string) bool {
	return len(argv) == 2 && (argv[0] == "source" || argv[0] == ".") && t.home != "" &&
		slices.ContainsFunc(claudeRCFiles, func(rc string) bool { return argv[1] == filepath.Join(t.home, rc) })
}

// snapshotCodeProblem judges the code the writer puts into the snapshot,
// which every later command of the session sources: "" when it does only
// what snapshotCode allows.
func (t Trust) snapshotCodeProblem(code, cwd string) string {
	f, err := shparse.Parse(code, t.dialect.lang())
	if err != nil {
		return "the code it writes does not parse: " + err.Error()
	}
	fns, why := t.snapshotFunctions(f, code)
	if why != "" {
		return why
	}
	eng, err := NewEngine()
	if err != nil {
		return err.Error()
	}
	res := eng.Analyze(Request{Command: code, Cwd: cwd, Home: t.home, Getenv: t.getenv, Dialect: t.dialect})
	if res.ParseError != "" {
		return "the code it writes does not parse: " + res.ParseError
	}
	for _, seg := range res.Segments {
		fn := ""
		if len(seg.context) > 0 {
			if name, ok := strings.CutPrefix(seg.context[0], "function "); ok {
				fn = name
			}
		}
		if seg.Opaque && len(seg.Reasons) == 0 {
			return "the code it writes runs what the analysis cannot see: " + oneLine(seg.Text)
		}
		if fn == "" && restoresState(seg) {
			continue
		}
		if fn != "" && (runsItself(seg, fns[fn]) || launchesTool(t, seg, fns[fn])) {
			// The payload's own words, to the command it names or the
			// tool that stands in for it: judged with the payload.
			continue
		}
		for _, r := range seg.Reasons {
			if r.Risk == Safe {
				continue
			}
			allow, ok := snapshotCode.lookup(r.Rule)
			if !ok || !allow(t, seg, fns[fn], r) {
				return "the code it writes " + oneLine(seg.Text) + ": " + r.Text
			}
		}
	}
	return ""
}

// bundledTool is a function the snapshot may define: Claude Code's
// stand-in for a command, which runs Claude Code's own executable as the
// tool it bundles (under that name, with only the options listed) or the
// command itself.
type bundledTool struct {
	tool    string   // the name the executable is run under ("" for none)
	options []string // the options it may add; a trailing = takes any value
	source  string
}

// bundledTools are the functions Claude Code's snapshots define, by the
// command each stands in for (see table).
var bundledTools = table[bundledTool]{
	{"find", bundledTool{tool: "bfs", options: []string{"-S", "dfs", "-regextype", "findutils-default"},
		source: "Claude Code's shell snapshot: `function find` runs its embedded bfs (testdata/envelopes/captured)"}},
	{"grep", bundledTool{tool: "ugrep", options: []string{"-G", "--ignore-files", "--hidden", "-I", "--encoding=", "--exclude-dir="},
		source: "Claude Code's shell snapshot: `function grep` runs its embedded ugrep, and grep itself for the options ugrep reads otherwise"}},
	{"pkill", bundledTool{source: "Claude Code's shell snapshot: `function pkill` refuses patterns that match the CLI, then runs pkill"}},
	{"rg", bundledTool{tool: "rg", source: "Claude Code's shell snapshot: `function rg` runs its embedded ripgrep when no rg is installed"}},
}

// snapshotFn is what snapshotFunctions learnt of one function.
type snapshotFn struct {
	name string
	tool bundledTool
	// exeVars are the variables that hold only Claude Code's executable.
	exeVars map[string]bool
}

// snapshotFunctions checks the functions the snapshot defines: each is a
// bundled tool's, defined at the top, with no function inside. It also
// vets the words zsh's analysis leaves to the caller: hash only of names.
func (t Trust) snapshotFunctions(f *syntax.File, src string) (map[string]snapshotFn, string) {
	fns := map[string]snapshotFn{}
	why := ""
	var walk func(n syntax.Node, in string) bool
	walk = func(n syntax.Node, in string) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			name := n.Name.Value
			tool, ok := bundledTools.lookup(name)
			if !ok || in != "" {
				why = "the code it writes defines a function " + name + ", which stands in for a command other than the tools Claude Code bundles"
				return false
			}
			fns[name] = snapshotFn{name: name, tool: tool, exeVars: t.exeVars(n.Body)}
			syntax.Walk(n.Body, func(m syntax.Node) bool { return walk(m, name) })
			return false
		case *syntax.CallExpr:
			if len(n.Args) > 0 && n.Args[0].Lit() == "hash" {
				for _, w := range n.Args[1:] {
					if v := w.Lit(); v == "" || strings.ContainsAny(v, "=-") {
						why = "the code it writes changes where a command is found: " + nodeText(src, n)
					}
				}
			}
		}
		return why == ""
	}
	syntax.Walk(f, func(n syntax.Node) bool { return walk(n, "") })
	return fns, why
}

// exeVars are the variables of a function body whose every assignment is
// Claude Code's executable: "${CLAUDE_CODE_EXECPATH:-}" (the agent's
// own variable) or a path claudeExecutable trusts, and that no command
// names as an operand (read V, printf -v V).
func (t Trust) exeVars(body *syntax.Stmt) map[string]bool {
	return onlyAssigned(body, t.exeValue)
}

// exeValue is "${CLAUDE_CODE_EXECPATH:-}" or a trusted executable path.
func (t Trust) exeValue(w *syntax.Word) bool {
	if v, ok := wordValue(w); ok {
		return t.claudeExecutable(v)
	}
	if len(w.Parts) != 1 {
		return false
	}
	q, ok := w.Parts[0].(*syntax.DblQuoted)
	if !ok || len(q.Parts) != 1 {
		return false
	}
	p, ok := q.Parts[0].(*syntax.ParamExp)
	return ok && p.Param != nil && p.Param.Value == "CLAUDE_CODE_EXECPATH" && p.Exp != nil &&
		p.Exp.Op == syntax.DefaultUnsetOrNull && (p.Exp.Word == nil || len(p.Exp.Word.Parts) == 0) &&
		!p.Excl && !p.Length && p.Index == nil && p.Slice == nil && p.Repl == nil
}

// claudeExecutable is Claude Code's own executable: the path the agent
// names in CLAUDE_CODE_EXECPATH, its native installer's
// ~/.local/bin/claude (a start-up path: writing it is dangerous), or the
// very executable of the agent process that started the shim (releases
// from 2.1.328 write that path into the snapshot and no longer set
// CLAUDE_CODE_EXECPATH). Running the agent's own program is no more than
// the agent already does; any other path might be the model's.
func (t Trust) claudeExecutable(path string) bool {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return false
	}
	if exe := t.getenv("CLAUDE_CODE_EXECPATH"); filepath.IsAbs(exe) && path == filepath.Clean(exe) {
		return true
	}
	if t.home != "" && path == filepath.Join(t.home, ".local", "bin", "claude") {
		return true
	}
	return sameExecutable(path, t.agentExecutable())
}

// agentExecutable is the agent's executable: the one the caller named, or
// that of this process's parent (Linux's /proc; "" elsewhere, trusting
// nothing). Only a program named for Claude counts: a shell between the
// agent and the shim (bash -c running the shim again) is no agent.
func (t Trust) agentExecutable() string {
	exe := t.agentExe
	if exe == "" {
		exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", os.Getppid()))
	}
	if !strings.Contains(strings.ToLower(exe), "claude") {
		return ""
	}
	return exe
}

// sameExecutable reports whether path, with its links resolved, is exe.
func sameExecutable(path, exe string) bool {
	if exe == "" || !filepath.IsAbs(exe) {
		return false
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	realExe, err := filepath.EvalSymlinks(exe)
	return err == nil && real == realExe
}

// snapshotCode are the findings the analysis may make about the code a
// snapshot writer puts into the snapshot, each with what makes it Claude
// Code's plumbing (see table). fn is the function the segment is in
// (zero at the top).
var snapshotCode = table[func(Trust, *Segment, snapshotFn, Reason) bool]{
	// In a function, what it prints is judged with the payload that
	// calls it; the copied state is decoded into eval, not printed.
	{"ci-workflow-command", func(_ Trust, seg *Segment, fn snapshotFn, _ Reason) bool {
		return fn.name != "" || slices.Equal(seg.Argv, []string{"base64", "-d"}) || strings.Contains(seg.Text, copiedState)
	}},
	// export PATH=…, recording the PATH it runs with: no change.
	{"dangerous-variable", func(t Trust, seg *Segment, fn snapshotFn, _ Reason) bool {
		path := t.getenv("PATH")
		return fn.name == "" && path != "" && seg.Text == "export PATH="+path
	}},
	// command grep -qx "$CLAUDE_PID": a search of its input.
	{"dynamic-arguments", func(_ Trust, seg *Segment, fn snapshotFn, _ Reason) bool {
		return fn.name != "" && searchesInput(seg.Argv)
	}},
	// function find {…}: snapshotFunctions let only bundled tools' in.
	{"function-shadows-command", func(Trust, *Segment, snapshotFn, Reason) bool { return true }},
	// unalias NAME: the aliases taken away.
	{"not-read-only", func(_ Trust, seg *Segment, fn snapshotFn, _ Reason) bool {
		return fn.name == "" && len(seg.Argv) > 0 && seg.Argv[0] == "unalias"
	}},
	// shopt -s expand_aliases: the aliases are the user's own, copied.
	{"shopt-set-option", func(_ Trust, seg *Segment, fn snapshotFn, _ Reason) bool {
		return fn.name == "" && slices.Equal(seg.Argv, []string{"shopt", "-s", "expand_aliases"})
	}},
	{"zsh-unmodelled", func(_ Trust, _ *Segment, _ snapshotFn, r Reason) bool { return zshPlumbing(r.Text) }},
}

// restoresState is the snapshot recreating the shell state the writer
// copied: eval of a %q-quoted word or of base64 text decoded, and that
// word run by eval.
func restoresState(seg *Segment) bool {
	if slices.Equal(seg.Argv, []string{copiedState}) || slices.Equal(seg.Argv, []string{"--", copiedState}) {
		return true
	}
	text := strings.TrimSuffix(seg.Text, " > /dev/null 2>&1")
	for _, form := range []string{"eval %s", "eval -- %s", `eval "$(echo '%s' | base64 -d)"`} {
		if text == fmt.Sprintf(form, copiedState) {
			return true
		}
	}
	return false
}

// runsItself is `command NAME "$@"` in the function NAME: the command the
// function stands in for, with the words it was given, which execgate
// judged as that command.
func runsItself(seg *Segment, fn snapshotFn) bool {
	if fn.name == "" {
		return false
	}
	for _, form := range []string{`command %s ${1+"$@"}`, `command %s "$@"`} {
		if seg.Text == fmt.Sprintf(form, fn.name) {
			return true
		}
	}
	return false
}

// searchesInput is grep or pgrep with at most one operand (the pattern):
// what it reads is its input, not a file named at run time.
func searchesInput(argv []string) bool {
	if len(argv) == 0 || argv[0] != "grep" && argv[0] != "pgrep" {
		return false
	}
	operands := 0
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			operands++
		}
	}
	return operands <= 1
}

// launchesTool is the function running Claude Code's executable as the
// tool it bundles: `exec -a TOOL EXE OPTIONS "$@"` or `ARGV0=TOOL EXE
// OPTIONS "$@"` (zsh), with only the tool's own options.
func launchesTool(t Trust, seg *Segment, fn snapshotFn) bool {
	if fn.name == "" || fn.tool.tool == "" {
		return false
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(seg.Text), "")
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(f.Stmts[0].Redirs) > 0 {
		return false
	}
	args := c.Args
	switch {
	case len(c.Assigns) == 1 && c.Assigns[0].Name != nil && c.Assigns[0].Name.Value == "ARGV0":
		if v, ok := wordValue(c.Assigns[0].Value); !ok || v != fn.tool.tool {
			return false
		}
	case len(c.Assigns) == 0 && len(args) > 3 && args[0].Lit() == "exec" && args[1].Lit() == "-a" && args[2].Lit() == fn.tool.tool:
		args = args[3:]
	default:
		return false
	}
	if len(args) < 2 || !t.exeWord(args[0], fn) || !allArgs(args[len(args)-1]) {
		return false
	}
	for _, w := range args[1 : len(args)-1] {
		v, ok := wordValue(w)
		if !ok || !slices.ContainsFunc(fn.tool.options, func(o string) bool {
			return v == o || strings.HasSuffix(o, "=") && strings.HasPrefix(v, o)
		}) {
			return false
		}
	}
	return true
}

// exeWord is Claude Code's executable: a trusted path, or "$V" for a
// variable of fn that holds only that.
func (t Trust) exeWord(w *syntax.Word, fn snapshotFn) bool {
	if v, ok := wordValue(w); ok {
		return t.claudeExecutable(v)
	}
	if len(w.Parts) != 1 {
		return false
	}
	q, ok := w.Parts[0].(*syntax.DblQuoted)
	if !ok || len(q.Parts) != 1 {
		return false
	}
	p, ok := q.Parts[0].(*syntax.ParamExp)
	return ok && p.Param != nil && simpleParam(p, p.Param.Value) && fn.exeVars[p.Param.Value]
}

// allArgs is "$@" or ${1+"$@"}: the words the function was given.
func allArgs(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	var inner syntax.WordPart = w.Parts[0]
	if p, ok := inner.(*syntax.ParamExp); ok && p.Param != nil && p.Param.Value == "1" && p.Exp != nil &&
		p.Exp.Op == syntax.AlternateUnset && p.Exp.Word != nil && len(p.Exp.Word.Parts) == 1 {
		inner = p.Exp.Word.Parts[0]
	}
	q, ok := inner.(*syntax.DblQuoted)
	if !ok || len(q.Parts) != 1 {
		return false
	}
	p, ok := q.Parts[0].(*syntax.ParamExp)
	return ok && simpleParam(p, "@")
}

// zshPlumbing are the zsh constructs the snapshot's code may have, which
// the zsh analysis leaves to its caller: the checks above vet each
// (unalias, command NAME "$@", exec -a TOOL EXE, hash NAME, typeset -f).
func zshPlumbing(text string) bool {
	for _, p := range []string{"zsh: unalias ", "zsh: command runs ", "zsh: exec replaces ", "zsh: hash changes ", "zsh: typeset -f "} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}
