package shim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/internal/self"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/policy/shparse"
)

// GateOptions describe one command line typed into a gated interactive
// shell (see gate.bash), as `execgate gate` receives it.
type GateOptions struct {
	// JudgeOptions carry the line (Command) and who typed it; Source
	// defaults to "interactive".
	JudgeOptions
	// Aliases are the shell's aliases, name to value. The history holds a
	// line as typed, and bash expands aliases in it when it runs it, so
	// the line is judged with them expanded.
	Aliases map[string]string
	// Each is set when Command is one simple command as bash shows it in
	// $BASH_COMMAND, aliases already expanded, because the line itself
	// never reached the history.
	Each bool
}

// Gate decides whether a line typed into a gated interactive shell may run.
// A line that would disarm the gate (see gateRules) is refused outright,
// without asking anyone; any other is judged as Judge judges a command, with
// the commands a prompt string it sets would run added to it.
func Gate(ctx context.Context, o GateOptions) Judgement {
	if o.Source == "" {
		o.Source = "interactive"
	}
	line := o.Command
	if o.Each {
		line = completeHeader(line)
	} else {
		line = expandAliases(line, o.Aliases)
	}
	if reason := disarms(line, gateEnvFor(o.Getenv)); reason != "" {
		o.Command = line
		return Refuse(o.JudgeOptions, policy.Dangerous.String(), reason+" (it would disarm the interactive gate)")
	}
	if code := promptCode(line); len(code) > 0 {
		line += "\n# run by the prompt it sets:\n" + strings.Join(code, "\n")
	}
	o.Command = line
	// The line runs in the interactive shell itself, which reads no
	// BASH_ENV: that is for the shells it starts, which judge it there.
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	o.Getenv = func(k string) string {
		if k == "BASH_ENV" {
			return ""
		}
		return getenv(k)
	}
	return Judge(ctx, o.JudgeOptions)
}

// gateRule is one way a typed line could turn the gate off or go around
// it. A rule matches a simple command, once builtin, command and the like
// are taken off, by its name, options and operands, or by its own test.
type gateRule struct {
	id     string
	reason string
	// examples are lines the rule refuses; the tests check each.
	examples []string
	// programs are the command names the rule is about.
	programs []string
	// flags are option letters after their sign, "-u" or "+T": the rule
	// needs one of them.
	flags string
	// notFlags are option letters that make the command harmless (trap -p
	// lists traps).
	notFlags string
	// operands: the rule needs one of them among the operands, compared
	// without regard to case when fold is set.
	operands []string
	fold     bool
	// test, when set, decides instead of flags and operands.
	test func(c gateCall, env gateEnv) bool
	// node, when set, is asked about every node of the line instead: for
	// what is not a command.
	node func(n syntax.Node) bool
}

