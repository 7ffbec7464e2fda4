package policy

import (
	"strings"

	"github.com/execgate/execgate/pattern"
)

// Suggest returns the pattern "allow always" should add for s: the narrowest
// one that is still useful next time. It is
//
//   - the exact command when the segment has a reason no wildcard waives
//     (anything dangerous, credentials, code, the environment …), or runs a
//     shell, a wrapper or inline code, whose arguments are the whole story;
//   - `tool subcommand **` for tools with subcommands (git, npm, cargo, go,
//     docker, kubectl, make …), `tool sub name **` where the subcommand runs
//     something named (`npm run test **`), `interpreter script **` for a
//     script file or module (`python3 -m pytest **`);
//   - `tool **` for any other program.
//
// Patterns match the command inside any wrappers (`xargs -n1 echo` is
// `echo`), so a segment is judged by that command. It never suggests a bare
// shell, interpreter or wrapper with `**`. It returns "" when no pattern can
// describe the segment: its program is only known at run time, it is opaque
// (the allowlist does not apply to it), it has such a reason and a wrapper,
// an assignment or a redirection beside its words, its program is a
// relative path (./run.sh), or a word it needs holds a wildcard character or space that a
// pattern cannot express literally.
func (e *Engine) Suggest(s *Segment) string {
	if s == nil || s.Opaque || len(s.Argv) == 0 {
		return ""
	}
	argv := s.Argv
	if strings.Contains(argv[0], "/") && !strings.HasPrefix(argv[0], "/") {
		// ./run.sh names a different program in each directory, so no
		// pattern matches a relative program path (pattern.Matcher).
		return ""
	}
	name := programName(argv[0])
	exact := func() string { return pattern.Literal(argv) }
	if s.firm() {
		// What a wildcard cannot waive (anything dangerous, credentials,
		// code, the environment …) only the exact command can, and only
		// when it is nothing but its words: patterns match the command
		// inside wrappers and beside assignments and redirections, so
		// "sudo rm x" or "X=1 rm x" could only be saved as "rm x", which
		// would wrongly stand for both (and does not cover them).
		if !s.exactCovers() {
			return ""
		}
		return exact()
	}
	if e.isShell(name) {
		return exact()
	}
	if _, ok := e.rules.Wrappers[name]; ok {
		return exact()
	}
	if spec, ok := e.rules.Interpreters[name]; ok {
		return interpreterPattern(argv, spec)
	}
	if contains(e.rules.Suggest.Runners, name) {
		return pattern.Prefix(argv, operandIndex(argv, 1, nil))
	}
	deeper, ok := e.rules.Suggest.Subcommands[argv[0]]
	if !ok {
		deeper, ok = e.rules.Suggest.Subcommands[name]
	}
	if ok {
		withValue := e.rules.Programs[name].OptionsWithValue
		sub := operandIndex(argv, 1, withValue)
		if sub < 0 {
			return exact() // `git --version`: nothing to generalise over
		}
		for _, d := range deeper {
			if argv[sub] == d {
				if next := operandIndex(argv, sub+1, withValue); next >= 0 {
					return pattern.Prefix(argv, next)
				}
				break
			}
		}
		return pattern.Prefix(argv, sub)
	}
	return pattern.Prefix(argv, 0)
}

func (e *Engine) isShell(name string) bool {
	for _, s := range e.rules.Shells {
		if s == name {
			return true
		}
	}
	return false
}

// interpreterPattern allows a script file or module with any arguments; inline
// code and anything else is allowed only exactly.
func interpreterPattern(argv []string, spec *interpSpec) string {
	for i := 1; i < len(argv); i++ {
		w := argv[i]
		switch {
		case contains(spec.Inline, w) || w == "-" || w == "--":
			return pattern.Literal(argv)
		case w == "-m" && i+1 < len(argv):
			return pattern.Prefix(argv, i+1)
		case contains(spec.OptionsWithValue, w):
			i++
		case strings.HasPrefix(w, "-"):
		default:
			if spec.ProgramArg {
				return pattern.Literal(argv) // awk's program text is code
			}
			return pattern.Prefix(argv, i)
		}
	}
	return pattern.Literal(argv)
}

// operandIndex returns the index of the first operand at or after from,
// skipping options and the values of withValue options; -1 if there is none.
func operandIndex(argv []string, from int, withValue []string) int {
	for i := from; i < len(argv); i++ {
		w := argv[i]
		if w == "--" {
			return -1
		}
		if !isOption(w) {
			return i
		}
		if contains(withValue, w) {
			i++
		}
	}
	return -1
}
