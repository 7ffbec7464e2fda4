package policy

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/policy/shparse"
	"mvdan.cc/sh/v3/syntax"
)

// classify normalizes a simple command (wrappers off) and runs the layers
// on it. words[0] is literal.
func (a *analyzer) classify(seg *Segment, words []word, s *syntax.Stmt, f frame, piped bool) {
	// A wrapper that changes directory (env -C) moves only the command it
	// runs: the rest of the program stays where it was.
	savedCwd, savedMoves, savedToFile := a.cwd, a.wrapperMoves, a.printsToFile
	a.printsToFile = s != nil && a.stdoutToFile(seg, s)
	defer func() {
		a.printsToFile = savedToFile
		if a.wrapperMoves > savedMoves {
			a.cwd, a.wrapperMoves = savedCwd, savedMoves
		}
	}()
	seg.Wrappers = append([]string(nil), f.via...)
	// Functions come before everything else, wrappers and builtins
	// included, as in bash; their bodies were analyzed where defined.
	if name := words[0].text; a.funcs[name] != nil {
		if slices.Contains(a.calling, a.funcs[name]) {
			a.callFunction(seg, name, a.funcs[name], s, f)
			return
		}
		if changesDirectory(a.funcs[name]) {
			// Its body was walked where it was defined; where a call
			// leaves the current directory is not followed.
			a.cwd = ""
		}
		seg.Argv = []string{name}
		seg.words = words[:1]
		a.redirects(seg, s, f)
		a.keepIfNotable(seg)
		return
	}
	for range maxDepth * 2 {
		spec := a.r.Wrappers.get(programName(words[0].text))
		if spec == nil {
			break
		}
		next, state := a.unwrap(seg, spec, words, s, f, piped)
		if state == unwrapDone {
			return
		}
		if state == unwrapSelf {
			break // the wrapper is itself the program (command -v, env alone)
		}
		words = next
		if !words[0].literal() {
			seg.add(dynamicName(words[0].text))
			a.redirects(seg, s, f)
			a.push(seg)
			return
		}
	}
	name := programName(words[0].text)
	seg.setArgv(words)
	if p := words[0].text; strings.Contains(p, "/") && runsProcessFile(a.resolve(p), p) {
		// /proc/self/exe is the shell that runs it, /dev/fd/N an open
		// file: its name says nothing of the program.
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("runs %s, a program named by a process's files rather than by its path", quoteWord(p)), Rule: "process-file"})
		seg.Opaque = true
	}
	if a.special(seg, name, words, s, f, piped) {
		return
	}
	a.layers(seg, name, words)
	a.redirects(seg, s, f)
	a.push(seg)
}

// runsProcessFile reports whether a command path (resolved, or as written
// when it cannot be) runs a process's own files: /proc/PID/exe, an open
// descriptor under /proc/PID/fd or /dev/fd, a process's root or cwd.
func runsProcessFile(resolved, written string) bool {
	for _, p := range []string{resolved, path.Clean(written)} {
		if strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd/") || p == "/dev/stdin" {
			return true
		}
	}
	return false
}

// layers runs the safe-binary, dangerous-pattern and data-flow checks.
func (a *analyzer) layers(seg *Segment, name string, words []word) {
	a.noteShellOptions(name, words)
	safe := a.safeProgram(seg, name, words)
	seg.flags.listsWorkspace = a.listsWorkspace(name, words)
	if seg.flags.listsWorkspace {
		seg.listNames = nameFilter(name, words)
		seg.listRoots = a.listRoots(name, words)
	}
	a.inputNames(seg, name, words)
	a.fileWrites(seg, name, words)
	a.noteLosses(seg, name, words)
	a.applyRules(seg, name, words)
	a.flows(seg, name, words)
	a.runsDownload(seg, words[0])
	a.codeFiles(seg, name, words)
	if a.r.Safe.get(name) == nil || !safe && !seg.unsafe {
		// A model of the safe table that proved the command read-only
		// knows what its arguments are, and one that found a firm reason
		// has said what matters; otherwise what the program does with a
		// sensitive path is not known.
		a.sensitiveArgs(seg, name, words)
	}
	if !safe && (seg.Risk == Safe || seg.viaRunner && a.r.Safe.get(name) == nil && a.r.Interpreters.get(name) == nil) {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s is not a known read-only program", quoteWord(words[0].shown())), Rule: "not-read-only", Coverable: true})
	}
	a.projectFiles(seg, name, words)
	a.registryTokenFiles(seg, words)
}

// unwrapState says what unwrap did.
type unwrapState int

const (
	unwrapped  unwrapState = iota // rest is the wrapped command
	unwrapSelf                    // there is no wrapped command: classify the wrapper itself
	unwrapDone                    // the payload was handled in full (nested shell)
)