// gateRules are what the gate refuses. The gate rests on extdebug, the
// DEBUG trap, function tracing, its own functions and variables, and on
// every typed line reaching the history whole; and a line can also leave
// the gate behind by starting a shell execgate does not front.
var gateRules = []gateRule{
	{id: "trap-debug", reason: "changes the DEBUG trap the interactive gate runs on",
		examples: []string{"trap - DEBUG", "trap '' DEBUG", "builtin trap 'echo hi' debug", "command trap -- - DEBUG"},
		programs: []string{"trap"}, notFlags: "-pl", operands: []string{"DEBUG"}, fold: true},
	{id: "trap-bare", reason: "resets traps without naming them, the gate's DEBUG trap among them",
		examples: []string{"trap -", "trap ''"},
		programs: []string{"trap"}, test: func(c gateCall, _ gateEnv) bool {
			ops := c.operands()
			return len(ops) == 1 && ops[0].static && (ops[0].text == "-" || ops[0].text == "")
		}},
	{id: "shopt-off", reason: "turns off a shell option the interactive gate needs (extdebug, function tracing, one history entry per command)",
		examples: []string{"shopt -u extdebug", "shopt -uo functrace", "shopt -u cmdhist"},
		programs: []string{"shopt"}, flags: "-u", operands: []string{"extdebug", "functrace", "cmdhist"}},
	{id: "functrace-off", reason: "turns off function tracing, which carries the interactive gate into functions and subshells",
		examples: []string{"set +T", "set +eT"},
		programs: []string{"set"}, flags: "+T"},
	{id: "functrace-off-o", reason: "turns off function tracing, which carries the interactive gate into functions and subshells",
		examples: []string{"set +o functrace"},
		programs: []string{"set"}, test: func(c gateCall, _ gateEnv) bool {
			return c.optionValue("+o", "functrace")
		}},
	{id: "enable-n", reason: "disables a shell builtin the interactive gate uses",
		examples: []string{"enable -n trap", "enable -n history"},
		programs: []string{"enable"}, flags: "-n"},
	{id: "bind-x", reason: "binds a key to a command, which would run outside the interactive gate",
		examples: []string{`bind -x '"\C-t": rm -rf ~'`},
		programs: []string{"bind"}, flags: "-x"},
	{id: "complete-command", reason: "has completion run a command, which would run outside the interactive gate",
		examples: []string{"complete -C 'rm -rf ~' ls", "compgen -C 'rm -rf ~' x"},
		programs: []string{"complete", "compgen"}, flags: "-C"},
	{id: "gate-names", reason: "touches the interactive gate's own functions or variables",
		examples: []string{"unset -f __execgate_debug", "__execgate_verdict=allow", "declare -n v=__execgate_line",
			"echo ${__execgate_bin}", "eval '__execgate_line=0'", "f() { ((__execgate_last++)); }"},
		node: func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Lit:
				return strings.Contains(n.Value, gatePrefix)
			case *syntax.SglQuoted:
				return strings.Contains(n.Value, gatePrefix)
			case *syntax.Word:
				// The name may be spelt in pieces: "__exec""gate_int".
				return strings.Contains(literalParts(n), gatePrefix)
			}
			return false
		}},
	{id: "variable-names", reason: "sets a variable by a name only known at run time, or the prompt by a route the interactive gate does not follow",
		examples: []string{`declare "__exec""gate_int=x"`, `v=__exec; declare ${v}gate_line=0`, `printf -v PS1 %s '$(id)'`,
			`read PS1 <<< x`, `declare 'PS1=$(id)'`, `export PROMPT_COMMAND=id`, `printf -v"$n" %s x`, `mapfile -t PS0 < f`},
		programs: []string{"declare", "typeset", "local", "export", "readonly", "printf", "read", "mapfile", "readarray"},
		test: func(c gateCall, _ gateEnv) bool {
			for _, name := range c.variableNames() {
				if !name.static || strings.HasPrefix(name.text, gatePrefix) ||
					slices.Contains(promptVars, name.text) || name.text == "PROMPT_COMMAND" {
					return true
				}
			}
			return false
		}},
	{id: "shadow-builtin", reason: "defines a function named like a builtin the interactive gate calls",
		examples: []string{"builtin() { :; }", "function local { :; }", "history() { echo; }"},
		node: func(n syntax.Node) bool {
			fd, ok := n.(*syntax.FuncDecl)
			return ok && fd.Name != nil && slices.Contains(shadowedBuiltins, fd.Name.Value)
		}},
	{id: "exec-shell", reason: "replaces the gated shell with a shell execgate does not check",
		examples: []string{"exec /bin/bash", "exec -a bash /usr/bin/bash --norc", "exec zsh"},
		programs: []string{"exec"}, test: func(c gateCall, env gateEnv) bool {
			argv := c.execArgv()
			return len(argv) > 0 && isShellName(argv[0].text) && !env.gated(argv[0].text)
		}},
	{id: "ungated-shell", reason: "starts a shell that reads commands from the terminal unchecked",
		examples: []string{"/bin/bash", "/usr/bin/bash -i", "env bash --norc", "dash", "zsh -f"},
		test: func(c gateCall, env gateEnv) bool {
			if c.stdinRedirected || c.name == "" || !isShellName(c.name) || env.gated(c.name) {
				return false
			}
			argv := make([]string, len(c.args))
			for i, a := range c.args {
				argv[i] = a.text
			}
			cl := ParseCommandLine(argv)
			return cl.Source == FromStdin || cl.Source == Invalid
		}},
}

// gatePrefix starts the names of gate.bash's functions and variables.
const gatePrefix = "__execgate"

