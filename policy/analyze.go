package policy

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Reason is one finding about a segment, in plain words.
type Reason struct {
	Risk Risk   `json:"risk"`
	Text string `json:"text"`
	// Rule names the rule table entry behind the reason, if any.
	Rule string `json:"rule,omitempty"`
	// Firm reasons hold against wildcard allowlist patterns: an argument
	// that makes a program run code, write or read credentials, an opaque
	// payload, or anything dangerous.
	Firm bool `json:"-"`
}

// Segment is one simple command found anywhere in a program, with the
// words it will run after wrappers are taken off.
type Segment struct {
	// Text is the segment as written, wrappers and redirections included.
	Text string
	// Argv is the normalized command: quotes removed, wrappers (env,
	// nice, timeout, sudo …) taken off. Unknown words appear in a shape
	// such as "$?" or "~/x". Argv is nil when the command name itself is
	// only known at run time.
	Argv []string
	// Wrappers are the wrappers taken off, outermost first.
	Wrappers []string
	// Depth counts the nested shells (bash -c, eval) around the segment.
	Depth   int
	Risk    Risk
	Reasons []Reason
	// Opaque segments run code the analysis cannot see.
	Opaque bool
	// Allowlist and Denylist hold the patterns that matched, if any.
	Allowlist string
	Denylist  string
	// Covered is set when the allowlist (or the safe-binary layer with
	// autoAllowSafe) lets the segment run without asking.
	Covered bool

	words   []word   // Argv as evaluated words
	context []string // the nested shells and functions around it
	unsafe  bool     // a safe program's arguments made it unsafe (Firm)
	flags   flowFlags
}

// flowFlags describe what a segment does with its input and output, for the
// pipeline checks (curl | sh, cat ~/.ssh/id_rsa | nc).
type flowFlags struct {
	fetches    bool // writes data from the network to stdout
	decodes    bool // writes decoded data to stdout
	printsEnv  bool // writes the environment to stdout
	readsCreds bool // writes credential files to stdout
	execsStdin bool // runs stdin as code
	sendsStdin bool // sends stdin to the network
}

func (s *Segment) add(r Reason) {
	for _, old := range s.Reasons {
		if old.Text == r.Text {
			return
		}
	}
	s.Reasons = append(s.Reasons, r)
	s.Risk = s.Risk.Max(r.Risk)
}

// firm reports whether a reason on s holds against wildcard patterns.
func (s *Segment) firm() bool {
	if s.Opaque || s.unsafe || s.Argv == nil {
		return true
	}
	for _, r := range s.Reasons {
		if r.Firm || r.Risk == Dangerous {
			return true
		}
	}
	return false
}

// Limits that keep analysis bounded whatever the input.
const (
	maxDepth    = 8    // nested shells followed
	maxSegments = 4096 // segments analyzed before giving up
	maxInput    = 1 << 20
)

// frame is the context of a program being walked.
type frame struct {
	src   string
	depth int
	via   []string
	// lang is the language of the shell that runs src: bash unless a
	// nested sh, dash, zsh or ksh runs it, which read some text otherwise.
	lang syntax.LangVariant
}

// analyzer walks one command.
type analyzer struct {
	r         *rules
	home      string
	workspace string
	cwd       string // current directory as far as known; "" unknown
	protected []string
	segs      []*Segment
	funcs     map[string]*syntax.Stmt
	calling   []string
	overflow  bool
	problems  []Reason // findings not tied to a segment (parse errors)
}

func (a *analyzer) parser(lang syntax.LangVariant) *syntax.Parser {
	return syntax.NewParser(syntax.Variant(lang))
}

// shellLangs are the languages of the shells a payload may be given to.
// Any other runner of a -c script (sh, dash, su's login shell, flock's
// $SHELL) is read as POSIX sh: where bash and sh read a text differently
// ($'…' quoting above all), the POSIX reading shows what dash would run.
var shellLangs = map[string]syntax.LangVariant{
	"bash": syntax.LangBash,
	"zsh":  syntax.LangZsh,
	"ksh":  syntax.LangMirBSDKorn,
	"mksh": syntax.LangMirBSDKorn,
}

// shellLang is the language a -c script given to program is read in.
func shellLang(program string) syntax.LangVariant {
	if l, ok := shellLangs[program]; ok {
		return l
	}
	return syntax.LangPOSIX
}

// program parses src and walks it. It returns the parse error, if any.
func (a *analyzer) program(src string, f frame) error {
	if len(src) > maxInput {
		return fmt.Errorf("command is %d bytes, more than the %d this analysis reads", len(src), maxInput)
	}
	if err := CheckNesting(src); err != nil {
		return err // parsing it might overflow the stack
	}
	file, err := a.parser(f.lang).Parse(strings.NewReader(src), "")
	if err != nil {
		return err
	}
	f.src = src
	a.stmts(file.Stmts, f)
	return nil
}

