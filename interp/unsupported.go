package interp

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/policy/shparse"
)

// Unsupported lists the features of f that the interp engine (RunEngine)
// would not run as bash does, one short reason each, in the order found and
// without repeats; nil means the engine may run f. set are the shell options
// from the command line, in the form of EngineOptions.Set; they matter
// because some differences only show under them (set -e).
//
// The check is static, so it sees only the program's text: code built while
// it runs (eval of a variable, a sourced file, a trap action in a variable)
// is not examined, and the interpreter then reports unimplemented features
// there itself ("kill: unsupported builtin", status 2). Literal eval
// arguments and trap actions are examined as part of the program. It errs
// on the side of refusing, with one exception: a builtin that the program
// defines a function for is taken to be that function everywhere.
func Unsupported(f *syntax.File, set ...string) []string {
	if f == nil {
		return []string{"no program"}
	}
	c := newScan(set)
	c.prepass(f)
	c.walk(f)
	_, optReasons := runnerOptions(set)
	return unique(append(optReasons, c.reasons...))
}

// A feature is one thing the engine does not do as bash does: the reason
// Unsupported gives, a program that uses it (the tests check that each is
// reported, with this reason), and the test on one syntax node.
type feature struct {
	reason  string
	example string
	match   func(c *scan, n syntax.Node) bool
}

