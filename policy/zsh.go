package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Dialect is the shell language a command is written in and run by. The
// walk in analyze.go models bash; zsh parses much of the same text into the
// same tree but reads parts of it otherwise, so zsh text gets a second
// look (zshUnmodelled) that makes whatever the walk does not model
// needs-review. The zero value is bash.
type Dialect int

// Dialect values.
const (
	DialectBash Dialect = iota
	DialectZsh
)

// String names the dialect as the shell is named: "bash", "zsh".
func (d Dialect) String() string {
	if d == DialectZsh {
		return "zsh"
	}
	return "bash"
}

// lang is the parser variant that reads the dialect.
func (d Dialect) lang() syntax.LangVariant {
	if d == DialectZsh {
		return syntax.LangZsh
	}
	return syntax.LangBash
}

// The bash analysis is sound for zsh text only where zsh runs the text as
// bash would. Safe is proven, never presumed: every construct below is one
// the walk does not model for zsh, and each makes its command needs-review
// (a person or an exact allowlist pattern decides), never safe. What zsh
// does differently and the walk already errs on the safe side of is left
// alone: an unquoted $var does not split in zsh (the walk treats every
// expansion's words as unknown anyway), and a glob that matches nothing is
// an error in zsh (the command does not run).

// zshCommands are the command names zsh gives a meaning the bash analysis
// does not model: precommand modifiers, builtins that run code, load
// modules, open sockets, change options or how later text is read, and
// autoloaded functions that evaluate their arguments. The value says why.
var zshCommands = table[string]{
	{"-", "is zsh's precommand modifier that runs the command as a login program"},
	{".", "runs a file as zsh code"},
	{"alias", "defines aliases (zsh's alias -g replaces words anywhere on later lines)"},
	{"autoload", "loads functions from files on $fpath"},
	{"bindkey", "binds keys to zsh line-editor widgets"},
	{"builtin", "runs a zsh builtin by name"},
	{"command", "runs a command by zsh's lookup rules"},
	{"compdef", "defines completion functions"},
	{"compinit", "loads completion functions from $fpath"},
	{"coproc", "starts a zsh coprocess"},
	{"disable", "disables builtins, aliases or reserved words"},
	{"emulate", "changes zsh's options and can run code under them (emulate -c)"},
	{"enable", "enables builtins, aliases or reserved words"},
	{"eval", "runs its arguments as zsh code"},
	{"exec", "replaces zsh with a command (zsh's exec takes -a, -c, -l)"},
	{"fc", "edits and re-runs commands from zsh's history"},
	{"float", "declares zsh variables (and may tie or export them)"},
	{"foreach", "is zsh's foreach loop"},
	{"functions", "defines or changes zsh functions (functions -M, -T)"},
	{"hash", "changes the path a command name runs (hash name=path, hash -d)"},
	{"integer", "declares zsh variables (and may tie or export them)"},
	{"limit", "changes resource limits"},
	{"nocorrect", "is zsh's precommand modifier that turns spelling correction off"},
	{"noglob", "is zsh's precommand modifier that turns globbing off for the command"},
	{"print", "is zsh's print (print -z and -s push text for zsh to read; -v assigns)"},
	{"private", "declares zsh variables"},
	{"pushln", "pushes text onto zsh's buffer stack"},
	{"r", "re-runs a command from zsh's history"},
	{"repeat", "is zsh's repeat loop"},
	{"sched", "schedules zsh code to run later"},
	{"setopt", "changes zsh's options, and so how the rest of the command is read"},
	{"source", "runs a file as zsh code"},
	{"sysopen", "opens files from zsh/system"},
	{"sysread", "reads files from zsh/system"},
	{"syswrite", "writes files from zsh/system"},
	{"trap", "sets zsh code to run on a signal or event"},
	{"ttyctl", "changes the terminal's settings"},
	{"unalias", "changes which commands later words name"},
	{"unfunction", "changes which commands later words name"},
	{"unhash", "changes which commands later words name"},
	{"unlimit", "changes resource limits"},
	{"unsetopt", "changes zsh's options, and so how the rest of the command is read"},
	{"vared", "edits a variable on the terminal"},
	{"zargs", "runs a command over arguments (an autoloaded zsh function)"},
	{"zcalc", "evaluates its input as zsh arithmetic (an autoloaded function)"},
	{"zcompile", "compiles zsh code that later loads instead of its source"},
	{"zed", "edits files from zsh"},
	{"zformat", "assigns the variables it names (zformat -f VAR, -a ARRAY)"},
	{"zle", "runs zsh line-editor widgets"},
	{"zmodload", "loads a zsh module (zsh/system, zsh/net/tcp, zsh/files …)"},
	{"zmv", "evaluates its replacement as zsh code (an autoloaded function)"},
	{"zparseopts", "assigns the variables it names (zparseopts -A ASSOC, SPEC=ARRAY)"},
	{"zpty", "runs commands on a pseudo-terminal from zsh/zpty"},
	{"zregexparse", "assigns the variables it names"},
	{"zselect", "waits on file descriptors from zsh/zselect"},
	{"zsocket", "opens Unix sockets from zsh"},
	{"zstyle", "sets styles whose values zsh may evaluate as code"},
	{"zsystem", "is a zsh/system builtin"},
	{"ztcp", "opens TCP connections from zsh"},
}

