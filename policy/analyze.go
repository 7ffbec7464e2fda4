package policy

import (
	"fmt"
	"maps"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/internal/gitconfig"
	"github.com/execgate/execgate/policy/shparse"
)

// Reason is one finding about a segment, in plain words.
type Reason struct {
	Risk Risk   `json:"risk"`
	Text string `json:"text"`
	// Rule names the rule table entry behind the reason, if any.
	Rule string `json:"rule,omitempty"`
	// Coverable reasons are the only ones a wildcard allowlist pattern
	// waives: what the program is for, as its words say — it is not
	// read-only, it talks to the network, it writes inside the workspace,
	// a rule table entry not marked firm. Every other reason (an effect on
	// credentials, code, the environment, paths outside the workspace,
	// anything the analysis cannot see, anything dangerous) takes an exact
	// pattern or a person. The default is not coverable.
	Coverable bool `json:"-"`
	// Effect names what the reason is about (see effects.go).
	Effect string `json:"effect,omitempty"`
	// Alternative is a safer way to do the same work, when the rule
	// behind the reason knows one.
	Alternative string `json:"alternative,omitempty"`
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
	// Writes are the files the segment writes that the analysis resolved
	// on disk (redirections and modelled write targets), for the
	// confinement that grants them (see Needs).
	Writes []string
	// Redirected are the Writes the shell's redirections make: plain
	// files, whatever the program is (git log > /tmp/log.txt).
	Redirected []string `json:"-"`
	// Losses are the files it deletes or replaces whole (workloss.go);
	// LossUnknown is set when it deletes or replaces files only known
	// at run time.
	Losses      []Loss `json:"-"`
	LossUnknown bool   `json:"-"`

	words   []word   // Argv as evaluated words
	context []string // the nested shells and functions around it
	unsafe  bool     // a safe program's arguments made it unsafe (never coverable)
	// credsModelled is set when a read-only model looked for credential
	// files among every argument, knowing which options read only a
	// file's public part (openssl x509 -in): the generic look in flows
	// is not repeated.
	credsModelled bool
	// viaRunner is set when a runner wrapper (uv run) took itself off:
	// its reason makes the segment need review already, which must not
	// hide that the command it runs is a program nobody modelled.
	viaRunner bool
	// networkQuery is set when a read-only model with Query proved the
	// command a query of the program's own service (gh pr list), or when
	// the command only prints its version or help.
	networkQuery bool
	// registryToken is set on a download that could run confined through
	// the proxy when a file it may read there holds a registry's
	// credentials (registryTokenFiles): it keeps asking.
	registryToken bool
	// decorated is set when the command does more than run its words:
	// assignments before it or redirections on it. An exact pattern names
	// the words only, so it cannot waive what these do (see exactCovers).
	decorated bool
	// moved is set when the segment runs in another directory than the
	// program started in, or one the analysis lost track of.
	moved  bool
	flags  flowFlags
	pushed bool // recorded in the analysis's segments
	// listNames are the name patterns a workspace listing keeps to
	// (find -name '*.py'), all of which a listed file matches; nil when
	// it keeps every name (see nameFilter).
	listNames []namePattern
	// listRoots are the directories (or files) a workspace listing looks
	// in; nil for the whole workspace.
	listRoots []string
}