// features is the table Unsupported applies to every node. The tests run
// each example under bash and under the engine (made to run it anyway) and
// check that the outcomes differ.
func features() []feature {
	fs := []feature{
		{"uses `coproc`", "coproc cat", func(_ *scan, n syntax.Node) bool {
			_, ok := n.(*syntax.CoprocClause)
			return ok
		}},
		{"uses `select`", "select x in a b; do break; done", func(_ *scan, n syntax.Node) bool {
			fc, ok := n.(*syntax.ForClause)
			return ok && fc.Select
		}},
		{"uses `time` (the engine reports on stdout, with no CPU times)", "time sleep 0.1", func(_ *scan, n syntax.Node) bool {
			_, ok := n.(*syntax.TimeClause)
			return ok
		}},
		{"runs a compound command or function in the background with no `wait` (it would be cut short when the shell exits)",
			"(sleep 0.3; echo done) &", func(c *scan, n syntax.Node) bool {
				st, ok := n.(*syntax.Stmt)
				if !ok || !(st.Background || st.Disown || st.Coprocess) || c.waits {
					return false
				}
				call, ok := st.Cmd.(*syntax.CallExpr)
				if !ok {
					return true
				}
				if len(call.Args) == 0 {
					return false // assignments only: nothing to cut short
				}
				name, lit := literal(call.Args[0])
				return !lit || c.funcs[name]
			}},
		{"redirects a file descriptor other than 0, 1 and 2", "exec 3>&1", func(_ *scan, n syntax.Node) bool {
			rd, ok := n.(*syntax.Redirect)
			return ok && rd.N != nil && !slices.Contains([]string{"0", "1", "2"}, rd.N.Value)
		}},
		{"uses the redirection `<>`", "cat <> file", redirOp(syntax.RdrInOut)},
		{"uses the redirection `>|`", "echo x >| file", redirOp(syntax.ClbOut)},
		{"duplicates or closes input with `<&`", "cat <&0", redirOp(syntax.DplIn)},
		{"duplicates or closes output with `>&` other than `>&1` and `>&2`", "echo x >&-", func(_ *scan, n syntax.Node) bool {
			rd, ok := n.(*syntax.Redirect)
			if !ok || rd.Op != syntax.DplOut {
				return false
			}
			to, lit := literal(rd.Word)
			return !lit || (to != "1" && to != "2")
		}},
		{"sends a here-document to a descriptor other than 0", "cat 3<<EOF\nx\nEOF", func(_ *scan, n syntax.Node) bool {
			rd, ok := n.(*syntax.Redirect)
			return ok && (rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc) && rd.N != nil && rd.N.Value != "0"
		}},
		{"uses an anchored replacement `${x/#…}` or `${x/%…}`", "x=hello; echo ${x/#he/HE}", func(_ *scan, n syntax.Node) bool {
			pe, ok := n.(*syntax.ParamExp)
			if !ok || pe.Repl == nil || pe.Repl.Orig == nil || len(pe.Repl.Orig.Parts) == 0 {
				return false
			}
			l, ok := pe.Repl.Orig.Parts[0].(*syntax.Lit)
			return ok && (strings.HasPrefix(l.Value, "#") || strings.HasPrefix(l.Value, "%"))
		}},
		{"uses a `${x@…}` transformation other than U, u, L, E and a", "x=\"it's\"; echo ${x@Q}", func(_ *scan, n syntax.Node) bool {
			pe, ok := n.(*syntax.ParamExp)
			if !ok || pe.Exp == nil || pe.Exp.Op != syntax.OtherParamOps {
				return false
			}
			op, lit := literal(pe.Exp.Word)
			return !lit || !slices.Contains([]string{"U", "u", "L", "E", "a"}, op)
		}},
		{"uses an extended glob in a `${x#…}`, `${x%…}` or `${x/…}` pattern", "shopt -s extglob; x=aab; echo ${x##+(a)}", func(_ *scan, n syntax.Node) bool {
			pe, ok := n.(*syntax.ParamExp)
			if !ok {
				return false
			}
			var w *syntax.Word
			switch {
			case pe.Repl != nil:
				w = pe.Repl.Orig
			case pe.Exp != nil && slices.Contains([]syntax.ParExpOperator{syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix}, pe.Exp.Op):
				w = pe.Exp.Word
			}
			return w != nil && hasExtGlob(w)
		}},
		{"starts a glob's name with `?`, `[` or `*.` (the engine matches hidden files there; bash does not)", "touch .h a; echo ?*", func(_ *scan, n syntax.Node) bool {
			return slices.ContainsFunc(expandedWords(n), globNameStart)
		}},
		{"uses `~+`, `~-` or a `~` after `=` or `:` in an argument (the engine leaves them as written)", "echo ~+ a=~", func(_ *scan, n syntax.Node) bool {
			return slices.ContainsFunc(expandedWords(n), tildeBashOnly)
		}},
		{"counts the elements of an associative array (`${#m[@]}`)", "declare -A m=([a]=1 [b]=2); echo ${#m[@]}", func(c *scan, n syntax.Node) bool {
			pe, ok := n.(*syntax.ParamExp)
			return ok && pe.Length && pe.Param != nil && c.assoc[pe.Param.Value] && allIndex(pe.Index)
		}},
		{"lists the keys or values of an associative array (bash's order differs)", "declare -A m=([a]=1 [b]=2 [c]=3 [d]=4 [e]=5); echo \"${!m[@]}\"", func(c *scan, n syntax.Node) bool {
			pe, ok := n.(*syntax.ParamExp)
			return ok && !pe.Length && pe.Param != nil && c.assoc[pe.Param.Value] && allIndex(pe.Index)
		}},
		{"tests an array element with `-v`", "a=(1); [[ -v a[0] ]] && echo set", func(_ *scan, n syntax.Node) bool {
			ut, ok := n.(*syntax.UnaryTest)
			if !ok || ut.Op != syntax.TsVarSet {
				return false
			}
			w, _ := ut.X.(*syntax.Word)
			s, lit := literal(w)
			return !lit || strings.Contains(s, "[")
		}},
		{"sets an EXIT trap inside a subshell", "(trap 'echo bye' EXIT; true)", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "trap")
			return ok && c.inSubshell() && slices.Contains(trapSignals(call.args), "EXIT")
		}},
		{"leaves a trap with `exit` or `return` (bash's status differs)", "trap 'exit 3' EXIT", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "trap")
			if ok && len(call.args) > 0 && call.args[0] == "--" {
				call.args, call.lit = call.args[1:], call.lit[1:]
			}
			if !ok || len(call.args) < 2 || !call.lit[0] {
				return false
			}
			if shparse.CheckNesting(call.args[0]) != nil {
				return true // not read: refused
			}
			tf, err := syntax.NewParser().Parse(strings.NewReader(call.args[0]), "")
			return err != nil || callsAny(tf, "exit", "return")
		}},
		{"sets an ERR trap in a program with functions (bash does not run it inside them without set -E)",
			"trap 'echo error' ERR; f() { false; }; f", func(c *scan, n syntax.Node) bool {
				call, ok := c.builtinCall(n, "trap")
				return ok && len(c.funcs) > 0 && slices.Contains(trapSignals(call.args), "ERR")
			}},
		{"runs several commands or a function in `$(…)` under set -e (bash turns set -e off there)",
			"set -e; x=$(false; echo y); echo $x", func(c *scan, n syntax.Node) bool {
				cs, ok := n.(*syntax.CmdSubst)
				return ok && c.errexit && !c.plainSubst(cs)
			}},
		{"uses `let` with a quoted expression", "let \"a = 1 + 2\"; echo $a", func(_ *scan, n syntax.Node) bool {
			lc, ok := n.(*syntax.LetClause)
			if !ok {
				return false
			}
			for _, e := range lc.Exprs {
				if w, ok := e.(*syntax.Word); ok && (len(w.Parts) != 1 || !isLit(w.Parts[0])) {
					return true
				}
			}
			return false
		}},
		{"sets a shell option the engine does not implement", "set -C", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "set")
			return ok && !setArgsSupported(call)
		}},
		{"prints shell options or variables with `set`", "set -o", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "set")
			if !ok {
				return false
			}
			if len(call.args) == 0 {
				return true
			}
			last := call.args[len(call.args)-1]
			return call.lit[len(call.args)-1] && (last == "-o" || last == "+o")
		}},
		{"uses `shopt` other than -s or -u with dotglob, expand_aliases, extglob, globstar, nocaseglob or nullglob",
			"shopt -s nocasematch", func(c *scan, n syntax.Node) bool {
				call, ok := c.builtinCall(n, "shopt")
				return ok && !shoptArgsSupported(call)
			}},
		{"uses an option of declare, typeset, local, export or readonly the engine does not implement", "declare -i n=1", func(c *scan, n syntax.Node) bool {
			dc, ok := n.(*syntax.DeclClause)
			if !ok {
				return false
			}
			allowed := declFlags(dc.Variant.Value)
			for _, fl := range declOptions(dc) {
				if len(fl) < 2 || strings.Trim(fl[1:], allowed) != "" || fl[0] == '+' {
					return true
				}
			}
			return false
		}},
		{"prints variables with declare, typeset, local, export or readonly", "export -p", func(c *scan, n syntax.Node) bool {
			dc, ok := n.(*syntax.DeclClause)
			if !ok {
				return false
			}
			names := declNames(dc)
			for _, fl := range declOptions(dc) {
				if strings.Contains(fl, "p") && (len(names) == 0 || slices.ContainsFunc(names, func(s string) bool { return c.assoc[s] })) {
					return true
				}
			}
			return len(names) == 0
		}},
		{"uses `trap` on a signal other than EXIT and ERR", "trap 'echo int' INT", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "trap")
			return ok && slices.ContainsFunc(trapSignals(call.args), func(s string) bool { return s != "EXIT" && s != "ERR" })
		}},
		{"lists traps or signals with `trap`", "trap -p", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "trap")
			return ok && (len(call.args) == 0 || len(call.options("")) > 0)
		}},
		{"uses `printf` with an option (-v or --)", "printf -v x %s 1", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "printf")
			return ok && len(call.args) > 0 && call.lit[0] && len(call.args[0]) > 1 && call.args[0][0] == '-'
		}},
		{"uses a `printf` conversion other than %s %b %c %d %i %u %o %x (or a precision, `*`, `#`)", "printf '%.2f\\n' 1", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "printf")
			return ok && len(call.args) > 0 && call.lit[0] && !printfFormatSupported(call.args[0])
		}},
		{"uses `echo -e` with `\\c` or `\\0`", "echo -e 'a\\cb'", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "echo")
			if !ok {
				return false
			}
			e := false
			for i, a := range call.args {
				if len(a) > 1 && a[0] == '-' && call.lit[i] && strings.Trim(a[1:], "neE") == "" {
					e = e || strings.Contains(a, "e")
					continue
				}
				if e && (strings.Contains(a, `\c`) || strings.Contains(a, `\0`)) {
					return true
				}
			}
			return false
		}},
		{"compares strings with `<` or `>` in `test` or `[`", "[ a \\< b ] && echo less", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "test")
			if !ok {
				call, ok = c.builtinCall(n, "[")
			}
			return ok && (slices.Contains(call.args, "<") || slices.Contains(call.args, ">"))
		}},
		{"lists aliases", "alias b=1 a=2; alias", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "alias")
			return ok && len(call.args) == 0
		}},
		{"uses `type` on a function or with -a or -f", "type -a ls", func(c *scan, n syntax.Node) bool {
			call, ok := c.builtinCall(n, "type")
			if !ok {
				return false
			}
			if strings.Trim(strings.Join(call.options(""), ""), "tpP-") != "" {
				return true
			}
			return slices.ContainsFunc(call.args, func(a string) bool { return c.funcs[a] })
		}},
		{"assigns a variable bash gives a meaning the engine does not (PS4, CDPATH, GLOBIGNORE, …)", "touch a.o b.c; GLOBIGNORE='*.o'; echo *", func(_ *scan, n syntax.Node) bool {
			as, ok := n.(*syntax.Assign)
			return ok && as.Name != nil && meaningfulVars(as.Name.Value)
		}},
	}
	// Builtins the engine implements only in part: the options it has.
	for _, b := range []struct{ name, allowed, example string }{
		{"read", "rsa", "read -t 1 x"},
		{"mapfile", "td", "mapfile -n 1 lines"},
		{"readarray", "td", "readarray -n 1 lines"},
		{"wait", "", "sleep 0.1 & wait -n"},
		{"command", "v", "command -V ls"},
		{"cd", "", "cd -P /tmp"},
		{"exec", "", "exec -a name sleep 0.1"},
	} {
		fs = append(fs, feature{
			reason:  fmt.Sprintf("uses `%s` with an option the engine does not implement", b.name),
			example: b.example,
			match: func(c *scan, n syntax.Node) bool {
				call, ok := c.builtinCall(n, b.name)
				return ok && strings.Trim(strings.Join(call.options(b.allowed), ""), b.allowed+"-") != ""
			},
		})
	}
	// Builtins the engine does not implement, or implements differently.
	for _, b := range []struct{ name, example string }{
		{"kill", "kill -0 $$"}, {"ulimit", "ulimit -n"}, {"umask", "umask 077"},
		{"jobs", "sleep 0.1 & jobs"}, {"fg", "fg"}, {"bg", "bg"}, {"disown", "sleep 0.1 & disown"},
		{"suspend", "suspend"}, {"logout", "logout"}, {"caller", "f() { caller; }; f"},
		{"enable", "enable -n echo"}, {"compgen", "compgen -c"}, {"complete", "complete -W x f"},
		{"compopt", "compopt -o nospace"}, {"history", "history"}, {"fc", "fc -l"}, {"bind", "bind -l"},
		{"times", "for i in {1..20000}; do :; done; times"}, {"newgrp", "newgrp"}, {"help", "help cd"},
		{"dirs", "cd /; dirs"}, {"pushd", "cd /; pushd /tmp"}, {"popd", "popd"},
	} {
		fs = append(fs, feature{
			reason:  fmt.Sprintf("uses the `%s` builtin, which the engine does not implement as bash does", b.name),
			example: b.example,
			match: func(c *scan, n syntax.Node) bool {
				_, ok := c.builtinCall(n, b.name)
				return ok
			},
		})
	}
	// Variables bash sets and the engine does not (or not the same way).
	for _, v := range specialVars {
		ref, all := "$"+v, "[*]"
		if !syntax.ValidName(v) {
			all = "" // $-, $_ and $! have no elements
		}
		if v == "!" {
			ref = "$! (other than in `wait $!` or `pid=$!`)"
		}
		fs = append(fs, feature{
			reason:  fmt.Sprintf("reads %s, which the engine does not set as bash does", ref),
			example: fmt.Sprintf(`alias ll=ls; hash ls; cd /; sleep 0 & true | true; f() { echo "${%s}"; }; f x`, v+all),
			match: func(c *scan, n syntax.Node) bool {
				return c.readsVar(n, v)
			},
		})
	}
	return fs
}