// zshSpecialParams are zsh's lower-case parameters that change what later
// words mean, which the bash analysis takes for plain shell variables:
// path is $PATH as an array (path=(/tmp/evil $path) changes which git
// runs), commands is zsh's command hash table, options its option table.
var zshSpecialParams = nameSet{
	"CDPATH",
	"FPATH",
	"MAILPATH",
	"MANPATH",
	"MODULE_PATH",
	"NULLCMD",
	"PSVAR",
	"READNULLCMD",
	"ZDOTDIR",
	"aliases",
	"argv0",
	"builtins",
	"cdpath",
	"chpwd_functions",
	"commands",
	"dis_aliases",
	"dis_builtins",
	"dis_functions",
	"dis_galiases",
	"dis_reswords",
	"dis_saliases",
	"fpath",
	"functions",
	"galiases",
	"histchars",
	"mailpath",
	"manpath",
	"module_path",
	"nameddirs",
	"options",
	"parameters",
	"path",
	"periodic_functions",
	"precmd_functions",
	"preexec_functions",
	"psvar",
	"reswords",
	"saliases",
	"userdirs",
	"widgets",
	"zshaddhistory_functions",
	"zshexit_functions",
}

// zshHookFunctions are the function names zsh calls on an event (cd, exit,
// a signal, a command not found) rather than by name in the command.
var zshHookFunctions = nameSet{
	"chpwd",
	"command_not_found_handler",
	"periodic",
	"precmd",
	"preexec",
	"zshaddhistory",
	"zshexit",
}

// zshUnmodelled looks at every node of a zsh program once more and makes
// each construct the bash walk does not model for zsh needs-review. It
// records at most one segment per program, with one reason per kind of
// construct.
// sharedEscapes reports whether the body of a $'…' string uses only the
// escapes bash and zsh decode alike: \a \b \e \E \f \n \r \t \v \\ \' \"
// \?, an octal byte, two hex digits after \x, four after \u and eight
// after \U naming ASCII — none of them NUL. zsh keeps an unknown escape's
// letter, takes \x with no digits for NUL and \cX for "cX", where bash does
// otherwise (ansiC).
func sharedEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i+1 == len(s) {
			return false
		}
		i++
		switch e := s[i]; {
		case strings.IndexByte("abeEfnrtv\\'\"?", e) >= 0:
		case e >= '0' && e <= '7':
			n, j := int(e-'0'), i
			for ; j+1 < len(s) && j < i+2 && s[j+1] >= '0' && s[j+1] <= '7'; j++ {
				n = n*8 + int(s[j+1]-'0')
			}
			if n == 0 || n > 0xff {
				return false
			}
			i = j
		case e == 'x' || e == 'u' || e == 'U':
			width := 2
			switch e {
			case 'u':
				width = 4
			case 'U':
				width = 8
			}
			if i+width >= len(s) {
				return false
			}
			n := 0
			for _, c := range []byte(s[i+1 : i+1+width]) {
				if hexDigit(c) < 0 {
					return false
				}
				n = n*16 + hexDigit(c)
			}
			if n == 0 || n > 0x7f {
				return false
			}
			i += width
		default:
			return false
		}
	}
	return true
}