// shadowedBuiltins are the builtins gate.bash calls by name. A function of
// the same name would run in their place (bash looks functions up first).
var shadowedBuiltins = []string{
	"builtin", "command", "local", "return", "eval", "exit", "trap", "kill", "history",
	"shopt", "printf", "declare", "unset", "readonly", "set", "source", ".", ":",
}

// isShellName reports whether a program name or path names a shell.
func isShellName(name string) bool {
	switch filepath.Base(name) {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "ash", "fish", "tcsh", "csh", "rbash":
		return true
	}
	return false
}

// gateEnv is what the rules need to know of the world.
type gateEnv struct {
	// gated reports whether a shell name or path resolves to execgate
	// itself, whose shell is gated in turn.
	gated func(name string) bool
}

// gateEnvFor resolves names with PATH from getenv against this executable.
func gateEnvFor(getenv func(string) string) gateEnv {
	if getenv == nil {
		getenv = os.Getenv
	}
	selves, err := self.Infos()
	return gateEnv{gated: func(name string) bool {
		if err != nil {
			return false
		}
		path := name
		if !strings.Contains(name, "/") {
			path = lookPathIn(name, getenv("PATH"))
		}
		fi, err := os.Stat(path)
		return err == nil && self.Same(fi, selves)
	}}
}

// lookPathIn finds an executable as bash would on path, or "".
func lookPathIn(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// gateArg is one word of a command: its text when it is known before the
// line runs (static), else the source text.
type gateArg struct {
	text   string
	static bool
}

// gateCall is one simple command with its wrappers taken off.
type gateCall struct {
	name            string // "" when only known at run time
	args            []gateArg
	stdinRedirected bool // stdin comes from a redirection or a pipe
}

// options returns the option words and the operands after them, stopping
// at "--" or the first operand.
func (c gateCall) split() (opts, ops []gateArg) {
	i := 1
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if a.static && a.text == "--" {
			i++
			break
		}
		if !a.static || len(a.text) < 2 || (a.text[0] != '-' && a.text[0] != '+') {
			break
		}
		opts = append(opts, a)
	}
	if i < len(c.args) {
		ops = c.args[i:]
	}
	return opts, ops
}

func (c gateCall) operands() []gateArg {
	_, ops := c.split()
	return ops
}

// hasFlag reports whether the option words hold one of letters after sign.
func (c gateCall) hasFlag(sign byte, letters string) bool {
	opts, _ := c.split()
	for _, o := range opts {
		if o.text[0] == sign && strings.ContainsAny(o.text[1:], letters) {
			return true
		}
	}
	return false
}

// optionValue reports whether opt ("+o") is followed by value, as in set
// +o functrace; the value may also be an operand-looking word.
func (c gateCall) optionValue(opt, value string) bool {
	for i := 1; i+1 < len(c.args); i++ {
		if c.args[i].static && c.args[i].text == opt && c.args[i+1].text == value {
			return true
		}
	}
	return false
}

// execArgv is the command exec runs: its operands after -c, -l and -a NAME.
func (c gateCall) execArgv() []gateArg {
	i := 1
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.static || !strings.HasPrefix(a.text, "-") || a.text == "-" {
			break
		}
		if a.text == "--" {
			i++
			break
		}
		if strings.Contains(a.text, "a") {
			i++ // -a NAME
		}
	}
	if i >= len(c.args) {
		return nil
	}
	return c.args[i:]
}

// matches applies a rule to a call.
func (r gateRule) matches(c gateCall, env gateEnv) bool {
	if r.node != nil || len(r.programs) > 0 && !slices.Contains(r.programs, c.name) {
		return false
	}
	if r.test != nil {
		return r.test(c, env)
	}
	if len(r.programs) == 0 {
		return false // a rule about no program in particular needs a test
	}
	if r.notFlags != "" && c.hasFlag(r.notFlags[0], r.notFlags[1:]) {
		return false
	}
	if r.flags != "" && !c.hasFlag(r.flags[0], r.flags[1:]) {
		return false
	}
	if len(r.operands) == 0 {
		return true
	}
	for _, op := range c.operands() {
		for _, want := range r.operands {
			if op.text == want || r.fold && strings.EqualFold(op.text, want) {
				return true
			}
		}
	}
	return false
}