// flowFlags describe what a segment does with its input and output, for the
// pipeline checks (curl | sh, cat ~/.ssh/id_rsa | nc).
type flowFlags struct {
	fetches    bool // writes data from the network to stdout
	decodes    bool // writes decoded data to stdout
	printsEnv  bool // writes the environment to stdout
	readsCreds bool // writes credential files to stdout
	execsStdin bool // runs stdin as code
	packs      bool // writes an archive of local files to stdout (tar c, git archive)
	sendsStdin bool // sends stdin to the network
	// findsOutside is set by find searching outside the workspace: the
	// names it prints may be credentials.
	findsOutside bool
	// listsWorkspace is set when the segment prints names of files in
	// the workspace and nothing else (find ., git ls-files, grep -l).
	listsWorkspace bool
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

// lower caps the risk of the reasons of one rule, when what the rule
// feared cannot happen here (a secret printed into a pipe, not to the
// agent), and recomputes the segment's risk.
func (s *Segment) lower(rule string, to Risk) {
	found := false
	for i := range s.Reasons {
		if s.Reasons[i].Rule == rule && s.Reasons[i].Risk > to {
			s.Reasons[i].Risk = to
			found = true
		}
	}
	if !found {
		return
	}
	s.Risk = Safe
	for _, r := range s.Reasons {
		s.Risk = s.Risk.Max(r.Risk)
	}
}

// exactCovers reports whether a pattern equal to s's argv word for word may
// waive its firm reasons: only when the segment is nothing but those words,
// with no wrapper (sudo, env, a nested shell) around them and no assignment
// or redirection beside them, run where the program started. `ls`
// allowlisted exactly must not cover `LD_PRELOAD=x ls`, `sudo ls`,
// `ls > ~/.bashrc`, and `rm -rf build` not `cd / && rm -rf build`.
func (s *Segment) exactCovers() bool {
	return !s.decorated && !s.moved && len(s.Wrappers) == 0
}

// firm reports whether a reason on s holds against wildcard patterns.
func (s *Segment) firm() bool {
	if s.Opaque || s.unsafe || s.Argv == nil {
		return true
	}
	for _, r := range s.Reasons {
		if !r.Coverable || r.Risk == Dangerous {
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
	start     string // the directory the program starts in
	protected []string
	// managedProtected are the managed policy's protected paths: writing
	// them or anything beneath them is dangerous.
	managedProtected []string
	// getenv reads the environment the command starts with (Request.Getenv).
	getenv func(string) string
	// gitConfigs is Request.GitConfigs.
	gitConfigs *gitconfig.Cache
	segs       []*Segment
	funcs      map[string]*syntax.Stmt
	// calling holds the bodies of the functions being walked: a body met
	// again inside itself is recursion, while a function that redefines
	// its own name (f() { f() { …; }; }) has a new body to walk.
	calling  []*syntax.Stmt
	overflow bool
	problems []Reason // findings not tied to a segment (parse errors)
	vars     varState
	// tildeHome is what ~ expands to once the program assigned HOME
	// ("" when unknown); nil while HOME is the user's home.
	tildeHome *string
	dirStack  []string // pushd's directory stack
	// stdinNames is set while walking a pipeline stage whose input is the
	// names of files in the workspace.
	stdinNames bool
	// stdinFilter are the name patterns the listing piped in keeps to
	// (Segment.listNames), while stdinNames is set.
	stdinFilter []namePattern
	stdinRoots  []string
	// execNames is set while stdinNames are the names find -exec gives
	// its command ({}): the command's standard input is still find's own,
	// and what xargs reads from it is no listing.
	execNames bool
	// wsCreds caches lookForCredentials for the unfiltered workspace.
	wsCreds  *string
	lastView *argsView // see view
	// written holds the files the program writes, so that running one of
	// them later in the same program is not taken for running a file of
	// the workspace: its content is the program's own, unseen.
	written map[string]bool
	// printsToFile is set while classifying a statement whose standard
	// output goes to a file: what it prints reaches no CI runner.
	printsToFile bool
	// downloaded holds the files that network programs earlier in the
	// program write (curl -o, wget -O): running one is running code from
	// the network, however many steps apart.
	downloaded map[string]bool
	// seen holds the statements and arithmetic expressions the walk
	// judged; net flags any it did not reach.
	seen map[syntax.Node]bool
	// configDepth counts the commands from a repository's configuration
	// being judged around this analysis (see repoconfig.go).
	configDepth int
	// wrapperMoves counts the directory changes of wrappers (env -C) in
	// effect, which classify undoes after the wrapped command.
	wrapperMoves int
	// literals are the reads of variables the program gives literal text
	// (literalvars.go); literalUses the segments that relied on them.
	literals    literalVars
	literalUses []*Segment
	// pathState is what the analysis saw of the file system (pathstate.go).
	pathState
}

func (a *analyzer) parser(lang syntax.LangVariant) *syntax.Parser {
	return syntax.NewParser(syntax.Variant(lang))
}

// shellLangs are the languages of the shells a payload may be given to.
// Any other runner of a -c script (sh, dash, su's login shell, flock's
// $SHELL) is read as POSIX sh: where bash and sh read a text differently
// ($'…' quoting above all), the POSIX reading shows what dash would run.
var shellLangs = table[syntax.LangVariant]{
	{"bash", syntax.LangBash},
	{"ksh", syntax.LangMirBSDKorn},
	{"mksh", syntax.LangMirBSDKorn},
	{"zsh", syntax.LangZsh},
}

// shellLang is the language a -c script given to program is read in.
func shellLang(program string) syntax.LangVariant {
	if l, ok := shellLangs.lookup(program); ok {
		return l
	}
	return syntax.LangPOSIX
}

// program parses src and walks it. It returns the parse error, if any.
func (a *analyzer) program(src string, f frame) error {
	if len(src) > maxInput {
		return fmt.Errorf("command is %d bytes, more than the %d this analysis reads", len(src), maxInput)
	}
	file, err := shparse.Parse(src, f.lang)
	if err != nil {
		return err
	}
	f.src = src
	if f.depth == 0 && a.configDepth == 0 {
		a.literals = findLiteralVars(file)
	}
	a.declarations(file)
	a.stmts(file.Stmts, f)
	a.net(file, f)
	if f.lang == syntax.LangZsh {
		a.zshUnmodelled(file, f)
	}
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
	a.markSeen(s)
	if s.Background || s.Coprocess {
		// It runs beside what follows: its assignments are not sequential.
		defer a.restoreNumeric(a.saveNumeric())
	}
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
	if seg.pushed {
		return
	}
	if len(a.segs) >= maxSegments {
		a.overflow = true
		return
	}
	seg.pushed = true
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
		// The right side of && and || may not run.
		saved := a.saveNumeric()
		a.stmt(c.Y, f, false)
		a.restoreNumeric(saved)
	case *syntax.Block:
		a.stmtsPiped(c.Stmts, f, piped)
	case *syntax.Subshell:
		saved, savedNum := a.cwd, a.saveNumeric()
		a.stmtsPiped(c.Stmts, f, piped)
		a.cwd = saved
		a.restoreNumeric(savedNum)
	case *syntax.IfClause:
		// The first condition always runs; what the branches assign
		// may not be.
		a.stmts(c.Cond, f)
		afterCond := a.saveNumeric()
		for cl := c; cl != nil; cl = cl.Else {
			if cl != c {
				a.stmts(cl.Cond, f)
			}
			a.stmts(cl.Then, f)
			a.restoreNumeric(maps.Clone(afterCond))
		}
	case *syntax.WhileClause:
		saved := a.saveNumeric()
		a.stmts(c.Cond, f)
		a.stmts(c.Do, f)
		a.restoreNumeric(saved)
	case *syntax.ForClause:
		seg := a.newSegment(s, f)
		seg.Argv = []string{}
		saved := a.saveNumeric()
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			numeric := true
			for _, w := range l.Items {
				a.expansions(seg, evalWord(w), f)
				numeric = numeric && numericItem(w)
			}
			a.assigned(a.nameref(l.Name.Value), numeric && len(l.Items) > 0)
			a.checkVar(seg, l.Name.Value)
		case *syntax.CStyleLoop:
			a.arithExpr(seg, l.Init, f)
			saved = a.saveNumeric()
			a.arithExpr(seg, l.Cond, f)
			a.arithExpr(seg, l.Post, f)
		}
		a.keepIfNotable(seg)
		a.stmts(c.Do, f)
		a.restoreNumeric(saved)
	case *syntax.CaseClause:
		seg := a.newSegment(s, f)
		seg.Argv = []string{}
		a.expansions(seg, evalWord(c.Word), f)
		for _, item := range c.Items {
			saved := a.saveNumeric()
			for _, p := range item.Patterns {
				a.expansions(seg, evalWord(p), f)
			}
			a.stmts(item.Stmts, f)
			a.restoreNumeric(saved)
		}
		a.keepIfNotable(seg)
	case *syntax.FuncDecl:
		saved := a.saveNumeric()
		a.funcDecl(c, s, f)
		a.restoreNumeric(saved)
	case *syntax.ArithmCmd:
		seg := a.newSegment(s, f)
		seg.Argv = []string{}
		a.arithExpr(seg, c.X, f)
		a.keepIfNotable(seg)
	case *syntax.LetClause:
		seg := a.newSegment(s, f)
		seg.Argv = []string{}
		for _, x := range c.Exprs {
			a.arithExpr(seg, x, f)
		}
		a.keepIfNotable(seg)
	case *syntax.TestClause:
		seg := a.newSegment(s, f)
		seg.Argv = []string{}
		a.testExpr(seg, c.X, f)
		a.keepIfNotable(seg)
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
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("uses a shell construct (%T) this analysis does not know", c)})
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

// numericItem reports whether a for loop's item is a number, or a brace
// range of numbers.
func numericItem(w *syntax.Word) bool {
	if arithNumber.get().MatchString(w.Lit()) {
		return true
	}
	fields, ok := braceFields(w)
	if !ok || len(fields) == 0 {
		return false
	}
	for _, f := range fields {
		if !arithNumber.get().MatchString(f) {
			return false
		}
	}
	return true
}

// testExpr walks a [[ ]] expression: arithmetic comparisons evaluate their
// operands as arithmetic, and -v and -R take a variable name.
func (a *analyzer) testExpr(seg *Segment, x syntax.TestExpr, f frame) {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		if x.Op >= syntax.TsEql && x.Op <= syntax.TsGtr {
			a.testArith(seg, x.X, f)
			a.testArith(seg, x.Y, f)
			return
		}
		a.testExpr(seg, x.X, f)
		if x.Op == syntax.AndTest || x.Op == syntax.OrTest {
			saved := a.saveNumeric()
			defer a.restoreNumeric(saved)
		}
		a.testExpr(seg, x.Y, f)
	case *syntax.UnaryTest:
		if w, ok := x.X.(*syntax.Word); ok && (x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar) {
			ev := evalWord(w)
			a.expansions(seg, ev, f)
			a.nameOperand(seg, ev, f, false)
			return
		}
		a.testExpr(seg, x.X, f)
	case *syntax.ParenTest:
		a.testExpr(seg, x.X, f)
	case *syntax.Word:
		a.expansions(seg, evalWord(x), f)
	case nil:
	default:
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("uses a test form (%T) execgate cannot check", x), Rule: "unknown-construct"})
	}
}