func (a *analyzer) stmts(list []*syntax.Stmt, f frame) {
	for _, s := range list {
		a.stmt(s, f, false)
	}
}

// stmt walks one statement; piped is set when its stdin is a pipe. It
// returns the segments the statement produced.
func (a *analyzer) stmt(s *syntax.Stmt, f frame, piped bool) []*Segment {
	start := len(a.segs)
	if s.Cmd == nil {
		// Redirections alone: `> file` truncates, `< file` reads.
		seg := a.newSegment(s, f)
		seg.Argv = []string{}
		a.redirects(seg, s, f)
		a.keepIfNotable(seg)
		return a.segs[start:]
	}
	if call, ok := s.Cmd.(*syntax.CallExpr); ok {
		a.call(call, s, f, piped)
		return a.segs[start:]
	}
	a.compound(s, f, piped)
	if len(s.Redirs) > 0 {
		seg := a.newSegment(s, f)
		seg.Argv = []string{}
		a.redirects(seg, s, f)
		a.keepIfNotable(seg)
	}
	return a.segs[start:]
}

// keepIfNotable records a segment that runs nothing but carries reasons
// (a lone dangerous assignment or redirection).
func (a *analyzer) keepIfNotable(seg *Segment) {
	if len(seg.Reasons) > 0 {
		a.push(seg)
	}
}

func (a *analyzer) push(seg *Segment) {
	if len(a.segs) >= maxSegments {
		a.overflow = true
		return
	}
	a.segs = append(a.segs, seg)
}

// compound walks everything that is not a simple command.
func (a *analyzer) compound(s *syntax.Stmt, f frame, piped bool) {
	switch c := s.Cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			a.pipeline(s, f)
			return
		}
		a.stmt(c.X, f, piped)
		a.stmt(c.Y, f, false)
	case *syntax.Block:
		a.stmtsPiped(c.Stmts, f, piped)
	case *syntax.Subshell:
		saved := a.cwd
		a.stmtsPiped(c.Stmts, f, piped)
		a.cwd = saved
	case *syntax.IfClause:
		for cl := c; cl != nil; cl = cl.Else {
			a.stmts(cl.Cond, f)
			a.stmts(cl.Then, f)
		}
	case *syntax.WhileClause:
		a.stmts(c.Cond, f)
		a.stmts(c.Do, f)
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				a.substitutions(evalWord(w), f)
			}
		case *syntax.CStyleLoop:
			a.arithm(f, l.Init, l.Cond, l.Post)
		}
		a.stmts(c.Do, f)
	case *syntax.CaseClause:
		a.substitutions(evalWord(c.Word), f)
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				a.substitutions(evalWord(p), f)
			}
			a.stmts(item.Stmts, f)
		}
	case *syntax.FuncDecl:
		a.funcDecl(c, s, f)
	case *syntax.ArithmCmd:
		a.arithm(f, c.X)
	case *syntax.LetClause:
		a.arithm(f, c.Exprs...)
	case *syntax.TestClause:
		syntax.Walk(c.X, func(n syntax.Node) bool {
			if w, ok := n.(*syntax.Word); ok {
				a.substitutions(evalWord(w), f)
				return false
			}
			return true
		})
	case *syntax.DeclClause:
		a.declClause(c, s, f)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			a.stmt(c.Stmt, f, piped)
		}
	case *syntax.CoprocClause:
		a.stmt(c.Stmt, f, false)
	case *syntax.TestDecl:
		a.stmt(c.Body, f, false)
	default:
		seg := a.newSegment(s, f)
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("uses a shell construct (%T) this analysis does not know", c), Firm: true})
		seg.Opaque = true
		a.push(seg)
	}
}

// stmtsPiped walks a block fed by a pipe: any command in it may read the
// pipe, so all of them count as piped.
func (a *analyzer) stmtsPiped(list []*syntax.Stmt, f frame, piped bool) {
	for _, s := range list {
		a.stmt(s, f, piped)
	}
}

// arithm walks the command substitutions inside arithmetic expressions.
func (a *analyzer) arithm(f frame, exprs ...syntax.ArithmExpr) {
	for _, x := range exprs {
		if x == nil {
			continue
		}
		w := word{known: true}
		collectSubst(x, &w)
		a.substitutions(w, f)
	}
}