// gateWrapper reports whether name runs its operands as a command in this
// shell or as a program, with the option words that take a value. (A
// switch: a map would be built at start-up of every shim process.)
func gateWrapper(name string) (valued string, ok bool) {
	switch name {
	case "builtin", "command", "nohup", "setsid":
		return "", true
	case "env":
		return "-u -S -C --unset --chdir --split-string", true
	}
	return "", false
}

// maxGateDepth bounds eval and trap strings parsed inside one another.
const maxGateDepth = 4

// disarms returns why line would disarm the gate, or "".
func disarms(line string, env gateEnv) string {
	return disarmsDepth(line, env, 0)
}

func disarmsDepth(line string, env gateEnv, depth int) string {
	if err := shparse.CheckNesting(line); err != nil {
		// Nothing can be read in it, the gate's own commands included.
		return "it is " + err.Error()
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		// Judge refuses what does not parse; nothing here to add.
		return ""
	}
	var why string
	piped := map[*syntax.Stmt]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		for _, r := range gateRules {
			if r.node != nil && r.node(n) {
				why = r.reason
				return false
			}
		}
		switch n := n.(type) {
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				piped[n.Y] = true
			}
		case *syntax.Stmt:
			var c gateCall
			switch cmd := n.Cmd.(type) {
			case *syntax.CallExpr:
				if len(cmd.Args) == 0 {
					return true
				}
				c = newGateCall(cmd.Args)
			case *syntax.DeclClause:
				c = declCall(cmd)
			default:
				return true
			}
			c.stdinRedirected = piped[n] || readsStdin(n.Redirs)
			for _, r := range gateRules {
				if r.matches(c, env) {
					why = r.reason
					return false
				}
			}
			if depth < maxGateDepth {
				why = nestedCode(c, env, depth)
			}
		}
		return why == ""
	})
	return why
}

// nestedCode checks the code an eval runs, or a trap handler will run, in
// this same shell.
func nestedCode(c gateCall, env gateEnv, depth int) string {
	var code []string
	switch c.name {
	case "eval":
		for _, a := range c.args[1:] {
			if !a.static {
				return "" // Judge treats run-time code as opaque
			}
			code = append(code, a.text)
		}
	case "trap":
		if ops := c.operands(); len(ops) >= 2 && ops[0].static && ops[0].text != "-" {
			code = append(code, ops[0].text)
		}
	}
	if len(code) == 0 {
		return ""
	}
	return disarmsDepth(strings.Join(code, " "), env, depth+1)
}

// readsStdin reports whether the redirections give the command its stdin.
func readsStdin(redirs []*syntax.Redirect) bool {
	for _, r := range redirs {
		fd := "0"
		if r.N != nil {
			fd = r.N.Value
		}
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			if fd == "0" {
				return true
			}
		}
	}
	return false
}

// newGateCall evaluates the words of a simple command and takes its
// wrappers off: builtin trap, command -- trap, env VAR=x bash.
func newGateCall(words []*syntax.Word) gateCall {
	args := make([]gateArg, len(words))
	for i, w := range words {
		args[i] = wordArg(w)
	}
	for len(args) > 0 && args[0].static {
		valued, ok := gateWrapper(args[0].text)
		if !ok {
			break
		}
		if args[0].text == "command" && slices.ContainsFunc(args[1:], func(a gateArg) bool {
			return a.text == "-v" || a.text == "-V"
		}) {
			return gateCall{name: "command", args: args} // only prints what a name is
		}
		i := 1
		for ; i < len(args); i++ {
			a := args[i]
			if !a.static {
				break
			}
			if a.text == "--" {
				i++
				break
			}
			if strings.HasPrefix(a.text, "-") && a.text != "-" {
				if slices.Contains(strings.Fields(valued), a.text) {
					i++
				}
				continue
			}
			if args[0].text == "env" && strings.Contains(a.text, "=") {
				continue
			}
			break
		}
		args = args[min(i, len(args)):]
	}
	c := gateCall{args: args}
	if len(args) > 0 && args[0].static {
		c.name = args[0].text
	}
	return c
}