// unwrap takes one wrapper off words and returns the wrapped command.
func (a *analyzer) unwrap(seg *Segment, spec *wrapperSpec, words []word, s *syntax.Stmt, f frame, piped bool) (rest []word, state unwrapState) {
	name := programName(words[0].text)
	if spec.Risk != "" {
		r, _ := ParseRisk(spec.Risk)
		seg.add(Reason{Risk: r, Text: spec.Reason, Rule: "wrapper-" + name, Coverable: r < Dangerous})
	}
	args := words[1:]
	if len(spec.Sub) > 0 {
		sub, ok := a.wrapperSub(spec, args)
		if !ok {
			return words, unwrapSelf
		}
		a.applyRules(seg, name, words)
		args = args[sub+1:]
		a.wrapperDirs(seg, name, spec, words[1:])
		if spec.Runner {
			seg.viaRunner = true
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s runs the command in the project's environment, whose programs are the workspace's own and are not checked", name, words[sub+1].text), Rule: workspaceRunnerRule, Coverable: true})
		}
	}
	i := 0
	joinAsShell := spec.JoinAsShell
	var replace []string
	for ; i < len(args); i++ {
		w := args[i]
		if !w.known {
			if isOptionShape(w) {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("the options of %s are only known at run time", name), Rule: "dynamic-options"})
			}
			break
		}
		t := w.text
		if t == "--" {
			i++
			break
		}
		if !isOption(t) || (spec.Applet && i == 0) {
			break
		}
		if attached, ok := attachedValue(spec.AttachedReplaceOptions, t); ok {
			replace = append(replace, attached) // xargs -i[R]: the value is only ever attached
			continue
		}
		switch {
		case matchesAny(spec.Lookup, t), matchesAny(spec.NoCommandOptions, t):
			return words, unwrapSelf
		case matchesAny(spec.ShellOptions, t):
			payload, ok := optionArgument(args, &i, matchingSpec(spec.ShellOptions, t))
			a.nestedWord(seg, payload, ok, name, name+" "+t, s, f)
			return nil, unwrapDone
		case matchesAny(spec.SplitOptions, t):
			payload, ok := optionArgument(args, &i, matchingSpec(spec.SplitOptions, t))
			if !ok || !payload.literal() {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s runs a command only known at run time", name, t), Rule: "dynamic-payload"})
				seg.Opaque = true
				a.push(seg)
				return nil, unwrapDone
			}
			// env -S splits its string into words by rules of its own
			// (envSplit), then appends the remaining words: the command
			// line is those words, quoted for the nested analysis.
			split, ok := envSplit(payload.text)
			if !ok {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s splits a string execgate cannot read as env does", name, t), Rule: "dynamic-payload"})
				seg.Opaque = true
				a.push(seg)
				return nil, unwrapDone
			}
			var line []string
			for _, w := range split {
				line = append(line, shellQuote(w))
			}
			for _, r := range args[i+1:] {
				line = append(line, asShellWord(r))
			}
			a.nested(seg, strings.Join(line, " "), name+" "+t, s, f)
			return nil, unwrapDone
		case matchesAny(spec.ReplaceOptions, t):
			if matchesAny(spec.OptionalValue, t) {
				// xargs --replace[=R]: R only attached, {} without it.
				v := "{}"
				if _, attached, ok := strings.Cut(t, "="); ok {
					v = attached
				}
				replace = append(replace, v)
				continue
			}
			if v, ok := optionArgument(args, &i, matchingSpec(spec.ReplaceOptions, t)); ok {
				replace = append(replace, v.text)
			} else {
				replace = append(replace, "{}")
			}
		case matchesAny(spec.OptionalValue, t):
			// Its value, if any, is attached: the next word is not it.
		case matchesAny(spec.ExecOptions, t):
			joinAsShell = false
		case matchesAny(spec.ReadOptions, t):
			if v, ok := optionArgument(args, &i, matchingSpec(spec.ReadOptions, t)); ok {
				if c := a.credentialArg("", []word{v}); c != "" {
					seg.flags.readsCreds = true
					seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s reads credentials (%s)", name, t, c), Rule: "reads-credentials"})
				}
			}
		case matchesAny(spec.EnvOptions, t):
			// xargs --process-slot-var=NAME sets NAME for every command.
			if v, ok := optionArgument(args, &i, matchingSpec(spec.EnvOptions, t)); ok {
				a.slotVar(seg, name, t, v)
			}
		case matchesAny(spec.OutputOptions, t):
			if v, ok := optionArgument(args, &i, matchingSpec(spec.OutputOptions, t)); ok {
				a.outputTarget(seg, v, name+" "+t)
			}
		case wrapperChdir(name, t):
			// env -C DIR, sudo -D DIR: the command runs in DIR.
			dir, ok := optionArgument(args, &i, chdirSpec(t))
			a.wrapperMoves++
			seg.moved = true
			moved := ""
			if ok && dir.literal() {
				moved = a.resolve(dir.text)
			}
			a.cwd = moved
		case takesValue(t, spec.OptionsWithValue):
			i++
		}
	}
	if spec.Assignments {
		// env takes every word with a = in it as NAME=VALUE, whatever
		// NAME holds (BASH_FUNC_ls%%=… exports a function).
		for ; i < len(args) && args[i].known && strings.Contains(args[i].text, "=") && !strings.HasPrefix(args[i].text, "="); i++ {
			n, v, _ := strings.Cut(args[i].text, "=")
			if programVars.has(n) && inertPrograms.has(v) {
				continue // env GIT_EDITOR=true: as the prefix assignment
			}
			a.checkVar(seg, n)
			a.envVar(seg, n, nil)
		}
	}
	i += spec.Positionals
	// flock FILE -c COMMAND: the script option may follow the operands.
	if i < len(args) && args[i].known && matchesAny(spec.ShellOptions, args[i].text) {
		payload, ok := optionArgument(args, &i, matchingSpec(spec.ShellOptions, args[i].text))
		a.nestedWord(seg, payload, ok, name, name+" -c", s, f)
		return nil, unwrapDone
	}
	if i >= len(args) {
		return a.bareWrapper(seg, spec, words, s, f)
	}
	rest = args[i:]
	seg.Wrappers = append(seg.Wrappers, name)
	if spec.StdinArgs && a.execNames {
		// find -exec xargs CMD {} +: xargs reads names from find's own
		// input, not from the listing that gave {}.
		a.stdinNames, a.stdinFilter, a.stdinRoots, a.execNames = false, nil, nil, false
	}
	if joinAsShell {
		line := make([]string, len(rest))
		for j, r := range rest {
			if !r.known {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs a command only known at run time", name), Rule: "dynamic-payload"})
				seg.Opaque = true
				a.push(seg)
				return nil, unwrapDone
			}
			line[j] = r.text
		}
		a.nested(seg, strings.Join(line, " "), name, s, f)
		return nil, unwrapDone
	}
	if spec.StdinArgs {
		rest = stdinArgs(rest, replace)
	}
	return rest, unwrapped
}

// wrapperSub returns the index in args of the subcommand that makes the
// program a wrapper (uv run), and whether it is one: the first operand,
// after the program's options, must be one of spec.Sub. A first operand
// known only at run time is not taken for one; the program's own model
// then asks about it.
func (a *analyzer) wrapperSub(spec *wrapperSpec, args []word) (int, bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			return 0, false
		}
		if !isOption(w.text) {
			return i, contains(spec.Sub, w.text)
		}
		if takesValue(w.text, spec.OptionsWithValue) {
			i++
		}
	}
	return 0, false
}