func (a *analyzer) zshUnmodelled(file *syntax.File, f frame) {
	var seg *Segment
	flag := func(n syntax.Node, format string, args ...any) {
		if seg == nil {
			seg = a.newSegment(n, f)
			seg.Argv = []string{}
			seg.Opaque = true
		}
		seg.add(Reason{Risk: NeedsReview, Text: "zsh: " + fmt.Sprintf(format, args...), Rule: "zsh-unmodelled"})
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			zshStmt(n, f, flag)
		case *syntax.Word:
			zshWord(n, f, flag)
		case *syntax.ParamExp:
			zshParam(n, f, flag)
		case *syntax.SglQuoted:
			if n.Dollar && !sharedEscapes(n.Value) {
				flag(n, "%s holds an escape zsh decodes otherwise than bash (\\x, \\c, NUL, unknown escapes)", quoteWord(nodeText(f.src, n)))
			}
		case *syntax.ProcSubst:
			if n.Op == syntax.CmdInTemp {
				flag(n, "%s runs a command into a temporary file (=(…))", quoteWord(nodeText(f.src, n)))
			}
		case *syntax.Redirect:
			switch n.Op {
			case syntax.AppClob, syntax.RdrAllClob, syntax.AppAllClob:
				flag(n, "the redirection %s is zsh's own", n.Op)
			}
			if n.Hdoc != nil && quotedDelimiter(n.Word) {
				// A quoted delimiter: zsh expands nothing in the body,
				// which is data however it reads.
				return false
			}
		case *syntax.FuncDecl:
			zshFunc(n, flag)
		case *syntax.CallExpr:
			zshCall(n, flag)
		case *syntax.DeclClause:
			zshDecl(n, f, flag)
		case *syntax.Assign:
			if n.Name != nil && zshSpecialParams.has(n.Name.Value) {
				flag(n, "assigning %s changes what later commands mean", n.Name.Value)
			}
		case *syntax.ForClause:
			if it, ok := n.Loop.(*syntax.WordIter); ok && zshSpecialParams.has(it.Name.Value) {
				flag(n, "the loop assigns %s, which changes what later commands mean", it.Name.Value)
			}
		}
		return true
	})
	// The walk records every variable the program assigns, however it
	// does so: read, getopts, printf -v, a for loop, arithmetic (also in a
	// string evaluated as arithmetic), which the syntax alone does not
	// show.
	for _, name := range slices.Sorted(maps.Keys(a.vars.assigned)) {
		if zshSpecialParams.has(name) {
			flag(file, "the program assigns %s, which changes what later commands mean", name)
		}
	}
	if seg != nil {
		a.push(seg)
	}
}

// zshFlag records a reason on the program's zsh segment.
type zshFlag func(n syntax.Node, format string, args ...any)

func zshStmt(s *syntax.Stmt, f frame, flag zshFlag) {
	if s.Disown {
		flag(s, "%s runs in the background, disowned (&| or &!)", quoteWord(nodeText(f.src, s)))
	}
	if s.Cmd == nil && len(s.Redirs) > 0 {
		flag(s, "redirections alone run $NULLCMD or $READNULLCMD (cat, more)")
	}
}