// declCall is a declaration (declare, export, local …) as a call: each
// NAME=VALUE is its NAME= (names are literal there), each other word as
// written.
func declCall(d *syntax.DeclClause) gateCall {
	c := gateCall{name: d.Variant.Value, args: []gateArg{{text: d.Variant.Value, static: true}}}
	for _, a := range d.Args {
		switch {
		case a.Name != nil && !a.Naked:
			c.args = append(c.args, gateArg{text: a.Name.Value + "=", static: true})
		case a.Name != nil:
			c.args = append(c.args, gateArg{text: a.Name.Value, static: true})
		case a.Value != nil:
			c.args = append(c.args, wordArg(a.Value))
		}
	}
	return c
}

// literalParts is the text of a word's quoted and unquoted literal parts,
// the expansions left out.
func literalParts(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				}
			}
		}
	}
	return b.String()
}

// variableNames are the variables a declaring or reading builtin sets:
// NAME of NAME=VALUE operands, printf's -v NAME, read's and mapfile's
// operands. A name with an expansion in it is returned not static.
func (c gateCall) variableNames() []gateArg {
	var names []gateArg
	name := func(a gateArg) gateArg {
		n, _, _ := strings.Cut(a.text, "=")
		n, _, _ = strings.Cut(n, "[")
		return gateArg{text: n, static: a.static || !strings.ContainsAny(n, "$`")}
	}
	switch c.name {
	case "printf":
		for i := 1; i < len(c.args); i++ {
			a := c.args[i]
			if !a.static && strings.HasPrefix(a.text, "-v") {
				return []gateArg{{text: a.text}}
			}
			if v, ok := strings.CutPrefix(a.text, "-v"); ok && a.static {
				if v == "" && i+1 < len(c.args) {
					return []gateArg{name(c.args[i+1])}
				}
				return []gateArg{name(gateArg{text: v, static: true})}
			}
		}
		return nil
	}
	for _, a := range c.operands() {
		names = append(names, name(a))
	}
	return names
}

// wordArg evaluates a word that holds no expansion; others stay source
// text, marked as known only at run time.
func wordArg(w *syntax.Word) gateArg {
	dynamic := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.ExtGlob, *syntax.BraceExp:
			dynamic = true
		}
		return !dynamic
	})
	if !dynamic {
		if s, err := expand.Literal(nil, w); err == nil {
			return gateArg{text: s, static: true}
		}
	}
	var b strings.Builder
	syntax.NewPrinter().Print(&b, w)
	return gateArg{text: b.String()}
}

// promptVars are the prompt strings bash expands, running their command
// substitutions, between command lines, where the gate does not look.
var promptVars = []string{"PS0", "PS1", "PS2"}

// promptCode returns the command substitutions in the prompt strings line
// sets with a literal value: they run at every prompt, so they are judged
// with the line that sets them.
func promptCode(line string) []string {
	if shparse.CheckNesting(line) != nil {
		return nil // disarms refuses it
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil
	}
	var code []string
	add := func(as *syntax.Assign) {
		if as == nil || as.Name == nil || as.Value == nil || !slices.Contains(promptVars, as.Name.Value) {
			return
		}
		v := wordArg(as.Value)
		if !v.static {
			return
		}
		err := shparse.CheckNesting(v.text)
		if err == nil && (strings.ContainsAny(v.text, "\r\x00") || strings.Contains(v.text, "\\\n")) {
			// Bytes and continuations the parser reads otherwise than
			// bash (see policy's parseProgram): not read, judged whole.
			err = errors.New("holds a carriage return, a NUL or a line continuation")
		}
		var doc *syntax.Word
		if err == nil {
			doc, err = syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(v.text))
		}
		if err != nil {
			code = append(code, "# "+as.Name.Value+" does not parse: "+display.Flatten(err.Error(), 0), "eval "+quoteBash(v.text))
			return
		}
		syntax.Walk(doc, func(n syntax.Node) bool {
			if cs, ok := n.(*syntax.CmdSubst); ok {
				var b strings.Builder
				for _, st := range cs.Stmts {
					syntax.NewPrinter().Print(&b, st)
					b.WriteString("\n")
				}
				code = append(code, strings.TrimSpace(b.String()))
				return false
			}
			return true
		})
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			for _, as := range n.Assigns {
				add(as)
			}
		case *syntax.DeclClause:
			for _, as := range n.Args {
				add(as)
			}
		}
		return true
	})
	return code
}

// quoteBash quotes s for bash, or returns a placeholder bash cannot run.
func quoteBash(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return "'…'"
	}
	return q
}