// wrapperDirs asks about a runner wrapper told to run the project of a
// directory outside the workspace (uv --directory /elsewhere run pytest),
// or to take code, settings or environment from a path outside it (uv run
// --python /elsewhere/python, --env-file /elsewhere/.env), or from one
// known only at run time.
func (a *analyzer) wrapperDirs(seg *Segment, name string, spec *wrapperSpec, args []word) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if !args[i].known || !matchesAny(spec.DirOptions, t) {
			continue
		}
		opt := matchingSpec(spec.DirOptions, t)
		dir, ok := optionArgument(args, &i, opt)
		if !ok || !dir.known || !a.insideWorkspace(dir.text) {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s %s runs a project, or takes code or settings, from outside the workspace", name, opt, dir.text), Rule: "outside-workspace-project"})
		}
	}
}

// bareWrapper handles a wrapper given no command.
func (a *analyzer) bareWrapper(seg *Segment, spec *wrapperSpec, words []word, s *syntax.Stmt, f frame) ([]word, unwrapState) {
	switch spec.Bare {
	case "shell":
		seg.setArgv(words)
		seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("%s without a command starts an interactive root shell", programName(words[0].text)), Rule: "root-shell"})
		seg.Opaque = true
		a.redirects(seg, s, f)
		a.push(seg)
		return nil, unwrapDone
	case "default":
		if len(spec.DefaultCommand) > 0 {
			out := make([]word, len(spec.DefaultCommand))
			for i, d := range spec.DefaultCommand {
				out[i] = word{text: d, known: true}
			}
			return stdinArgs(out, nil), unwrapped
		}
	}
	return words, unwrapSelf
}

// stdinArgs marks the words xargs fills in from stdin as unknown.
func stdinArgs(rest []word, replace []string) []word {
	out := make([]word, 0, len(rest)+1)
	for _, r := range rest {
		for _, rep := range replace {
			if rep != "" && strings.Contains(r.text, rep) {
				r = word{text: strings.ReplaceAll(r.text, rep, unknownShape), fromStdin: true, tilde: r.tilde, glob: r.glob}
			}
		}
		out = append(out, r)
	}
	if len(replace) == 0 {
		out = append(out, word{text: unknownShape, fromStdin: true})
	}
	return out
}

// outputTarget classifies the file a wrapper writes its output to
// (strace -o FILE); strace and ltrace pipe into a command when the name
// starts with "|" or "!".
func (a *analyzer) outputTarget(seg *Segment, v word, label string) {
	if v.known && (strings.HasPrefix(v.text, "|") || strings.HasPrefix(v.text, "!")) {
		cmd := v.text[1:]
		risk, reasons := a.sub(cmd)
		seg.add(Reason{Risk: risk.Max(NeedsReview), Text: fmt.Sprintf("%s pipes its output into the command `%s`%s", label, oneLine(cmd), joinedReasons(reasons)), Rule: "output-command"})
		return
	}
	a.writeTarget(seg, v, label)
}

// joinedReasons renders inner reasons after a colon, or nothing.
func joinedReasons(reasons []string) string {
	if len(reasons) == 0 {
		return ""
	}
	return ": " + strings.Join(reasons, "; ")
}

// attachedValue returns the value of a short option written with its value
// attached (-I{}), when t is one of opts.
func attachedValue(opts []string, t string) (string, bool) {
	for _, o := range opts {
		if len(o) == 2 && len(t) > 2 && strings.HasPrefix(t, o) {
			return t[2:], true
		}
	}
	return "", false
}

// isOptionShape reports whether an unknown word could be an option.
func isOptionShape(w word) bool {
	return strings.HasPrefix(w.text, unknownShape) || strings.HasPrefix(w.text, "-")
}

func matchesAny(specs []string, arg string) bool {
	for _, s := range specs {
		if optionMatches(s, arg) {
			return true
		}
	}
	return false
}

// nestedWord parses a payload word (bash -c PAYLOAD, su -c PAYLOAD) when
// it is literal, and marks the segment opaque when it is not. runner is the
// program that runs it, which sets the language it is read in; "" for the
// current shell (eval, trap).
func (a *analyzer) nestedWord(seg *Segment, payload word, ok bool, runner, label string, s *syntax.Stmt, f frame) {
	if !ok {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s is missing its script", label), Rule: "missing-payload", Coverable: true})
		a.redirects(seg, s, f)
		a.push(seg)
		return
	}
	if !payload.known {
		a.opaquePayload(seg, payload, label, s, f)
		return
	}
	if runner != "" {
		f.lang = shellLang(path.Base(runner))
	}
	a.nested(seg, payload.text, label, s, f)
}

// opaquePayload records code that is only known at run time, and escalates
// when it comes straight from the network or a decoder.
func (a *analyzer) opaquePayload(seg *Segment, payload word, label string, s *syntax.Stmt, f frame) {
	seg.Opaque = true
	seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs dynamic inline code, only known at run time (%s)", label, quoteWord(payload.shown())), Rule: "dynamic-payload"})
	fetch, decode := a.substitutionSources(payload.subst)
	switch {
	case fetch:
		seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("%s runs code downloaded from the network", label), Rule: "network-code"})
	case decode:
		seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("%s runs decoded data as code", label), Rule: "decoded-code"})
	}
	a.redirects(seg, s, f)
	a.push(seg)
}

// substitutionSources reports whether the commands of substitutions fetch
// from the network or decode data.
func (a *analyzer) substitutionSources(stmts []*syntax.Stmt) (fetch, decode bool) {
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			ce, ok := n.(*syntax.CallExpr)
			if !ok || len(ce.Args) == 0 {
				return true
			}
			words := make([]word, len(ce.Args))
			for i, w := range ce.Args {
				words[i] = evalWord(w)
			}
			if !words[0].literal() {
				return true
			}
			name := programName(words[0].text)
			if a.r.network.has(name) {
				fetch = true
			}
			if a.decodes(name, words) {
				decode = true
			}
			return true
		})
	}
	return fetch, decode
}

