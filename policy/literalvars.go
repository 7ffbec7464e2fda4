package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A variable the program itself sets to known text, once, before it reads
// it, holds that text: `F=/tmp/x.sh; echo "no file at $F" >&2` prints
// known text. The analysis uses this where it judges what a command
// prints in CI (ci.go), so that a program printing its own messages is
// not taken for one printing text from outside. Paths still take such a
// variable for a value only known at run time.
//
// The value is only relied on when nothing else in the program can give
// the variable another one. literalVars proves that from the syntax: the
// assignment is a statement of its own at the top of the program (not in
// a function, a loop, a condition or a subshell), its value is literal
// text, the name is no variable bash or zsh sets itself, and the name
// appears nowhere else in the program's text but in plain reads — not in
// another assignment, a read, a for loop, declare, unset, arithmetic, a
// trap's or eval's string, nor in ${F:=…}. A name made at run time
// (declare "$n=…") is caught by the analysis itself (poisonAll), and the
// segments that relied on a value are then flagged after all
// (resolveLiteralUses). Only reads in double quotes or here-documents
// count: unquoted, the value would be split and globbed.

// literalVars are the reads of variables a file gives literal text, with
// that text, for the top-level program only (nested shells parse their own
// text, whose nodes are not these).
type literalVars map[*syntax.ParamExp]string

// findLiteralVars scans a top-level program (see above).
func findLiteralVars(f *syntax.File) literalVars {
	type candidate struct {
		value string
		end   uint
		as    *syntax.Assign
	}
	cands := map[string]*candidate{}
	dup := map[string]bool{}
	for _, s := range f.Stmts {
		name, value, as, ok := literalAssign(s)
		if !ok {
			continue
		}
		if cands[name] != nil {
			dup[name] = true
			continue
		}
		cands[name] = &candidate{value: value, end: s.End().Offset(), as: as}
	}
	if len(cands) == 0 {
		return nil
	}
	poisoned := map[string]bool{}
	for n := range dup {
		poisoned[n] = true
	}
	// The names of ${…} and of assignments, judged where they are met,
	// and the candidates' own values: not mentions.
	skip := map[syntax.Node]bool{}
	reads := map[*syntax.ParamExp]string{}
	mention := func(text string) {
		for n := range cands {
			if mentionsName(text, n) {
				poisoned[n] = true
			}
		}
	}
	readIn := func(parts []syntax.WordPart) {
		for _, p := range parts {
			if pe, ok := p.(*syntax.ParamExp); ok && pe.Param != nil && cands[pe.Param.Value] != nil &&
				simpleParam(pe, pe.Param.Value) && pe.Pos().Offset() > cands[pe.Param.Value].end {
				reads[pe] = pe.Param.Value
			}
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil && cands[n.Name.Value] != nil && cands[n.Name.Value].as != n {
				poisoned[n.Name.Value] = true
			}
			if n.Name != nil {
				skip[n.Name] = true
			}
			if n.Name != nil && cands[n.Name.Value] != nil && cands[n.Name.Value].as == n {
				syntax.Walk(n.Value, func(m syntax.Node) bool { skip[m] = true; return true })
			}
		case *syntax.ParamExp:
			if n.Param != nil {
				skip[n.Param] = true
				if n.Exp != nil && strings.Contains(n.Exp.Op.String(), "=") { // ${F=…}, ${F:=…}, zsh's ${F::=…}
					poisoned[n.Param.Value] = true
				}
			}
		case *syntax.DblQuoted:
			readIn(n.Parts)
		case *syntax.Redirect:
			if n.Hdoc != nil {
				readIn(n.Hdoc.Parts)
			}
		case *syntax.Lit:
			if !skip[n] {
				mention(n.Value)
			}
		case *syntax.SglQuoted:
			if !skip[n] {
				mention(n.Value)
			}
		}
		return true
	})
	out := literalVars{}
	for pe, name := range reads {
		if !poisoned[name] {
			out[pe] = cands[name].value
		}
	}
	return out
}