// headerEnds complete the compound-command headers bash shows in
// $BASH_COMMAND ("for i in 1 2") into something that parses.
var headerEnds = []struct{ prefix, end string }{
	{"for ", "; do :; done"},
	{"select ", "; do :; done"},
	{"case ", " esac"},
}

// completeHeader returns a $BASH_COMMAND text that parses: as it is, or
// completed when it is a compound command's header.
func completeHeader(text string) string {
	if shparse.CheckNesting(text) != nil {
		return text // judged as it is: too deep to read
	}
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	if _, err := p.Parse(strings.NewReader(text), ""); err == nil {
		return text
	}
	for _, h := range headerEnds {
		if strings.HasPrefix(text, h.prefix) {
			if _, err := p.Parse(strings.NewReader(text+h.end), ""); err == nil {
				return text + h.end
			}
		}
	}
	return text
}

// maxAliasRounds bounds alias expansion: each round expands at least one
// alias inside the text of another, and an alias is never expanded inside
// its own expansion, so real chains end long before.
const maxAliasRounds = 16

// aliasRegion is text an alias expansion put into the line: no alias in
// names expands inside it again.
type aliasRegion struct {
	start, end int
	names      []string
}

// expandAliases expands aliases in the command words of line as bash does
// when it reads the line: an unquoted literal command name that is an alias
// is replaced by its value, and the word after it is checked too when the
// value ends in a blank; the value is read again for aliases, except the
// ones it came from.
func expandAliases(line string, aliases map[string]string) string {
	if len(aliases) == 0 {
		return line
	}
	var regions []aliasRegion
	for range maxAliasRounds {
		next, grown, changed := expandRound(line, aliases, regions)
		if !changed {
			break
		}
		line, regions = next, grown
	}
	return line
}

// expandRound expands every command word that is an alias once.
func expandRound(line string, aliases map[string]string, regions []aliasRegion) (string, []aliasRegion, bool) {
	if shparse.CheckNesting(line) != nil {
		return line, regions, false // judged as it is: too deep to read
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return line, regions, false
	}
	type edit struct {
		start, end int
		value      string
		names      []string
	}
	var edits []edit
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		trailing := false
		for i, w := range call.Args {
			start, end := int(w.Pos().Offset()), int(w.End().Offset())
			var names []string
			first := false // the word starts the text of an expansion
			for _, r := range regions {
				if r.start <= start && end <= r.end {
					if len(r.names) > len(names) {
						names = r.names // the innermost region has the longest chain
					}
					first = first || strings.TrimLeft(line[r.start:start], " \t\n") == ""
				}
			}
			eligible := i == 0 || trailing || first
			trailing = false
			name := w.Lit()
			value, isAlias := aliases[name]
			if !eligible || name == "" || len(w.Parts) != 1 || !isAlias || slices.Contains(names, name) {
				continue
			}
			edits = append(edits, edit{start, end, value, append(slices.Clone(names), name)})
			trailing = strings.HasSuffix(value, " ") || strings.HasSuffix(value, "\t")
		}
		return true
	})
	if len(edits) == 0 {
		return line, regions, false
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	var b strings.Builder
	shift := make([]int, len(edits)) // how far each edit's start moves
	prev, delta := 0, 0
	for i, e := range edits {
		if e.start < prev || e.end > len(line) {
			return line, regions, false // overlapping words: not from one parse
		}
		b.WriteString(line[prev:e.start])
		b.WriteString(e.value)
		shift[i] = delta
		delta += len(e.value) - (e.end - e.start)
		prev = e.end
	}
	b.WriteString(line[prev:])
	// A position moves by the growth of the edits that end before it: an
	// edit at a region's start is inside the region and leaves its start.
	moved := func(pos int) int {
		d := 0
		for i, e := range edits {
			if e.end <= pos {
				d = shift[i] + len(e.value) - (e.end - e.start)
			}
		}
		return pos + d
	}
	grown := make([]aliasRegion, 0, len(regions)+len(edits))
	for _, r := range regions {
		grown = append(grown, aliasRegion{moved(r.start), moved(r.end), r.names})
	}
	for i, e := range edits {
		s := e.start + shift[i]
		grown = append(grown, aliasRegion{s, s + len(e.value), e.names})
	}
	return b.String(), grown, true
}