// nested analyzes src as a program run by seg (bash -c, eval, trap). The
// segment itself is kept only when it carries reasons of its own (sudo,
// redirections).
func (a *analyzer) nested(seg *Segment, src, label string, s *syntax.Stmt, f frame) {
	if f.depth+1 > maxDepth {
		seg.Opaque = true
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("nests shells more than %d levels deep (depth limit)", maxDepth), Rule: "too-deep"})
		a.redirects(seg, s, f)
		a.push(seg)
		return
	}
	saved := a.cwd
	inner := frame{depth: f.depth + 1, via: append(append([]string(nil), seg.Wrappers...), label), lang: f.lang}
	if err := a.program(src, inner); err != nil {
		// bash -c and eval run the lines before a syntax error before
		// they reach it, as at the top level (see Analyze): judge them.
		if prefix := linesBefore(src, err); prefix != "" {
			_ = a.program(prefix, inner)
		}
		if text := shparse.AsBash(err); text != "" {
			_ = a.program(text, inner) // what bash runs, judged too
		}
		seg.Opaque = true
		reason := Reason{Risk: NeedsReview, Text: fmt.Sprintf("the script given to %s does not parse: %s", label, oneLine(err.Error())), Rule: "parse-error"}
		if errors.Is(err, shparse.ErrReadsOtherwise) {
			reason.Text, reason.Rule = fmt.Sprintf("bash reads the script given to %s otherwise than execgate: %s", label, oneLine(err.Error())), "reads-otherwise"
		}
		seg.add(reason)
	}
	a.cwd = saved
	a.redirects(seg, s, f)
	a.keepIfNotable(seg)
}

// callFunction classifies a call to a function defined in the command as
// its body.
func (a *analyzer) callFunction(seg *Segment, name string, body *syntax.Stmt, s *syntax.Stmt, f frame) {
	for _, c := range a.calling {
		if c == body {
			seg.Argv = []string{name}
			if forksItself(body, name) {
				seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("function %s calls itself in a pipe or in the background: a fork bomb", name), Rule: "fork-bomb"})
			} else {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("function %s calls itself", name), Rule: "recursive-function"})
			}
			a.push(seg)
			return
		}
	}
	if f.depth+1 > maxDepth {
		seg.Argv = []string{name}
		seg.Opaque = true
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("nests calls more than %d levels deep (depth limit)", maxDepth), Rule: "too-deep"})
		a.push(seg)
		return
	}
	a.calling = append(a.calling, body)
	inner := frame{src: f.src, depth: f.depth + 1, via: append(append([]string(nil), seg.Wrappers...), "function "+name)}
	a.stmt(body, inner, false)
	a.calling = a.calling[:len(a.calling)-1]
	seg.Argv = []string{name}
	a.redirects(seg, s, f)
	a.keepIfNotable(seg)
}

// forksItself reports whether body calls name in a pipeline or in the
// background.
func forksItself(body *syntax.Stmt, name string) bool {
	found := false
	syntax.Walk(body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background && callsName(n, name) {
				found = true
			}
		case *syntax.BinaryCmd:
			if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && (callsName(n.X, name) || callsName(n.Y, name)) {
				found = true
			}
		}
		return !found
	})
	return found
}

func callsName(s *syntax.Stmt, name string) bool {
	found := false
	syntax.Walk(s, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 && ce.Args[0].Lit() == name {
			found = true
		}
		return !found
	})
	return found
}

// special handles the programs whose arguments are code: shells, eval,
// source, trap, alias, interpreters; and cd, which moves the analysis. It
// returns true when it recorded the segment itself.
func (a *analyzer) special(seg *Segment, name string, words []word, s *syntax.Stmt, f frame, piped bool) bool {
	switch {
	case a.r.shells.has(name):
		return a.shell(seg, name, words, s, f, piped)
	case name == "eval":
		return a.eval(seg, words, s, f)
	case name == "source" || name == ".":
		return a.source(seg, name, words, s, f, piped)
	case name == "trap":
		return a.trap(seg, words, s, f)
	case name == "alias":
		a.alias(seg, words, f)
	case name == "cd" || name == "pushd" || name == "popd":
		a.cd(name, words)
	}
	a.builtinWords(seg, name, words, f)
	if spec := a.r.Interpreters.get(name); spec != nil {
		return a.interpreter(seg, name, spec, words, s, f, piped)
	}
	if name == "find" {
		a.findExec(seg, words, f)
	}
	return false
}

// findExec analyzes the commands find runs for its matches (-exec CMD ;)
// as segments of their own.
func (a *analyzer) findExec(seg *Segment, words []word, f frame) {
	// The matches lie under the starting points, the operands before the
	// expression: {} stands for a path below the first of them.
	root := "."
	if k := 1 + findGlobalOptions(words[1:]); len(words) > k && !isOption(words[k].text) && words[k].text != "(" && words[k].text != "!" {
		root = words[k].text
		if abs := a.resolve(root); !words[k].literal() || abs == "" || !a.insideWorkspace(abs) {
			seg.flags.findsOutside = true
		}
	}
	// What {} names, when the tests before the command list workspace
	// files by name (find . -name '*.sh' -exec grep -l x {} +): the
	// command reads those, as xargs would read what find printed. Tests
	// after it do not narrow what it sees, and with -o, a comma or
	// parentheses anywhere it may see any file (-name '*.sh' -exec true
	// \; -o -exec cat {} +).
	own := findOwnWords(words)
	either := slices.ContainsFunc(own, func(w word) bool {
		return !w.known || w.text == "-o" || w.text == "-or" || w.text == "," || w.text == "(" || w.text == ")"
	})
	for i := 1; i < len(words); i++ {
		t := words[i].text
		if !words[i].known || (t != "-exec" && t != "-execdir" && t != "-ok" && t != "-okdir") {
			continue
		}
		execAt := i
		var inner []word
		j := i + 1
		for ; j < len(words); j++ {
			w := words[j]
			if w.known && (w.text == ";" || w.text == "+") {
				break
			}
			if w.known && strings.Contains(w.text, "{}") {
				// Each match's path: unknown, but a file name.
				w = word{text: strings.ReplaceAll(w.text, "{}", path.Join(root, unknownShape)), fromStdin: true, tilde: strings.HasPrefix(root, "~")}
			}
			inner = append(inner, w)
		}
		i = j
		if len(inner) == 0 {
			continue
		}
		via := append(append([]string(nil), f.via...), "find "+t)
		sub := &Segment{Text: wordsText(inner), Depth: f.depth + 1, Wrappers: via, context: via}
		if !inner[0].literal() {
			sub.add(dynamicName(inner[0].text))
			a.push(sub)
			continue
		}
		names, filter, roots, execNames := a.stdinNames, a.stdinFilter, a.stdinRoots, a.execNames
		a.execNames = false
		if before := findOwnWords(words[:execAt]); a.listsWorkspace("find", before) && t != "-execdir" && t != "-okdir" {
			// (-execdir's {} is ./NAME in each directory: the same
			// names, but relative where the command runs.)
			a.stdinNames, a.stdinFilter, a.stdinRoots = true, nameFilter("find", before), a.listRoots("find", before)
			a.execNames = true
			if either {
				a.stdinFilter = nil // the whole of its places
			}
		}
		a.classify(sub, inner, &syntax.Stmt{}, frame{src: f.src, depth: f.depth + 1, via: sub.Wrappers}, false)
		a.stdinNames, a.stdinFilter, a.stdinRoots, a.execNames = names, filter, roots, execNames
	}
}