// literalAssign is a statement NAME=TEXT and nothing else, with TEXT
// known without running anything, and NAME no variable the shell sets.
func literalAssign(s *syntax.Stmt) (name, value string, as *syntax.Assign, ok bool) {
	c, isCall := s.Cmd.(*syntax.CallExpr)
	if !isCall || !plainStmt(s) || len(s.Redirs) > 0 || len(c.Args) > 0 || len(c.Assigns) != 1 {
		return "", "", nil, false
	}
	as = c.Assigns[0]
	if as.Name == nil || as.Append || as.Naked || as.Index != nil || as.Array != nil || as.Value == nil || shellSetsVariable(as.Name.Value) {
		return "", "", nil, false
	}
	w := evalWord(as.Value)
	// A ~ anywhere is left out: bash expands it after = and every : of
	// an assignment.
	if !w.literal() || w.tilde || w.assignTilde || strings.Contains(w.text, "~") || len(w.subst) > 0 {
		return "", "", nil, false
	}
	return as.Name.Value, w.text, as, true
}

// shellSetsVariable reports whether bash or zsh give name values of their
// own (RANDOM, PWD, REPLY …), refuse it (UID), or tie it to another
// (zsh's path and PATH): an assignment does not decide what it reads.
func shellSetsVariable(name string) bool {
	for _, p := range []string{"BASH", "COMP_", "READLINE_", "HIST", "ZSH", "_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	if zshSpecialParams.has(name) || strings.ToLower(name) == name && zshSpecialParams.has(strings.ToUpper(name)) {
		return true
	}
	switch name {
	case "CDPATH", "COLUMNS", "COPROC", "DIRSTACK", "EPOCHREALTIME", "EPOCHSECONDS", "EUID", "FPATH", "FUNCNAME",
		"GROUPS", "HOME", "HOSTNAME", "IFS", "LINENO", "LINES", "MAPFILE", "OLDPWD", "OPTARG", "OPTIND", "PATH",
		"PIPESTATUS", "PPID", "PWD", "RANDOM", "REPLY", "SECONDS", "SHELLOPTS", "SHLVL", "SRANDOM", "UID",
		"argv", "match", "mbegin", "mend", "path", "pipestatus", "reply", "status":
		return true
	}
	return false
}

// mentionsName reports whether text has name as a whole word of name
// characters: a for loop's, read's or declare's operand, a trap's code.
func mentionsName(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !nameByte(text[j-1])) && (end == len(text) || !nameByte(text[end])) {
			return true
		}
		i = j + 1
	}
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// literalWord is w with the reads of literalVars replaced by their text,
// evaluated again; w itself when it has no such read. It records seg as
// relying on the values (see resolveLiteralUses).
func (a *analyzer) literalWord(seg *Segment, w word) word {
	if w.known || w.node == nil || len(a.literals) == 0 {
		return w
	}
	parts, changed := a.literalParts(w.node.Parts)
	if !changed {
		return w
	}
	out := evalWord(&syntax.Word{Parts: parts})
	if out.known {
		a.literalUses = append(a.literalUses, seg)
	}
	return out
}

// literalParts replaces the reads of literalVars among parts (and in
// double quotes) with single-quoted text.
func (a *analyzer) literalParts(parts []syntax.WordPart) ([]syntax.WordPart, bool) {
	out := make([]syntax.WordPart, len(parts))
	changed := false
	for i, p := range parts {
		out[i] = p
		switch p := p.(type) {
		case *syntax.ParamExp:
			if v, ok := a.literals[p]; ok {
				out[i], changed = &syntax.SglQuoted{Left: p.Pos(), Right: p.End(), Value: v}, true
			}
		case *syntax.DblQuoted:
			if inner, ok := a.literalParts(p.Parts); ok {
				out[i], changed = &syntax.DblQuoted{Left: p.Left, Right: p.Right, Dollar: p.Dollar, Parts: inner}, true
			}
		}
	}
	return out, changed
}

// literalWords is literalWord of each word.
func (a *analyzer) literalWords(seg *Segment, words []word) []word {
	if len(a.literals) == 0 {
		return words
	}
	out := make([]word, len(words))
	for i, w := range words {
		out[i] = a.literalWord(seg, w)
	}
	return out
}

// resolveLiteralUses flags, late, the segments that relied on a
// variable's literal value when the program also assigns a name only known
// at run time, which may be that variable.
func (a *analyzer) resolveLiteralUses() {
	if !a.vars.poisonAll || !a.inCI() {
		return
	}
	for _, seg := range a.literalUses {
		seg.add(Reason{Risk: NeedsReview, Text: "prints a variable the program set, and it also sets a variable whose name is only known at run time, which may be that one", Rule: "ci-workflow-command"})
		if !seg.pushed {
			a.push(seg)
		}
	}
}