// specialVars are the variables bash maintains that the interpreter leaves
// unset, sets differently, or does not use.
// (BASH_ARGV and BASH_ARGC are left out: bash sets them only under shopt
// extdebug, which is refused anyway; so are COPROC and coproc.)
var specialVars = []string{
	"BASH", "BASH_VERSION", "BASH_VERSINFO", "BASHPID", "BASH_SOURCE", "BASH_LINENO",
	"BASH_ARGV0", "BASH_COMMAND", "BASH_SUBSHELL", "BASH_EXECUTION_STRING",
	"BASHOPTS", "SHELLOPTS", "BASH_ALIASES", "BASH_CMDS", "FUNCNAME", "PIPESTATUS", "SECONDS",
	"EPOCHSECONDS", "EPOCHREALTIME", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "GROUPS",
	"HISTCMD", "DIRSTACK", "-", "_", "!",
}

// meaningfulVars reports whether the value of the variable name changes
// what bash does in ways the interpreter does not follow. (This and
// declFlags are switches: a map would be built at start-up of every shim
// process.)
func meaningfulVars(name string) bool {
	switch name {
	case "PS4", "CDPATH", "GLOBIGNORE", "EXECIGNORE", "BASH_XTRACEFD",
		"TIMEFORMAT", "POSIXLY_CORRECT", "BASH_COMPAT", "BASHOPTS",
		"SHELLOPTS", "SECONDS", "BASH_ARGV0", "FUNCNEST":
		return true
	}
	return false
}