// findOwnWords is find's words without the commands its -exec, -execdir,
// -ok and -okdir run (up to their ; or +): its starting points and tests.
func findOwnWords(words []word) []word {
	var out []word
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w.known && (w.text == "-exec" || w.text == "-execdir" || w.text == "-ok" || w.text == "-okdir") {
			for i++; i < len(words) && !(words[i].known && (words[i].text == ";" || words[i].text == "+")); i++ {
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// wordsText renders words for a segment's text.
func wordsText(words []word) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

// shell handles sh/bash/zsh …: -c SCRIPT, a script file, or stdin.
func (a *analyzer) shell(seg *Segment, name string, words []word, s *syntax.Stmt, f frame, piped bool) bool {
	args := words[1:]
	cflag, sflag := false, false
	// login and interactive: the shell reads its start-up files, which
	// the label keeps (bash -lc) for what a confined run may read.
	login, interactive := false, false
	i := 0
	for ; i < len(args); i++ {
		w := args[i]
		if !w.known {
			break
		}
		t := w.text
		login = login || t == "--login" || len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.ContainsRune(t[1:], 'l')
		interactive = interactive || len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.ContainsRune(t[1:], 'i')
		if t == "--" || t == "-" {
			i++
			break
		}
		if t == "--rcfile" || t == "--init-file" {
			seg.Opaque = true
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs the start-up file given to %s", name, t), Rule: "shell-rcfile"})
		}
		if !(strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+")) || len(t) < 2 {
			break
		}
		if shellLang(path.Base(name)) == syntax.LangZsh && !zshPlainOption(t) {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("zsh: %s %s sets an option that changes how zsh reads or expands the script (glob_subst runs the code in a value's glob qualifier), which the analysis does not model", name, t), Rule: "zsh-unmodelled"})
		}
		if !strings.HasPrefix(t, "--") {
			cflag = cflag || strings.ContainsRune(t[1:], 'c') && t[0] == '-'
			sflag = sflag || strings.ContainsRune(t[1:], 's') && t[0] == '-'
		}
		if takesValue(t, a.r.optionsWithValue(name)) {
			i++
		}
	}
	label := name + " -c"
	switch {
	case login && interactive:
		label = name + " -lic"
	case login:
		label = name + " -lc"
	case interactive:
		label = name + " -ic"
	}
	if cflag {
		if i >= len(args) {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s -c is missing its script", name), Rule: "missing-payload", Coverable: true})
			return false
		}
		a.nestedWord(seg, args[i], true, name, label, s, f)
		return true
	}
	if i < len(args) && !sflag {
		script := args[i]
		if script.procSubst {
			a.opaquePayload(seg, script, name+" <(…)", s, f)
			return true
		}
		if script.text != "/dev/stdin" {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("runs the script %s, whose contents are not checked", quoteWord(script.shown())), Rule: "script-file", Coverable: a.workspaceFile(script)})
			a.runsDownload(seg, script)
			a.flows(seg, name, words)
			a.redirects(seg, s, f)
			a.push(seg)
			return true
		}
	}
	return a.stdinCode(seg, name, s, f, piped)
}

// stdinCode handles a shell or interpreter that reads its code from stdin:
// a literal here-document is analyzed; anything else is opaque.
func (a *analyzer) stdinCode(seg *Segment, name string, s *syntax.Stmt, f frame, piped bool) bool {
	seg.flags.execsStdin = true
	if body, ok, found := stdinDocument(s); found {
		if ok && a.r.shells.has(name) {
			// The heredoc is read by that shell, in its language (zsh's
			// glob qualifiers are no bash extglob).
			f.lang = shellLang(path.Base(name))
			before := len(a.segs)
			a.nested(seg, body, name+" heredoc", s, f)
			if len(a.segs) == before {
				// A body that runs no command (an empty line, a
				// comment): the shell still starts, and what was judged
				// must name it.
				a.push(seg)
			}
			return true
		}
		if !ok {
			seg.Opaque = true
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs a heredoc whose text is only known at run time (dynamic)", name), Rule: "dynamic-payload"})
		} else {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs inline code from a heredoc", name), Rule: "inline-code"})
			a.inlineCode(seg, name, body)
		}
	} else if file, found := stdinFile(s); found {
		seg.Opaque = true
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs the code in %s, which is not checked", name, quoteWord(file)), Rule: "script-file"})
	} else if piped {
		seg.Opaque = true
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs whatever code the pipe gives it", name), Rule: "pipe-to-shell"})
	} else {
		seg.Opaque = true
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("starts an interactive %s", name), Rule: "interactive-shell"})
	}
	a.flows(seg, name, seg.words)
	a.redirects(seg, s, f)
	a.push(seg)
	return true
}

// stdinDocument returns the text a here-document or here-string gives as
// stdin; ok is false when that text is only known at run time.
func stdinDocument(s *syntax.Stmt) (text string, ok, found bool) {
	for _, r := range s.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			found = true
			text, ok = heredocText(r)
		case syntax.WordHdoc:
			found = true
			w := evalWord(r.Word)
			text, ok = w.text+"\n", w.known
		}
	}
	return text, ok, found
}

// heredocText returns a here-document's body when it has no expansions.
func heredocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := false
	for _, p := range r.Word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = true
		case *syntax.Lit:
			quoted = quoted || strings.Contains(p.Value, "\\")
		}
	}
	var sb strings.Builder
	for _, p := range r.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quoted {
			sb.WriteString(lit.Value)
		} else {
			sb.WriteString(unescapeBackslashes(lit.Value, "$`\\"))
		}
	}
	return sb.String(), true
}

// stdinFile returns the file redirected into stdin (< FILE).
func stdinFile(s *syntax.Stmt) (string, bool) {
	for _, r := range s.Redirs {
		if r.Op == syntax.RdrIn && (r.N == nil || r.N.Value == "0") {
			return evalWord(r.Word).text, true
		}
	}
	return "", false
}