// testArith checks an operand of an arithmetic comparison in [[ ]].
func (a *analyzer) testArith(seg *Segment, x syntax.TestExpr, f frame) {
	if w, ok := x.(*syntax.Word); ok {
		a.arithOperand(seg, w, f)
		return
	}
	a.testExpr(seg, x, f)
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
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("defines a function %q that replaces the command of that name", n.Value), Rule: "function-shadows-command"})
		}
	}
	// The body is analyzed once, here, whether or not it is called: a
	// definition may be called in ways the analysis cannot see (exported,
	// traps, later commands), and calls then need no second look.
	a.callFunction(seg, names[0].Value, c.Body, s, f)
}

// shadows reports whether name is a command a definition could replace.
func (a *analyzer) shadows(name string) bool {
	if _, ok := a.r.Safe.lookup(name); ok {
		return true
	}
	if _, ok := a.r.Wrappers.lookup(name); ok {
		return true
	}
	if len(a.r.rulesFor(name)) > 0 || a.r.shells.has(name) {
		return true
	}
	switch name {
	case "cd", "eval", "source", ".", "exec", "exit", "trap", "alias", "unalias":
		return true
	}
	return false
}

// declClause handles declare/export/local/readonly/typeset/nameref. Its
// operands are assignments, or words that bash reads as NAME[=VALUE] at run
// time; either way a subscript in them is arithmetic.
func (a *analyzer) declClause(c *syntax.DeclClause, s *syntax.Stmt, f frame) {
	seg := a.newSegment(s, f)
	seg.Argv = []string{c.Variant.Value}
	flags := declFlags(c)
	if declPrints(c) {
		// Bare declare/export/typeset (or -p) prints variables, which
		// may hold secrets.
		seg.flags.printsEnv = true
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s prints the shell's variables and environment, which may hold secrets", c.Variant.Value), Rule: "prints-environment"})
	}
	if c.Variant.Value == "nameref" {
		flags += "n"
	}
	for _, as := range c.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			w := evalWord(as.Value)
			a.expansions(seg, w, f)
			seg.Argv = append(seg.Argv, w.text)
			if w.known && (strings.HasPrefix(w.text, "-") || strings.HasPrefix(w.text, "+")) {
				continue
			}
			// declare "$x" or declare 'a[…]=1': a name read at run time.
			// With -f or -F it names a function, and no variable is set.
			a.nameOperand(seg, w, f, !declaresFunctions(c))
			if n, _, ok := strings.Cut(w.text, "="); ok && w.known {
				a.exported(seg, varName(n), c.Variant.Value, flags)
			}
			if strings.Contains(flags, "n") {
				a.namerefDecl(seg, w.text, w.known)
			}
			continue
		}
		if as.Name != nil && strings.Contains(flags, "n") {
			target := word{known: true}
			if as.Value != nil {
				target = evalWord(as.Value)
			}
			a.expansions(seg, target, f)
			a.namerefDecl(seg, as.Name.Value+"="+target.text, target.known)
			continue
		}
		// An assignment is not among the words a pattern matches: what
		// it does is not what an exact pattern named.
		seg.decorated = true
		a.assignment(seg, as, f, strings.Contains(flags, "A"))
		if as.Name != nil {
			a.exported(seg, as.Name.Value, c.Variant.Value, flags)
		}
	}
	a.applyRules(seg, c.Variant.Value, declWords(c))
	a.redirects(seg, s, f)
	a.keepIfNotable(seg)
}