// declFlags returns the option letters the interpreter implements for the
// declaration builtin name (-p is judged separately: its output differs
// only for associative arrays and without names); none for export,
// readonly, nameref and any other name.
func declFlags(name string) string {
	switch name {
	case "declare", "typeset":
		return "aAgnprx"
	case "local":
		return "aAnprx"
	}
	return ""
}

// scan is the state of one Unsupported walk.
type scan struct {
	table   []feature
	funcs   map[string]bool // functions the program declares
	assoc   map[string]bool // associative arrays it declares
	waits   bool            // it calls wait
	errexit bool            // set -e may be on
	stack   []syntax.Node   // ancestors of the node being visited
	bangOK  map[*syntax.ParamExp]bool
	reasons []string
	depth   int // nesting of literal eval and trap code

	// What the table asks about the node being visited, worked out once.
	cur       syntax.Node
	curCall   call
	curNames  map[string]bool
	namesDone bool
}

func newScan(set []string) *scan {
	c := &scan{table: features(), funcs: map[string]bool{}, assoc: map[string]bool{}, bangOK: map[*syntax.ParamExp]bool{}}
	c.errexit = slices.Contains(set, "-errexit")
	return c
}

// prepass collects what the table needs to know about the whole program.
func (c *scan) prepass(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			if n.Name != nil {
				c.funcs[n.Name.Value] = true
			}
		case *syntax.DeclClause:
			if slices.ContainsFunc(declOptions(n), func(s string) bool { return strings.Contains(s, "A") }) {
				for _, name := range declNames(n) {
					c.assoc[name] = true
				}
			}
		case *syntax.Assign:
			// pid=$! keeps the job handle for a later `wait $pid`.
			if n.Value != nil {
				if pe := soleParam(n.Value); pe != nil && pe.Param != nil && pe.Param.Value == "!" {
					c.bangOK[pe] = true
				}
			}
		case *syntax.CallExpr:
			call := callOf(n)
			switch call.name {
			case "wait":
				c.waits = true
				for _, a := range n.Args[call.first:] {
					if pe := soleParam(a); pe != nil && pe.Param != nil && pe.Param.Value == "!" {
						c.bangOK[pe] = true
					}
				}
			case "set":
				if setsErrexit(call) {
					c.errexit = true
				}
			}
		}
		return true
	})
}