// funcDecl records a function so that calls to it are classified as its
// body, and flags definitions that shadow a command.
func (a *analyzer) funcDecl(c *syntax.FuncDecl, s *syntax.Stmt, f frame) {
	if a.funcs == nil {
		a.funcs = map[string]*syntax.Stmt{}
	}
	names := c.Names
	if c.Name != nil {
		names = append([]*syntax.Lit{c.Name}, names...)
	}
	seg := a.newSegment(s, f)
	seg.Argv = []string{}
	if len(names) == 0 || c.Body == nil {
		// An anonymous function runs at once.
		if c.Body != nil {
			a.stmt(c.Body, f, false)
		}
		return
	}
	for _, n := range names {
		a.funcs[n.Value] = c.Body
		if a.shadows(n.Value) {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("defines a function %q that replaces the command of that name", n.Value), Rule: "function-shadows-command", Firm: true})
		}
	}
	// The body is analyzed once, here, whether or not it is called: a
	// definition may be called in ways the analysis cannot see (exported,
	// traps, later commands), and calls then need no second look.
	a.callFunction(seg, names[0].Value, c.Body, s, f)
}

// shadows reports whether name is a command a definition could replace.
func (a *analyzer) shadows(name string) bool {
	if _, ok := a.r.Safe[name]; ok {
		return true
	}
	if _, ok := a.r.Wrappers[name]; ok {
		return true
	}
	if len(a.r.rulesFor(name)) > 0 || a.r.shells[name] {
		return true
	}
	switch name {
	case "cd", "eval", "source", ".", "exec", "exit", "trap", "alias", "unalias":
		return true
	}
	return false
}

// declClause handles declare/export/local/readonly/typeset.
func (a *analyzer) declClause(c *syntax.DeclClause, s *syntax.Stmt, f frame) {
	seg := a.newSegment(s, f)
	seg.Argv = []string{c.Variant.Value}
	for _, as := range c.Args {
		a.assignment(seg, as, f)
		if as.Naked && as.Name == nil && as.Value != nil {
			w := evalWord(as.Value)
			if n, _, ok := strings.Cut(w.text, "="); ok && isAssignmentWord(w.text) {
				a.checkVar(seg, n) // export 'PATH=/tmp/evil'
			}
			seg.Argv = append(seg.Argv, w.text)
			if !w.known {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s takes an argument only known at run time", c.Variant.Value), Firm: true})
			}
		}
	}
	a.redirects(seg, s, f)
	a.keepIfNotable(seg)
}

// assignment classifies NAME=value: its substitutions run, and some names
// change what later programs load or run.
func (a *analyzer) assignment(seg *Segment, as *syntax.Assign, f frame) {
	if as.Value != nil {
		a.substitutions(evalWord(as.Value), f)
	}
	if as.Array != nil {
		for _, el := range as.Array.Elems {
			if el.Value != nil {
				a.substitutions(evalWord(el.Value), f)
			}
		}
	}
	if as.Name == nil {
		return
	}
	a.checkVar(seg, as.Name.Value)
	if as.Value != nil {
		if v := evalWord(as.Value); v.known && strings.Contains(v.text, "[") && (strings.Contains(v.text, "$(") || strings.Contains(v.text, "`")) {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("stores code in %s that bash runs if the variable is used in arithmetic", as.Name.Value), Rule: "subscript-substitution", Firm: true})
		}
	}
}

// checkVar flags an environment variable that changes what programs load
// or run.
func (a *analyzer) checkVar(seg *Segment, name string) {
	if a.r.dangerVars[name] {
		seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("sets %s, which changes what programs load or run", name), Rule: "dangerous-variable"})
		return
	}
	for _, p := range a.r.Assignments.Prefixes {
		if strings.HasPrefix(name, p) {
			seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("sets %s, which changes what programs load or run", name), Rule: "dangerous-variable"})
			return
		}
	}
}

// substitutions walks the commands inside $( ), ` `, <( ) of a word.
func (a *analyzer) substitutions(w word, f frame) {
	for _, s := range w.subst {
		a.stmt(s, f, false)
	}
}

// newSegment starts a segment for node.
func (a *analyzer) newSegment(node syntax.Node, f frame) *Segment {
	text := nodeText(f.src, node)
	if s, ok := node.(*syntax.Stmt); ok && s.Semicolon.IsValid() {
		// The list separator is not part of the command.
		text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
	}
	return &Segment{Text: text, Depth: f.depth, Wrappers: f.via, context: f.via}
}

// nodeText returns the source text of node, or its printed form when the
// offsets do not fit src.
func nodeText(src string, node syntax.Node) string {
	start, end := int(node.Pos().Offset()), int(node.End().Offset())
	if start >= 0 && end <= len(src) && start <= end && node.Pos().IsValid() {
		return strings.TrimSpace(src[start:end])
	}
	var sb strings.Builder
	_ = syntax.NewPrinter().Print(&sb, node)
	return strings.TrimSpace(sb.String())
}