// declWords spells a declaration as command words (export HISTSIZE=0), so
// that the rule table's entries for declare, export and the rest apply.
// A value known only at run time keeps the unknown shape.
func declWords(c *syntax.DeclClause) []word {
	words := []word{{text: c.Variant.Value, known: true}}
	for _, as := range c.Args {
		var w word
		if as.Value != nil {
			w = evalWord(as.Value)
		} else {
			w = word{known: true}
		}
		if as.Name != nil && !as.Naked {
			w.text = as.Name.Value + "=" + w.text
		} else if as.Name != nil {
			w = word{text: as.Name.Value, known: true}
		}
		words = append(words, w)
	}
	return words
}

// declPrints reports whether a declaration only lists variables: no
// operands but options, or -p.
func declPrints(c *syntax.DeclClause) bool {
	if c.Variant.Value == "local" {
		return false
	}
	for _, as := range c.Args {
		if !as.Naked || as.Name != nil || as.Value == nil {
			return false
		}
		l := as.Value.Lit()
		if l == "-p" {
			return true
		}
		if !strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "+") {
			return false
		}
	}
	return true
}

// declFlags returns the literal option letters of a declaration.
func declFlags(c *syntax.DeclClause) string {
	var sb strings.Builder
	for _, as := range c.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			if l := as.Value.Lit(); strings.HasPrefix(l, "-") {
				sb.WriteString(l[1:])
			}
		}
	}
	return sb.String()
}