// walk applies the table to every node of f, and to literal eval and trap
// code.
func (c *scan) walk(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			c.stack = c.stack[:len(c.stack)-1]
			return true
		}
		c.cur, c.curNames, c.namesDone = n, nil, false
		if ce, ok := n.(*syntax.CallExpr); ok {
			c.curCall = callOf(ce)
		}
		for _, ft := range c.table {
			if ft.match(c, n) {
				c.reasons = append(c.reasons, ft.reason)
			}
		}
		c.nested(n)
		c.stack = append(c.stack, n)
		return true
	})
}

// nested examines code given as literal text to eval or as a trap action,
// which the interpreter runs in the same shell.
func (c *scan) nested(n syntax.Node) {
	if c.depth > 4 {
		return
	}
	var src string
	if call, ok := c.builtinCall(n, "eval"); ok && !slices.Contains(call.lit, false) {
		src = strings.Join(call.args, " ")
	} else if call, ok := c.builtinCall(n, "trap"); ok {
		if len(call.args) > 0 && call.args[0] == "--" {
			call.args, call.lit = call.args[1:], call.lit[1:]
		}
		if len(call.args) < 2 || !call.lit[0] {
			return
		}
		src = call.args[0]
	} else {
		return
	}
	if err := shparse.CheckNesting(src); err != nil {
		c.reasons = append(c.reasons, "gives eval or trap code that is "+err.Error())
		return
	}
	ef, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return // a syntax error is reported when it runs, as by bash
	}
	sub := &scan{table: c.table, funcs: c.funcs, assoc: c.assoc, waits: c.waits, errexit: c.errexit,
		bangOK: c.bangOK, depth: c.depth + 1, stack: slices.Clone(c.stack)}
	sub.prepass(ef)
	sub.walk(ef)
	c.reasons = append(c.reasons, sub.reasons...)
}