// eval parses its joined arguments as a program when they are literal.
func (a *analyzer) eval(seg *Segment, words []word, s *syntax.Stmt, f frame) bool {
	parts := make([]string, 0, len(words)-1)
	var subst []*syntax.Stmt
	known := true
	for _, w := range words[1:] {
		parts = append(parts, w.text)
		known = known && w.known
		subst = append(subst, w.subst...)
	}
	payload := word{text: strings.Join(parts, " "), known: known, subst: subst}
	if len(parts) == 0 {
		return false
	}
	a.nestedWord(seg, payload, true, "", "eval", s, f)
	return true
}

// source handles `source FILE` and `. FILE`.
func (a *analyzer) source(seg *Segment, name string, words []word, s *syntax.Stmt, f frame, piped bool) bool {
	if len(words) < 2 {
		return false
	}
	file := words[1]
	if file.procSubst {
		a.opaquePayload(seg, file, name+" <(…)", s, f)
		return true
	}
	if file.text == "/dev/stdin" || file.text == "-" {
		return a.stdinCode(seg, name, s, f, piped)
	}
	seg.Opaque = true
	seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("sources %s: its commands are not checked", quoteWord(file.shown())), Rule: "source-file"})
	a.redirects(seg, s, f)
	a.push(seg)
	return true
}

// trap parses the handler of `trap HANDLER SIGNAL…`: it runs later.
func (a *analyzer) trap(seg *Segment, words []word, s *syntax.Stmt, f frame) bool {
	a.applyRules(seg, "trap", words) // trap '' INT: signals ignored
	args := words[1:]
	if len(args) > 0 && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) < 2 || args[0].text == "-" || (args[0].known && isOption(args[0].text)) {
		return false
	}
	a.nestedWord(seg, args[0], true, "", "trap", s, f)
	return true
}

// alias flags aliases that replace commands and analyzes their text.
func (a *analyzer) alias(seg *Segment, words []word, f frame) {
	for _, w := range words[1:] {
		n, v, ok := strings.Cut(w.text, "=")
		if !ok {
			continue
		}
		if a.shadows(n) {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("defines an alias %q that replaces the command of that name", n), Rule: "alias-shadows-command"})
		} else {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("defines an alias %q", n), Rule: "alias"})
		}
		if w.known && f.depth+1 <= maxDepth {
			saved := a.cwd
			_ = a.program(v, frame{depth: f.depth + 1, via: append(append([]string(nil), seg.Wrappers...), "alias "+n)})
			a.cwd = saved
		}
	}
}

// varName strips an array subscript: a[1] → a.
func varName(s string) string {
	n, _, _ := strings.Cut(s, "[")
	return n
}

// cd follows literal directory changes (cd, pushd, popd), so that relative
// paths later in the command resolve where bash would resolve them; a
// change it cannot follow makes the directory unknown.
func (a *analyzer) cd(name string, words []word) {
	args := words[1:]
	for len(args) > 0 && args[0].known && isOption(args[0].text) && args[0].text != "-" {
		if args[0].text == "--" {
			args = args[1:]
			break
		}
		if name != "cd" {
			a.cwd = "" // pushd -n, popd +N …: the stack is not followed
			return
		}
		args = args[1:] // -P, -L, -e, -@
	}
	switch {
	case name == "popd":
		if len(args) > 0 || len(a.dirStack) == 0 {
			a.cwd = ""
			return
		}
		a.cwd = a.dirStack[len(a.dirStack)-1]
		a.dirStack = a.dirStack[:len(a.dirStack)-1]
		return
	case name == "pushd" && len(args) == 0:
		a.cwd = ""
		return
	case name == "pushd":
		a.dirStack = append(a.dirStack, a.cwd)
	}
	switch {
	case len(args) == 0:
		a.cwd = a.logical("~")
	case !args[0].pathKnown() || args[0].glob || args[0].brace || args[0].text == "-" || strings.HasPrefix(args[0].text, "+"):
		a.cwd = "" // cd "$dir", cd ~/.ss[h], cd -: not followed
	default:
		a.cwd = a.cdTarget(args[0].text)
	}
}

// interpreter handles python -c, node -e, … and scripts.
func (a *analyzer) interpreter(seg *Segment, name string, spec *interpSpec, words []word, s *syntax.Stmt, f frame, piped bool) bool {
	args := words[1:]
	if len(args) == 1 && args[0].known && (args[0].text == "--version" || args[0].text == "-V" || args[0].text == "--help") {
		return false // prints and exits; the safe-binary layer says so
	}
	withValue := append(append([]string(nil), spec.OptionsWithValue...), spec.Inline...)
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s is given arguments only known at run time", name), Rule: "dynamic-arguments"})
			return false
		}
		t := w.text
		if t == "--" {
			break
		}
		inlineSpec := matchingSpecIn(spec.Inline, t, withValue)
		if inlineSpec != "" || (spec.InlineSub != "" && i == 0 && t == spec.InlineSub) {
			// python -c CODE, or -c'CODE' with the code attached.
			code, ok := optionArgument(args, &i, inlineSpec)
			if !ok {
				return false
			}
			if !code.known {
				a.opaquePayload(seg, code, name+" "+t, s, f)
				return true
			}
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("runs inline %s code", spec.Language), Rule: "inline-code"})
			a.inlineCode(seg, name, code.text)
			return false
		}
		if w.procSubst {
			a.opaquePayload(seg, w, name+" <(…)", s, f)
			return true
		}
		if m := matchingSpecIn(spec.ModuleOptions, t, withValue); m != "" {
			if mod, ok := optionArgument(args, &i, m); ok {
				if mod.known && testRunnerModule(spec.Language, mod.text) && !a.wroteModule(mod.text) {
					seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("runs the workspace's tests with the %s module %s, whose code is not checked", spec.Language, mod.text), Rule: workspaceRunnerRule, Coverable: true})
					return false
				}
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("runs the %s module %s, whose code is not checked", spec.Language, quoteWord(mod.shown())), Rule: "script-file", Coverable: mod.known && !a.wroteModule(mod.text)})
				return false
			}
		}
		if t == "-" {
			break
		}
		if !isOption(t) {
			if spec.ProgramArg {
				a.inlineCode(seg, name, t)
				return false
			}
			if spec.Language == "python" && path.Base(t) == "manage.py" && a.workspaceFile(w) &&
				i+1 < len(args) && args[i+1].known && args[i+1].text == "test" {
				// Django's test runner: the workspace's own tests.
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("runs the workspace's tests with %s test, whose code is not checked", t), Rule: workspaceRunnerRule, Coverable: true})
				return false
			}
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("runs the %s program %s, whose code is not checked", spec.Language, quoteWord(t)), Rule: "script-file", Coverable: a.workspaceFile(w)})
			a.runsDownload(seg, w)
			return false
		}
		if takesValue(t, withValue) {
			i++
		}
	}
	if spec.ProgramArg {
		return false
	}
	return a.stdinCode(seg, name, s, f, piped)
}