// declaresFunctions reports whether declare's options, before its first
// operand (bash reads none after it), make it name functions (-f, -F).
func declaresFunctions(c *syntax.DeclClause) bool {
	for _, as := range c.Args {
		l := ""
		if as.Naked && as.Name == nil && as.Value != nil {
			l = as.Value.Lit()
		}
		if l == "--" || !strings.HasPrefix(l, "-") {
			return false
		}
		if strings.ContainsAny(l, "fF") {
			return true
		}
	}
	return false
}

// namerefDecl records declare -n NAME=TARGET: from here on an assignment to
// NAME sets TARGET.
func (a *analyzer) namerefDecl(seg *Segment, text string, known bool) {
	name, target, _ := strings.Cut(text, "=")
	if a.vars.namerefs == nil {
		a.vars.namerefs = map[string]string{}
	}
	if !known || !identifier.get().MatchString(target) {
		a.vars.namerefs[name] = ""
		a.vars.poisonAll = true
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("makes %s a reference to a variable only known at run time", name), Rule: "nameref"})
		return
	}
	a.vars.namerefs[name] = target
	seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("makes %s a reference to %s: setting %s sets %s", name, target, name, target), Rule: "nameref"})
}

// assignment classifies NAME=value, NAME[i]=value and NAME=(…): the
// substitutions run, a subscript is arithmetic (unless NAME is an
// associative array), and some names change what later programs load or
// run.
func (a *analyzer) assignment(seg *Segment, as *syntax.Assign, f frame, assoc bool) {
	var name string
	if as.Name != nil {
		name = as.Name.Value
		assoc = assoc || a.vars.assoc[name]
	}
	if as.Index != nil {
		a.subscript(seg, as.Index, assoc, f)
	}
	numeric := false
	if as.Value != nil {
		ev := evalWord(as.Value)
		a.expansions(seg, ev, f)
		numeric = a.numericValue(seg, as.Value) && !as.Append
		if a.vars.integer[a.nameref(name)] && !numeric {
			// declare -i n; n=VALUE evaluates VALUE as arithmetic.
			a.arithOperand(seg, as.Value, f)
			numeric = true
		}
	}
	if as.Array != nil {
		for _, el := range as.Array.Elems {
			if el.Index != nil {
				a.subscript(seg, el.Index, assoc, f)
			}
			if el.Value != nil {
				a.expansions(seg, evalWord(el.Value), f)
			}
		}
	}
	if as.Name == nil {
		return
	}
	target := a.nameref(name)
	a.assigned(target, numeric && as.Index == nil && as.Array == nil)
	if target == "PATH" && as.Value != nil && as.Index == nil {
		if dir, ok := a.conventionalPrepend(as.Value); ok {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("puts %s first on PATH, so its programs run instead of the system's", dir), Rule: "path-prepend"})
			return
		}
	}
	if dirs, ok := a.workspaceModulePath(target, as); ok {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("puts %s first on %s, so the workspace's own modules load before the installed ones", dirs, target), Rule: "module-path"})
		return
	}
	if flags, ok := inertGoflags(target, as); ok {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("sets GOFLAGS to %s, build and test options that run no other program", flags), Rule: "go-flags"})
		return
	}
	if inertProgramValue(target, as) {
		return // GIT_EDITOR=true, GIT_PAGER=cat: the program run does nothing
	}
	a.checkVar(seg, target)
	if as.Value != nil {
		if v := evalWord(as.Value); v.known && strings.Contains(v.text, "[") && (strings.Contains(v.text, "$(") || strings.Contains(v.text, "`")) {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("stores code in %s that bash runs if the variable is used in arithmetic", name), Rule: "subscript-substitution"})
		}
	}
}