// inSubshell reports whether the node being visited runs in a subshell.
func (c *scan) inSubshell() bool {
	for _, a := range c.stack {
		switch a := a.(type) {
		case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
			return true
		case *syntax.BinaryCmd:
			if a.Op == syntax.Pipe || a.Op == syntax.PipeAll {
				return true
			}
		case *syntax.Stmt:
			if a.Background {
				return true
			}
		}
	}
	return false
}

// plainSubst reports whether a command substitution behaves the same whether
// or not set -e applies inside it: one command, no function calls.
func (c *scan) plainSubst(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) > 1 {
		return false
	}
	plain := true
	for _, st := range cs.Stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Block, *syntax.Subshell, *syntax.IfClause, *syntax.WhileClause,
				*syntax.ForClause, *syntax.CaseClause, *syntax.FuncDecl:
				plain = false
			case *syntax.CallExpr:
				if name := callOf(n).name; name == "" || c.funcs[name] || name == "eval" || name == "source" || name == "." {
					plain = false
				}
			case *syntax.CmdSubst, *syntax.ProcSubst:
				return false // judged on their own
			}
			return plain
		})
	}
	return plain
}

// readsVar reports whether n reads variable v: a parameter expansion, a
// name in arithmetic, or a `-v` test.
func (c *scan) readsVar(n syntax.Node, v string) bool {
	if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil && pe.Param.Value == v && !(v == "!" && c.bangOK[pe]) {
		return true
	}
	if !c.namesDone {
		c.curNames, c.namesDone = namesRead(n), true
	}
	return c.curNames[v]
}

// namesRead returns the variables n reads by name rather than through $:
// in arithmetic, and in a `-v` test.
func namesRead(n syntax.Node) map[string]bool {
	var exprs []syntax.ArithmExpr
	switch n := n.(type) {
	case *syntax.ArithmExp:
		exprs = append(exprs, n.X)
	case *syntax.ArithmCmd:
		exprs = append(exprs, n.X)
	case *syntax.LetClause:
		exprs = n.Exprs
	case *syntax.CStyleLoop:
		exprs = append(exprs, n.Init, n.Cond, n.Post)
	case *syntax.Assign:
		exprs = append(exprs, n.Index)
	case *syntax.ArrayElem:
		exprs = append(exprs, n.Index)
	case *syntax.ParamExp:
		if n.Index == nil {
			return nil
		}
		exprs = append(exprs, n.Index)
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet {
			w, _ := n.X.(*syntax.Word)
			if s, ok := literal(w); ok {
				return map[string]bool{s: true}
			}
		}
	}
	if len(exprs) == 0 {
		return nil
	}
	names := map[string]bool{}
	for _, e := range exprs {
		for name := range arithmNames(e) {
			names[name] = true
		}
	}
	return names
}

// arithmNames returns the variable names an arithmetic expression reads by
// name (not through $), which is how `(( SECONDS > 5 ))` reads SECONDS.
func arithmNames(e syntax.ArithmExpr) map[string]bool {
	if e == nil {
		return nil
	}
	names := map[string]bool{}
	syntax.Walk(e, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			if len(n.Parts) == 1 {
				if l, ok := n.Parts[0].(*syntax.Lit); ok && syntax.ValidName(l.Value) {
					names[l.Value] = true
				}
			}
			return false
		case *syntax.ParamExp, *syntax.CmdSubst:
			return false
		}
		return true
	})
	return names
}

// call is a simple command as far as it can be read statically.
type call struct {
	name  string   // the command name, "" if not literal
	args  []string // arguments after it
	lit   []bool   // whether each argument is literal
	first int      // index in CallExpr.Args of the first argument
}

// callOf reads a simple command, looking through `command` and `builtin`
// (which run the builtin named next) and `exec` (which runs the command
// named next and exits).
func callOf(ce *syntax.CallExpr) call {
	var c call
	i := 0
	for i < len(ce.Args) {
		name, lit := literal(ce.Args[i])
		if !lit {
			return call{}
		}
		c.name = name
		i++
		if !slices.Contains([]string{"command", "builtin", "exec"}, name) || i >= len(ce.Args) {
			break
		}
		next, lit := literal(ce.Args[i])
		if !lit || strings.HasPrefix(next, "-") {
			break // options: judged as that builtin's
		}
	}
	c.first = i
	for _, w := range ce.Args[i:] {
		s, lit := literal(w)
		c.args = append(c.args, s)
		c.lit = append(c.lit, lit)
	}
	return c
}