// maxCodeCalls bounds the calls checked in one piece of inline code; more
// is itself a reason to ask.
const maxCodeCalls = 64

// inlineCode looks for calls in code that amount to shell commands, and
// classifies those commands.
func (a *analyzer) inlineCode(seg *Segment, program, code string) {
	lang := program
	if spec := a.r.Interpreters.get(program); spec != nil {
		lang = spec.Language
	}
	for _, cr := range a.r.Code {
		if !contains(cr.Languages, lang) {
			continue
		}
		re, err := cr.regexp()
		if err != nil {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("code rule %s is broken: %v", cr.ID, err), Rule: cr.ID})
			continue
		}
		matches := re.FindAllStringSubmatch(code, maxCodeCalls+1)
		if len(matches) > maxCodeCalls {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s code has more than %d calls to check (%s)", lang, maxCodeCalls, cr.Reason), Rule: cr.ID})
			matches = matches[:maxCodeCalls]
		}
		for _, m := range matches {
			arg := m[len(m)-1]
			if cr.Risk > Safe && cr.Deletes && a.workspaceLiteral(firstLiteralArg(arg)) {
				// rmSync('dist', {recursive: true}): the rule that reads
				// the literal path (as rm -rf dist) judges it.
				continue
			}
			if cr.Risk > Safe && !(cr.Shell != "" && a.workspaceLiteral(arg)) {
				seg.add(Reason{Risk: cr.Risk, Text: fmt.Sprintf("%s code %s (%s)", lang, cr.Reason, oneLine(arg)), Rule: cr.ID})
				continue
			}
			// A deletion of a plain path inside the workspace (build,
			// dist/, coverage.xml) weighs what the equivalent rm weighs.
			var cmd string
			switch cr.Shell {
			case "{}":
				cmd = arg
			case "argv":
				// A list of string literals: ["rm", "-rf", "/"].
				var parts []string
				for _, q := range quotedStrings(arg) {
					parts = append(parts, shellQuote(q))
				}
				cmd = strings.Join(parts, " ")
			default:
				cmd = strings.ReplaceAll(cr.Shell, "{}", shellQuote(arg))
			}
			if cmd == "" {
				continue
			}
			risk, reasons := a.sub(cmd)
			if risk > Safe {
				seg.add(Reason{Risk: risk, Text: fmt.Sprintf("%s code %s, like `%s`: %s", lang, cr.Reason, oneLine(cmd), strings.Join(reasons, "; ")), Rule: cr.ID})
			}
		}
	}
}