// zshWord flags the unquoted text zsh expands where bash would not: glob
// qualifiers and pattern groups, =cmd, and ~ forms other than ~ and ~/.
func zshWord(w *syntax.Word, f frame, flag zshFlag) {
	for i, p := range w.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		v := lit.Value
		if strings.ContainsAny(v, "()") {
			flag(w, "%s has a glob qualifier or pattern group, which can run code (*(e:…:), *(+func))", quoteWord(nodeText(f.src, w)))
		}
		if i != 0 {
			continue
		}
		if len(v) > 1 && v[0] == '=' {
			flag(w, "%s expands to the path of a command (=cmd)", quoteWord(nodeText(f.src, w)))
		}
		if len(v) > 1 && v[0] == '~' && v[1] != '/' {
			flag(w, "%s names a directory by zsh's rules (named directories, the directory stack)", quoteWord(nodeText(f.src, w)))
		}
	}
}

// zshParam flags parameter expansions with zsh's flags, modifiers and
// operators, several of which evaluate the value as code or a pattern.
func zshParam(p *syntax.ParamExp, f frame, flag zshFlag) {
	text := quoteWord(nodeText(f.src, p))
	switch {
	case p.Flags != nil:
		flag(p, "%s uses parameter expansion flags, some of which run the value as code (${(e)…})", text)
	case p.Split != syntax.OptUnset || p.GlobSubst != syntax.OptUnset || p.RcExpand != syntax.OptUnset:
		flag(p, "%s changes how the value is split or globbed", text)
	case p.NestedParam != nil || p.IsSet || len(p.Modifiers) > 0:
		flag(p, "%s is a zsh parameter expansion form", text)
	case p.Short && p.Index != nil:
		flag(p, "%s subscripts a parameter zsh's way", text)
	case p.Exp != nil && (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) && p.Param != nil && zshSpecialParams.has(p.Param.Value):
		flag(p, "%s may assign %s, which changes what later commands mean", text, p.Param.Value)
	case p.Exp != nil && p.Exp.Op > syntax.RemLargePrefix:
		flag(p, "%s uses the expansion operator %s", text, p.Exp.Op)
	}
}

func zshFunc(fd *syntax.FuncDecl, flag zshFlag) {
	switch {
	case fd.Name == nil && len(fd.Names) == 0:
		flag(fd, "an anonymous function runs at once")
	case len(fd.Names) > 0:
		flag(fd, "a function is defined under several names")
	case strings.HasPrefix(fd.Name.Value, "TRAP") || zshHookFunctions.has(fd.Name.Value):
		flag(fd, "zsh runs the function %s on an event, not when it is named", fd.Name.Value)
	}
}

// zshCall flags commands named in zshCommands, a cd or pushd given zsh's
// two-argument or stack forms, and words naming zshSpecialParams (read
// path, print -v path).
func zshCall(c *syntax.CallExpr, flag zshFlag) {
	if len(c.Args) == 0 {
		return
	}
	name, ok := unquotedLiteral(c.Args[0])
	if ok {
		if why, found := zshCommands.lookup(name); found {
			flag(c, "%s %s", name, why)
		}
		if name == "cd" || name == "pushd" || name == "chdir" {
			zshCd(c, name, flag)
		}
		if name == "set" {
			zshSet(c, flag)
		}
	}
	for _, w := range c.Args[1:] {
		lit, ok := unquotedLiteral(w)
		if !ok {
			continue
		}
		lit, _, _ = strings.Cut(lit, "=")
		lit, _, _ = strings.Cut(lit, "[")
		if zshSpecialParams.has(lit) {
			flag(c, "the word %s names a zsh parameter that changes what later commands mean", lit)
		}
	}
}

// zshCd flags zsh's `cd OLD NEW` (replace OLD by NEW in the current
// directory) and `cd +N`/`cd -N` (the directory stack): the walk would
// follow neither to the right directory.
func zshCd(c *syntax.CallExpr, name string, flag zshFlag) {
	operands := 0
	for _, w := range c.Args[1:] {
		lit, ok := unquotedLiteral(w)
		if ok && len(lit) > 1 && (lit[0] == '+' || lit[0] == '-') && strings.Trim(lit[1:], "0123456789") == "" {
			flag(c, "%s %s moves along zsh's directory stack", name, lit)
		}
		if !ok || !strings.HasPrefix(lit, "-") {
			operands++
		}
	}
	if operands > 1 {
		flag(c, "%s with two words replaces text in the current directory's path", name)
	}
}