// builtinCall returns n as a call of builtin name, unless n is not a simple
// command or name is a function of the program.
func (c *scan) builtinCall(n syntax.Node, name string) (call, bool) {
	ce, ok := n.(*syntax.CallExpr)
	if !ok || c.funcs[name] {
		return call{}, false
	}
	if n != c.cur {
		return callOf(ce), false // not reached: walk sets cur first
	}
	cl := c.curCall
	if cl.name == name {
		// A copy, so that a matcher may reslice it.
		cl.args, cl.lit = slices.Clone(cl.args), slices.Clone(cl.lit)
	}
	return cl, cl.name == name
}

// options returns the leading option words of a call ("-ab", "+o"), stopping
// at "--" or at the first operand, and skipping the value of an allowed
// option that takes one (read -d DELIM). A word that is not literal is taken
// for an operand: `cd "$dir"`, `wait $!`.
func (cl call) options(allowed string) []string {
	var opts []string
	for i := 0; i < len(cl.args); i++ {
		a := cl.args[i]
		if !cl.lit[i] || a == "--" || len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		opts = append(opts, a)
		if strings.ContainsAny(a[len(a)-1:], valueFlags) && strings.Contains(allowed, a[len(a)-1:]) {
			i++
		}
	}
	return opts
}

// valueFlags are option letters of the partly supported builtins that take
// a value (read -d, mapfile -d, read -p …).
const valueFlags = "dp"

// setArgsSupported reports whether a `set` call uses only options the
// interpreter implements.
func setArgsSupported(cl call) bool {
	for i := 0; i < len(cl.args); i++ {
		a := cl.args[i]
		if !cl.lit[i] {
			return false
		}
		if a == "-" || a == "--" || len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			return true // positional parameters follow
		}
		for _, l := range a[1:] {
			if l == 'o' {
				i++
				if i >= len(cl.args) {
					return true // printing: another entry
				}
				if !cl.lit[i] || !setSupported(cl.args[i]) {
					return false
				}
				continue
			}
			if !strings.ContainsRune("aefnux", l) {
				return false
			}
		}
	}
	return true
}

// setsErrexit reports whether a `set` call may turn on errexit.
func setsErrexit(cl call) bool {
	for i, a := range cl.args {
		if !cl.lit[i] {
			return true
		}
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return false
		}
		if strings.Contains(a[1:], "e") || (strings.Contains(a[1:], "o") && i+1 < len(cl.args) && cl.args[i+1] == "errexit") {
			return true
		}
	}
	return false
}

// shoptArgsSupported reports whether a `shopt` call sets or unsets only
// options the interpreter implements.
func shoptArgsSupported(cl call) bool {
	mode := ""
	names := 0
	for i, a := range cl.args {
		if !cl.lit[i] {
			return false
		}
		switch {
		case a == "-s" || a == "-u":
			mode = a
		case strings.HasPrefix(a, "-"):
			return false
		case !shoptSupported(a):
			return false
		default:
			names++
		}
	}
	return mode != "" && names > 0
}

// printfFormatSupported reports whether the interpreter's printf handles
// every conversion of format as bash's does.
func printfFormatSupported(format string) bool {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			continue
		}
		if i < len(format) && strings.IndexByte("-+ ", format[i]) >= 0 {
			i++
		}
		for i < len(format) && format[i] >= '0' && format[i] <= '9' {
			i++
		}
		if i >= len(format) || strings.IndexByte("sbcdiuox", format[i]) < 0 {
			return false
		}
	}
	return true
}

// trapSignals returns the signal names a trap call sets, upper case and
// without a SIG prefix; numbers are returned as they are.
func trapSignals(args []string) []string {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		return nil // options: another entry
	}
	if len(args) > 1 {
		args = args[1:] // the action
	}
	var sigs []string
	for _, a := range args {
		sigs = append(sigs, strings.TrimPrefix(strings.ToUpper(a), "SIG"))
	}
	return sigs
}

// callsAny reports whether f contains a simple command named one of names.
func callsAny(f *syntax.File, names ...string) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && slices.Contains(names, callOf(ce).name) {
			found = true
		}
		return !found
	})
	return found
}

// declOptions returns the option words of a declaration ("-A", "+x"); a
// word that is not literal is returned as "".
func declOptions(dc *syntax.DeclClause) []string {
	var opts []string
	for _, as := range dc.Args {
		if as.Name != nil || !as.Naked {
			continue
		}
		s, lit := literal(as.Value)
		switch {
		case !lit:
			opts = append(opts, "")
		case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+"):
			opts = append(opts, s)
		}
	}
	return opts
}