// subscript checks an array subscript: arithmetic for an indexed array,
// a word for an associative one.
func (a *analyzer) subscript(seg *Segment, x syntax.ArithmExpr, assoc bool, f frame) {
	a.visitedArith(x)
	if w, ok := x.(*syntax.Word); ok && assoc {
		a.expansions(seg, evalWord(w), f)
		return
	}
	a.arithExpr(seg, x, f)
}

// numericValue reports whether an assigned word's value is known to be a
// number.
func (a *analyzer) numericValue(seg *Segment, w *syntax.Word) bool {
	if arithNumber.get().MatchString(w.Lit()) {
		return true
	}
	if len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.ArithmExp:
		return true
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 {
			return a.numericValue(seg, &syntax.Word{Parts: p.Parts})
		}
	case *syntax.ParamExp:
		if p.Param == nil || p.Excl || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil {
			return false
		}
		if p.Length || numericParams.has(p.Param.Value) {
			return true
		}
		name := a.nameref(p.Param.Value)
		if a.vars.numeric[name] {
			a.vars.uses = append(a.vars.uses, arithUse{seg: seg, name: name})
			return true
		}
	}
	return false
}

// checkVar flags an environment variable that changes what programs load
// or run.
func (a *analyzer) checkVar(seg *Segment, name string) {
	if a.dangerousVar(name) {
		seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("sets %s, which changes what programs load or run", name), Rule: "dangerous-variable"})
	}
}