// zshDecl flags declarations that act on functions (typeset -f) or tie
// parameters (typeset -T), which the bash walk does not model.
func zshDecl(d *syntax.DeclClause, f frame, flag zshFlag) {
	for _, a := range d.Args {
		if !a.Naked || a.Name != nil || a.Value == nil {
			continue
		}
		opt, ok := unquotedLiteral(a.Value)
		if ok && len(opt) > 1 && (opt[0] == '-' || opt[0] == '+') && strings.ContainsAny(opt[1:], "fTMhH") {
			flag(d, "%s %s acts on functions or ties parameters", d.Variant.Value, opt)
		}
	}
}

// unquotedLiteral is a word's value with quotes and backslashes removed
// when it holds no expansion: zsh runs 'eval' and \eval as eval.
func unquotedLiteral(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
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

// unescape removes the backslashes of an unquoted literal.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// zshPlainFlags are the single-letter zsh options whose script the
// analysis reads as zsh's defaults would run it: -c, -s, -l, -i, -f (no rc
// files), -e, -n, -v, -x. The zsh shim accepts the same (shim.zshFlags).
const zshPlainFlags = "clisfenvx"

// zshPlainOption reports whether t, an option word given to zsh, leaves
// the script to be read under zsh's default options: -o NAME, +o NAME,
// --NAME and any other letter (-y sh_word_split, -G null_glob …) turn on
// or off a setting the analysis does not model.
func zshPlainOption(t string) bool {
	if strings.HasPrefix(t, "--") || t[0] == '+' && strings.ContainsRune(t, 'c') {
		return false
	}
	for _, c := range t[1:] {
		if !strings.ContainsRune(zshPlainFlags, c) {
			return false
		}
	}
	return true
}

// zshSetOptions are the options a zsh `set` may change without changing
// anything the analysis models, by zsh's normalised name (lower case, no
// underscores, no "no" prefix).
var zshSetOptions = nameSet{
	"errexit",
	"pipefail",
	"unset",
	"verbose",
	"xtrace",
}

// zshSet flags a zsh `set` that assigns an array (set -A NAME, +A) or
// changes an option other than zshSetOptions: zsh's set takes its own
// single letters (-G null_glob, -y sh_word_split) and option names in any
// case, with underscores and a "no" prefix (set +o noglobsubst turns
// glob_subst on), which the bash analysis does not read.
func zshSet(c *syntax.CallExpr, flag zshFlag) {
	args := c.Args[1:]
	for i := 0; i < len(args); i++ {
		opt, ok := unquotedLiteral(args[i])
		if !ok {
			flag(c, "set is given a word known only at run time")
			return
		}
		if opt == "-" || opt == "--" || len(opt) < 2 || opt[0] != '-' && opt[0] != '+' {
			return // the positional parameters follow
		}
		for _, l := range opt[1:] {
			switch {
			case l == 'o':
				i++
				if i >= len(args) {
					return // set -o lists the options
				}
				name, ok := unquotedLiteral(args[i])
				if !ok || !zshSetOptions.has(zshOptionName(name)) {
					flag(c, "set %s %s changes a zsh option, and so how later text is read or expanded", opt, nodeText("", args[i]))
				}
			case l == 'A':
				flag(c, "set %s assigns an array named on the command line", opt)
			case !strings.ContainsRune("euxv", l):
				flag(c, "set %s changes a zsh option, and so how later text is read or expanded", opt)
			}
		}
	}
}

// zshOptionName is a zsh option name as zsh compares them: lower case,
// without underscores and without a leading "no" (which negates it).
func zshOptionName(name string) string {
	n := strings.ToLower(strings.ReplaceAll(name, "_", ""))
	return strings.TrimPrefix(n, "no")
}