// declNames returns the names a declaration declares.
func declNames(dc *syntax.DeclClause) []string {
	var names []string
	for _, as := range dc.Args {
		if as.Name != nil {
			names = append(names, as.Name.Value)
		} else if s, lit := literal(as.Value); lit && !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+") {
			name, _, _ := strings.Cut(s, "=")
			names = append(names, name)
		} else if !lit {
			names = append(names, "")
		}
	}
	return names
}

// redirOp matches redirections with operator op.
func redirOp(op syntax.RedirOperator) func(*scan, syntax.Node) bool {
	return func(_ *scan, n syntax.Node) bool {
		rd, ok := n.(*syntax.Redirect)
		return ok && rd.Op == op
	}
}

// allIndex reports whether an index is @ or *: the whole array.
func allIndex(e syntax.ArithmExpr) bool {
	w, ok := e.(*syntax.Word)
	if !ok {
		return false
	}
	s, _ := literal(w)
	return s == "@" || s == "*"
}

// hasExtGlob reports whether a pattern word contains an extended glob.
func hasExtGlob(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.ExtGlob:
			return true
		case *syntax.Lit:
			for _, op := range []string{"?(", "*(", "+(", "@(", "!("} {
				if strings.Contains(p.Value, op) {
					return true
				}
			}
		}
	}
	return false
}

// starDotWidens reports whether the rest of a name after "*." holds a
// pattern character: *.[mg]* matches .git in the engine. A fixed suffix
// (*.go) could only match a file named exactly ".go" — a difference left,
// and documented, rather than refusing every *.go.
func starDotWidens(rest string) bool {
	name, _, _ := strings.Cut(rest, "/")
	return strings.ContainsAny(name, "*?[")
}

// expandedWords are the words of n that undergo globbing and tilde
// expansion as arguments: a command's arguments and a for loop's items.
func expandedWords(n syntax.Node) []*syntax.Word {
	switch n := n.(type) {
	case *syntax.CallExpr:
		if len(n.Args) > 1 {
			return n.Args[1:]
		}
	case *syntax.WordIter:
		return n.Items
	}
	return nil
}

// globNameStart reports whether a word has an unquoted ?, [ or *. first in
// a name (at its start or after a /): mvdan.cc/sh's globbing lets it match
// a leading dot (in *.x, the empty * leaves the . to match it), bash's does
// not.
func globNameStart(w *syntax.Word) bool {
	atStart := true
	for _, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			atStart = false
			continue
		}
		for i := 0; i < len(l.Value); i++ {
			c := l.Value[i]
			if c == '\\' {
				i++
				atStart = false
				continue
			}
			if atStart && (c == '?' || c == '[' && strings.IndexByte(l.Value[i+1:], ']') >= 0 || c == '*' && strings.HasPrefix(l.Value[i+1:], ".") && starDotWidens(l.Value[i+2:])) {
				return true
			}
			atStart = c == '/'
		}
	}
	return false
}

// tildeBashOnly reports whether a word holds a tilde bash expands and the
// engine does not: ~+ and ~- at its start, and ~ after the = or a : of a
// word that looks like an assignment (bash expands make DESTDIR=~/x).
func tildeBashOnly(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return false
	}
	v := l.Value
	if v == "~+" || v == "~-" || strings.HasPrefix(v, "~+/") || strings.HasPrefix(v, "~-/") {
		return true
	}
	name, rest, found := strings.Cut(v, "=")
	if !found || name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	return strings.HasPrefix(rest, "~") || strings.Contains(rest, ":~")
}

// soleParam returns the parameter expansion a word consists of, quoted or
// not, or nil.
func soleParam(w *syntax.Word) *syntax.ParamExp {
	if len(w.Parts) != 1 {
		return nil
	}
	switch p := w.Parts[0].(type) {
	case *syntax.ParamExp:
		return p
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 {
			pe, _ := p.Parts[0].(*syntax.ParamExp)
			return pe
		}
	}
	return nil
}

func isLit(p syntax.WordPart) bool {
	_, ok := p.(*syntax.Lit)
	return ok
}

// literal returns the value of a word that involves no expansion, with its
// quoting removed, and whether it is such a word.
func literal(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var sb strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			sb.WriteString(unescape(p.Value, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			sb.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				sb.WriteString(unescape(l.Value, "\"\\$`\n"))
			}
		default:
			return "", false
		}
	}
	return sb.String(), true
}

// unescape removes the backslashes that quote the next character; special
// lists which characters a backslash quotes ("" means any, as unquoted).
func unescape(s, special string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (special == "" || strings.IndexByte(special, s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue // a line continuation
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

func unique(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range s {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