// expansions walks what evaluating a word runs: the commands inside
// $( ), ` `, <( ), and the arithmetic of $(( )) and subscripts; and notes
// the expansions whose effect cannot be known (${!x}, ${x@P}, $"…").
func (a *analyzer) expansions(seg *Segment, w word, f frame) {
	if len(w.subst) > 0 {
		saved, savedCwd := a.saveNumeric(), a.cwd
		for _, s := range w.subst {
			a.stmt(s, f, false)
		}
		a.restoreNumeric(saved)
		a.cwd = savedCwd
	}
	for _, x := range w.ariths {
		a.arithExpr(seg, x, f)
	}
	for _, name := range w.assigns {
		// unset PATH; : ${PATH:=dir} makes dir the PATH.
		a.checkVar(seg, a.nameref(name))
	}
	for i, idx := range w.assocIndex {
		a.subscript(seg, idx, a.vars.assoc[w.assocNames[i]], f)
	}
	if w.promptExpand {
		seg.add(Reason{Risk: NeedsReview, Text: "expands ${…@P}, which runs any command substitution stored in the variable", Rule: "prompt-expansion"})
	}
	if w.indirect {
		seg.add(Reason{Risk: NeedsReview, Text: "expands ${!…}: the variable it reads is named at run time, and a subscript in that name is evaluated (indirect expansion)", Rule: "indirect-expansion"})
	}
	if w.translated {
		seg.add(Reason{Risk: NeedsReview, Text: "uses $\"…\", which bash translates from a message catalog chosen by TEXTDOMAIN and TEXTDOMAINDIR", Rule: "translated-string"})
	}
}

// newSegment starts a segment for node.
func (a *analyzer) newSegment(node syntax.Node, f frame) *Segment {
	text := nodeText(f.src, node)
	if s, ok := node.(*syntax.Stmt); ok && s.Semicolon.IsValid() {
		// The list separator is not part of the command.
		text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
	}
	// A segment run anywhere but where the program started is not the
	// command an exact pattern named: `rm -rf build` after `cd /`.
	return &Segment{Text: text, Depth: f.depth, Wrappers: f.via, context: f.via, moved: a.cwd != a.start}
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
	savedNames, savedExec := a.stdinNames, a.execNames
	defer func() { a.stdinNames, a.execNames = savedNames, savedExec }()
	a.execNames = false // a stage's input is the stage before it
	prevLists := false
	var prevNames []namePattern
	var prevRoots []string
	for i, st := range stages {
		a.stdinNames = i > 0 && prevLists
		a.stdinFilter, a.stdinRoots = prevNames, prevRoots
		segs := a.stmt(st, f, i > 0)
		a.stdinNames, a.stdinFilter, a.stdinRoots = false, nil, nil
		if i < len(stages)-1 {
			for _, seg := range segs {
				seg.lower("prints-secret", NeedsReview)
			}
		}
		prevLists = len(segs) > 0
		for _, seg := range segs {
			prevLists = prevLists && seg.flags.listsWorkspace
		}
		prevNames, prevRoots = nil, nil
		if len(segs) == 1 {
			prevNames, prevRoots = segs[0].listNames, segs[0].listRoots
		}
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
		if here.fetches || here.decodes || here.printsEnv || here.readsCreds || here.execsStdin || here.findsOutside || here.packs {
			sources = append(sources, nodeText(f.src, st))
		}
	}
}

func (x flowFlags) or(y flowFlags) flowFlags {
	return flowFlags{
		fetches: x.fetches || y.fetches, decodes: x.decodes || y.decodes,
		printsEnv: x.printsEnv || y.printsEnv, readsCreds: x.readsCreds || y.readsCreds,
		execsStdin: x.execsStdin || y.execsStdin, sendsStdin: x.sendsStdin || y.sendsStdin,
		findsOutside: x.findsOutside || y.findsOutside, packs: x.packs || y.packs,
	}
}