// sub classifies a command in a fresh analysis and returns its risk and
// reasons.
func (a *analyzer) sub(cmd string) (Risk, []string) {
	inner := &analyzer{r: a.r, home: a.home, workspace: a.workspace, cwd: a.cwd, protected: a.protected, managedProtected: a.managedProtected}
	if err := inner.program(cmd, frame{depth: maxDepth - 1}); err != nil {
		return NeedsReview, []string{"does not parse"}
	}
	risk := Safe
	var reasons []string
	for _, s := range inner.segs {
		risk = risk.Max(s.Risk)
		for _, r := range s.Reasons {
			if r.Risk == s.Risk && s.Risk == risk {
				reasons = append(reasons, r.Text)
			}
		}
	}
	return risk, reasons
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// shellQuote quotes s for a shell command line.
// asShellWord writes an evaluated word back as shell text with the same
// meaning for the analysis: a literal quoted, a leading ~ kept a tilde, and
// a word only known at run time an expansion (which may split).
func asShellWord(w word) string {
	switch {
	case !w.known:
		return "$EXECGATE_UNKNOWN_WORD"
	case w.tilde && (w.text == "~" || strings.HasPrefix(w.text, "~/")):
		if w.text == "~" {
			return "~"
		}
		return "~/" + shellQuote(w.text[2:])
	}
	return shellQuote(w.text)
}

func shellQuote(s string) string {
	if q, err := syntax.Quote(s, syntax.LangBash); err == nil {
		return q
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// oneLine shows a part of the command (code, an error) inside a reason: on
// one line, bounded, escaped later by whatever shows the reason.
func oneLine(s string) string { return display.Flatten(s, maxQuoted) }

// maxQuoted bounds a part of the command quoted in a reason.
const maxQuoted = 200

// quotedStrings returns the contents of the '…' and "…" literals in s.
func quotedStrings(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '\'' && q != '"' {
			continue
		}
		j := strings.IndexByte(s[i+1:], q)
		if j < 0 {
			break
		}
		out = append(out, s[i+1:i+1+j])
		i += j + 1
	}
	return out
}

// wroteModule reports whether the program wrote a file that the module
// name could load (evil.py or evil/… for python -m evil).
func (a *analyzer) wroteModule(mod string) bool {
	top, _, _ := strings.Cut(mod, ".")
	for p := range a.written {
		base := path.Base(p)
		if strings.TrimSuffix(base, path.Ext(base)) == top || strings.Contains(p, "/"+top+"/") {
			return true
		}
	}
	return false
}

// workspaceFile reports whether w names a file inside the workspace, not a
// file in the temporary directories or anywhere else (a script a wildcard
// pattern may let a program run).
func (a *analyzer) workspaceFile(w word) bool {
	if !w.literal() {
		return false
	}
	abs := a.resolve(w.text)
	return abs != "" && a.insideWorkspace(abs) && !a.pathIn("code-loading", a.normPath(w.text)) && !a.written[abs]
}

// inputNames flags a command given file names read from its input (xargs
// cat, xargs grep): unless the input is a list of workspace files (find .,
// git ls-files, grep -l), the names may be anything, credentials included.
func (a *analyzer) inputNames(seg *Segment, name string, words []word) {
	if spec := a.r.Safe.get(name); spec != nil && spec.Data {
		return // echo, printf: the names are only text
	}
	if a.stdinNames {
		// Workspace files only — and a workspace may hold its own
		// secrets (.env): find . | xargs cat prints them as cat .env does.
		if found := a.workspaceCredentials(a.stdinRoots, a.stdinFilter); found != "" && slices.ContainsFunc(words[1:], func(w word) bool { return w.fromStdin }) {
			seg.flags.readsCreds = true
			seg.add(Reason{Risk: NeedsReview, Text: "reads the workspace files its input names, and the workspace holds credentials (" + found + ")", Rule: "reads-input-names"})
		}
		return
	}
	for _, w := range words[1:] {
		if w.fromStdin {
			seg.flags.readsCreds = true
			seg.add(Reason{Risk: NeedsReview, Text: "reads files whose names come from its input, which may name credentials (reads-credentials)", Rule: "reads-input-names"})
			return
		}
	}
}

// listsWorkspace reports whether a command prints only names of files in
// the workspace, one per line.
// globStart is the index of the first pattern character of a glob word's
// text: * ? [ or an extended glob's @( !( +( — or -1 when there is none
// to be found (then the pattern cannot be placed).
func globStart(text string) int {
	i := strings.IndexAny(text, "*?[")
	for _, op := range []string{"@(", "!(", "+("} {
		if j := strings.Index(text, op); j >= 0 && (i < 0 || j < i) {
			i = j
		}
	}
	return i
}

func (a *analyzer) listsWorkspace(name string, words []word) bool {
	args := words[1:]
	inside := func(ws []word) bool {
		for _, w := range ws {
			if !w.known || isOption(w.text) {
				continue
			}
			text := w.text
			if w.glob && !w.brace && !strings.Contains(text, "..") {
				// *.go, src/**/*.ts: the names are below the pattern's
				// fixed directory.
				i := globStart(text)
				if i < 0 {
					return false
				}
				text = path.Dir(text[:i] + "x")
			} else if !w.literal() {
				return false
			}
			if abs := a.resolve(text); abs == "" || !a.insideWorkspace(abs) {
				return false
			}
		}
		return a.cwd != "" && a.insideWorkspace(a.cwd)
	}
	has := func(opts ...string) bool {
		for _, w := range args {
			if w.known && matchesAny(opts, w.text) {
				return true
			}
		}
		return false
	}
	switch name {
	case "find", "fd", "fdfind":
		for _, w := range args {
			if w.known && (w.text == "-exec" || w.text == "-execdir" || w.text == "-printf" || w.text == "-fprint" || w.text == "-ls") {
				return false
			}
			if !w.known || w.text == "-files0-from" {
				return false // its starting points are a file's (or its input's) words
			}
		}
		var roots []word
		for _, w := range args[findGlobalOptions(args):] {
			if w.known && (isOption(w.text) || w.text == "(" || w.text == "!") {
				break
			}
			roots = append(roots, w)
		}
		return inside(roots)
	case "grep", "egrep", "fgrep", "rg", "ag":
		if !has("-l", "-L", "--files-with-matches", "--files-without-match", "--files") {
			return false
		}
		v := viewArgs(args, a.r.optionsWithValue(name))
		ops := v.operands()
		if name != "rg" || !has("--files") {
			if len(ops) > 0 {
				ops = ops[1:] // the pattern
			}
		}
		return inside(ops)
	case "git":
		v := viewArgs(args, a.r.optionsWithValue("git"))
		ops := v.operands()
		if len(ops) == 0 || has("-C", "--git-dir", "--work-tree") || !inside(nil) {
			return false
		}
		switch ops[0].text {
		case "ls-files":
			return true
		case "diff", "show", "log":
			return has("--name-only")
		case "grep":
			return has("-l", "-L", "--name-only", "--files-with-matches", "--files-without-match")
		}
	case "ls":
		return !has("-l", "-R", "-1l") && inside(args)
	}
	return false
}

// changesDirectory reports whether a function body may change the current
// directory (cd, pushd, popd) or what ~ means (HOME=).
func changesDirectory(body *syntax.Stmt) bool {
	found := false
	syntax.Walk(body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				switch n.Args[0].Lit() {
				case "cd", "pushd", "popd", "eval", "source", ".":
					found = true
				}
			}
			for _, as := range n.Assigns {
				if as.Name != nil && as.Name.Value == "HOME" {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// slotVar judges the variable an option of a wrapper sets in the
// command's environment (xargs --process-slot-var=NAME), as if the command
// were prefixed with NAME=….
func (a *analyzer) slotVar(seg *Segment, wrapper, opt string, v word) {
	if !v.known {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s sets a variable only known at run time", wrapper, opt), Rule: "dynamic-options"})
		return
	}
	a.checkVar(seg, v.text)
	a.envVar(seg, v.text, nil)
}

// workspacePathText is a plain relative path: no expansion Python, Node or
// Ruby could perform, no glob, no quoting.
var workspacePathText = &lazyRegexp{expr: `^[A-Za-z0-9_][A-Za-z0-9_.@+-]*(/[A-Za-z0-9_.@+-]+)*/?$`}

// workspaceLiteral reports whether p, a string literal of inline code, is
// a plain relative path below the workspace: not the workspace itself, not
// above it (..), not absolute, not ~ (which these languages do not
// expand, but nothing proves harmless).
func (a *analyzer) workspaceLiteral(p string) bool {
	if !workspacePathText.get().MatchString(p) {
		return false
	}
	for _, part := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		if part == ".." || part == "." {
			return false
		}
	}
	return a.workspace != "" && a.workspaceFile(word{text: p, known: true})
}

// firstLiteralArg returns the first argument of the call in code when it
// is a string literal ('dist' in rmSync('dist', …)), or "".
func firstLiteralArg(code string) string {
	m := firstLiteral.get().FindStringSubmatch(code)
	if m == nil {
		return ""
	}
	return m[1]
}

var firstLiteral = &lazyRegexp{expr: "^[^(]*\\(\\s*['\"`]([^'\"`]*)['\"`]\\s*[,)]"}

// testRunnerModule reports whether python -m MODULE runs the workspace's
// tests (pytest, unittest): a workspace runner rather than a module run
// for its own sake.
func testRunnerModule(language, module string) bool {
	return language == "python" && (module == "pytest" || module == "unittest")
}