// pipeline walks a | b | c, then checks what flows between the stages.
func (a *analyzer) pipeline(s *syntax.Stmt, f frame) {
	stages := flattenPipe(s)
	var upstream flowFlags
	var sources []string
	for i, st := range stages {
		segs := a.stmt(st, f, i > 0)
		var here flowFlags
		for _, seg := range segs {
			if i > 0 {
				a.checkFlow(seg, upstream, sources)
			}
			here = here.or(seg.flags)
		}
		if i > 0 && here.sendsStdin && upstream.execsStdin {
			for _, seg := range segs {
				if seg.flags.sendsStdin {
					seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("connects a shell to the network (%s): a reverse shell", strings.Join(sources, " | ")), Rule: "reverse-shell"})
				}
			}
		}
		upstream = upstream.or(here)
		if here.fetches || here.decodes || here.printsEnv || here.readsCreds || here.execsStdin {
			sources = append(sources, nodeText(f.src, st))
		}
	}
}

func (x flowFlags) or(y flowFlags) flowFlags {
	return flowFlags{
		fetches: x.fetches || y.fetches, decodes: x.decodes || y.decodes,
		printsEnv: x.printsEnv || y.printsEnv, readsCreds: x.readsCreds || y.readsCreds,
		execsStdin: x.execsStdin || y.execsStdin, sendsStdin: x.sendsStdin || y.sendsStdin,
	}
}

// checkFlow flags a pipeline stage that runs or sends what earlier stages
// produced.
func (a *analyzer) checkFlow(seg *Segment, up flowFlags, sources []string) {
	from := strings.Join(sources, " | ")
	if seg.flags.execsStdin {
		switch {
		case up.fetches:
			seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("runs code downloaded from the network (%s)", from), Rule: "pipe-network-to-shell"})
		case up.decodes:
			seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("runs decoded data as code (%s)", from), Rule: "pipe-decoder-to-shell"})
		}
	}
	if seg.flags.sendsStdin {
		switch {
		case up.readsCreds:
			seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("sends credentials to the network (%s)", from), Rule: "pipe-credentials-to-network"})
		case up.printsEnv:
			seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("sends the environment, which may hold secrets, to the network (%s)", from), Rule: "pipe-environment-to-network"})
		}
	}
}

// flattenPipe returns the stages of a pipeline in order.
func flattenPipe(s *syntax.Stmt) []*syntax.Stmt {
	b, ok := s.Cmd.(*syntax.BinaryCmd)
	if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) || len(s.Redirs) > 0 || s.Negated {
		return []*syntax.Stmt{s}
	}
	return append(flattenPipe(b.X), flattenPipe(b.Y)...)
}

// call classifies a simple command.
func (a *analyzer) call(ce *syntax.CallExpr, s *syntax.Stmt, f frame, piped bool) {
	seg := a.newSegment(s, f)
	for _, as := range ce.Assigns {
		a.assignment(seg, as, f)
	}
	words := make([]word, 0, len(ce.Args))
	for i, w := range ce.Args {
		ev := evalWord(w)
		start := len(a.segs)
		a.substitutions(ev, f)
		for _, sub := range a.segs[start:] {
			ev.leaks = ev.leaks || sub.flags.readsCreds || sub.flags.printsEnv
		}
		if ev.promptExpand {
			seg.add(Reason{Risk: NeedsReview, Text: "expands ${…@P}, which runs any command substitution stored in the variable", Rule: "prompt-expansion", Firm: true})
		}
		if i > 0 && ev.brace && ev.known {
			// Brace expansion can turn one word into options:
			// git {-c,core.pager=x} log.
			if fields, ok := braceFields(w); ok {
				for _, fl := range fields {
					words = append(words, word{text: fl, known: true})
				}
				continue
			}
			ev.known = false
		}
		if i == 0 && ev.brace && ev.known {
			if fields, ok := braceFields(w); ok {
				for _, fl := range fields {
					words = append(words, word{text: fl, known: true})
				}
				continue
			}
		}
		words = append(words, ev)
	}
	if len(words) == 0 {
		seg.Argv = []string{}
		a.redirects(seg, s, f)
		a.keepIfNotable(seg)
		return
	}
	if !words[0].literal() {
		seg.add(dynamicName(nodeText(f.src, ce.Args[0])))
		a.redirects(seg, s, f)
		a.push(seg)
		return
	}
	a.classify(seg, words, s, f, piped)
}

// dynamicName is the reason for a command whose name is computed.
func dynamicName(text string) Reason {
	return Reason{Risk: NeedsReview, Text: fmt.Sprintf("runs a dynamic command: its name %s is only known at run time", quoteWord(text)), Rule: "dynamic-command", Firm: true}
}

// quoteWord renders a word for a reason.
func quoteWord(s string) string {
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return "`" + s + "`"
}

// setArgv records the normalized words of seg.
func (seg *Segment) setArgv(words []word) {
	seg.words = words
	seg.Argv = make([]string, len(words))
	for i, w := range words {
		seg.Argv[i] = w.text
	}
}

// programName is the name rules use for argv[0]: its base name.
func programName(argv0 string) string {
	return path.Base(argv0)
}