// checkFlow flags a pipeline stage that runs or sends what earlier stages
// produced.
func (a *analyzer) checkFlow(seg *Segment, up flowFlags, sources []string) {
	from := strings.Join(sources, " | ")
	if up.findsOutside {
		for _, w := range seg.words {
			if w.fromStdin {
				seg.flags.readsCreds = true
				seg.add(Reason{Risk: NeedsReview, Text: "reads files that find lists outside the workspace, which may hold credentials", Rule: "reads-credentials"})
				break
			}
		}
	}
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
		case up.packs:
			seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("sends an archive of local files to the network (%s)", from), Rule: "pipe-archive-to-network"})
		}
	}
}

// flattenPipe returns the stages of a pipeline in order.
// s is a statement whose command is a pipe: its own ! and redirections
// apply to the whole pipeline (stmt handles them), so it always splits,
// which also keeps `! a | b` from coming back here forever.
func flattenPipe(s *syntax.Stmt) []*syntax.Stmt {
	b := s.Cmd.(*syntax.BinaryCmd)
	return append(pipeStages(b.X), pipeStages(b.Y)...)
}

// pipeStages returns the stages of one side of a pipe: a nested pipe
// splits, unless a ! or a redirection makes it one stage of its own.
func pipeStages(s *syntax.Stmt) []*syntax.Stmt {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated {
		return flattenPipe(s)
	}
	return []*syntax.Stmt{s}
}

// call classifies a simple command.
func (a *analyzer) call(ce *syntax.CallExpr, s *syntax.Stmt, f frame, piped bool) {
	seg := a.newSegment(s, f)
	// What comes in on a pipe is not in the words either: `nc host 1234`
	// approved alone is not `env | nc host 1234`.
	seg.decorated = len(ce.Assigns) > 0 || len(s.Redirs) > 0 || piped
	for _, as := range ce.Assigns {
		a.assignment(seg, as, f, false)
		if as.Name != nil {
			// A prefix reaches the program's environment; a lone
			// assignment changes the environment when the variable is
			// already exported, as upper-case names conventionally are.
			if len(ce.Args) > 0 || isEnvName(as.Name.Value) {
				a.envVar(seg, a.nameref(as.Name.Value), as.Value)
			}
			if len(ce.Args) == 0 && a.nameref(as.Name.Value) == "HOME" {
				a.homeChanged(as.Value)
			}
		}
	}
	words := make([]word, 0, len(ce.Args))
	for i, w := range ce.Args {
		ev := evalWord(w)
		start := len(a.segs)
		a.expansions(seg, ev, f)
		for _, sub := range a.segs[start:] {
			ev.leaks = ev.leaks || sub.flags.readsCreds || sub.flags.printsEnv
		}
		if ev.brace && ev.known {
			// Brace expansion can turn one word into options
			// (git {-c,core.pager=x} log) or into paths with a tilde
			// (cat {~/.ssh/id_rsa,x}): each field is a word of its own.
			if fields, ok := braceWords(w); ok {
				for _, fl := range fields {
					fl.leaks = ev.leaks
					words = append(words, fl)
				}
				continue
			}
			if i > 0 {
				ev.known = false
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
	return Reason{Risk: NeedsReview, Text: fmt.Sprintf("runs a dynamic command: its name %s is only known at run time", quoteWord(text)), Rule: "dynamic-command"}
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

// programVars name a program that git, man and others run with a file or
// their output (through sh -c, with arguments appended): the editor and
// the pager.
var programVars = nameSet{
	"EDITOR",
	"GIT_EDITOR",
	"GIT_PAGER",
	"GIT_SEQUENCE_EDITOR",
	"MANPAGER",
	"PAGER",
	"SYSTEMD_PAGER",
	"VISUAL",
}

// inertPrograms do nothing with the file they are given as an editor (true,
// :) or only copy their input as a pager (cat). Anything else, a path or a
// word with arguments, runs something.
var inertPrograms = nameSet{
	":",
	"cat",
	"true",
}

// inertProgramValue reports whether as sets an editor or pager variable to
// an inert program, a literal single word: git runs GIT_EDITOR=true as
// `true FILE`, which does nothing (git-var(1)).
func inertProgramValue(name string, as *syntax.Assign) bool {
	if !programVars.has(name) || as.Value == nil || as.Append || as.Index != nil || as.Array != nil {
		return false
	}
	v := evalWord(as.Value)
	return v.known && len(v.subst) == 0 && inertPrograms.has(v.text)
}
