package policy

import (
	"path"
	"slices"
	"strings"

	"github.com/execgate/execgate/pattern"
)

// Proposals returns the allowlist patterns "allow always" may save for s,
// narrowest first, for the person approving it to choose from:
//
//  1. the exact command, anchored (`rm -rf dist $`): these words and
//     nothing longer; for a segment with a reason no wildcard waives, the
//     plain literal words instead (`sed -i s/a/b/ f`), the only pattern
//     that waives it, and then nothing else is proposed;
//  2. the narrowest wildcard pattern that still covers what the command
//     does when it comes again with other trailing arguments: `tool
//     subcommand **` for tools with subcommands (git, cargo, go, docker,
//     kubectl, make …), `tool sub name **` where the subcommand runs
//     something named (`npm run test **`), `interpreter script **` for a
//     script file or module (`python3 -m pytest **`), `tool **` for any
//     other program.
//
// There is no wildcard proposal where a wildcard would reach what this
// command did not: for a read-only use (no effect to stay inside), where
// the program's model says its operands name the
// targets of its effect (rules.json suggest.targets: rm, mkdir, curl, npm
// install …), where a reason says the segment writes a file or talks to
// another host (the reason names which), for a shell, a wrapper or inline
// code (whose arguments are the whole story), and where a reason holds
// against any wildcard (anything dangerous, credentials, code, the
// environment …) — then only the exact command can waive it, and only when
// it is nothing but its words: patterns match the command inside wrappers
// and beside assignments and redirections, so "sudo rm x" or "X=1 rm x"
// could only be saved as "rm x", which would wrongly stand for both.
//
// Patterns match the command inside any wrappers (`xargs -n1 echo` is
// `echo`). Proposals is empty when no pattern can describe the segment:
// its program is only known at run time, it is opaque (the allowlist does
// not apply to it), its program is a relative path (./run.sh names a
// different program in each directory), it is a declaration builtin
// (see declares), or a word it needs cannot be written literally. Every
// proposal matches s's own words.
func (e *Engine) Proposals(s *Segment) []string {
	if s == nil || s.Opaque || len(s.Argv) == 0 {
		return nil
	}
	argv := s.Argv
	if strings.Contains(argv[0], "/") && !strings.HasPrefix(argv[0], "/") {
		return nil
	}
	if declares(argv) {
		return nil
	}
	if s.firm() {
		// Only a plain literal waives a firm reason (an anchored one
		// waives what a wildcard does), and only where the segment is
		// nothing but its words.
		if exact := pattern.Literal(argv); exact != "" && s.exactCovers() && matchesOwn(exact, argv) {
			return []string{exact}
		}
		return nil
	}
	var out []string
	if exact := pattern.Exact(argv); exact != "" {
		out = append(out, exact)
	}
	if len(s.Effects()) > 0 && !e.reachesOtherTargets(s) {
		// A read-only use gets no wildcard: `sort **` saved for `sort f`
		// would let `sort -o f` write and `git branch **` for `git
		// branch` delete branches, which the person never saw.
		if w := e.wildcardScope(argv); w != "" {
			out = append(out, w)
		}
	}
	return slices.DeleteFunc(out, func(p string) bool { return !matchesOwn(p, argv) })
}

// declares reports whether argv is a declaration builtin (export,
// declare, typeset, local, readonly): bash parses its NAME=value operands
// as assignments, which are not in Argv, so any pattern for it would stand
// for every assignment it could make (`declare` saved for a listing would
// match `declare a[$(rm -rf ~)]=1` word for word).
func declares(argv []string) bool {
	switch argv[0] {
	case "export", "declare", "typeset", "local", "readonly":
		return true
	}
	return false
}

// Suggest returns the narrowest proposal for s (see Proposals), or "" when
// no pattern can describe it.
func (e *Engine) Suggest(s *Segment) string {
	if ps := e.Proposals(s); len(ps) > 0 {
		return ps[0]
	}
	return ""
}

// matchesOwn reports whether p matches argv: a pattern that would not let
// the command it was made for through next time is never proposed.
func matchesOwn(p string, argv []string) bool {
	_, _, ok := pattern.NewMatcher([]pattern.Entry{{Pattern: p}}, nil).Match(argv)
	return ok
}

// reachesOtherTargets reports whether a wildcard over s's operands would
// reach what s did not: its program or subcommand is one whose operands
// name what it acts on, or a reason says it writes a file or talks to a
// host that its words name.
func (e *Engine) reachesOtherTargets(s *Segment) bool {
	for _, r := range s.Reasons {
		switch r.Effect {
		case EffectWrite, EffectNetwork, EffectSend, EffectDestroy, EffectPrivilege:
			return true
		}
	}
	return e.targets(s.Argv)
}

// targets reports whether argv's program, or its subcommand, is listed in
// suggest.targets.
func (e *Engine) targets(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	name := programName(argv[0])
	if contains(e.rules.Suggest.Targets, name) {
		return true
	}
	sub := operandIndex(argv, 1, e.rules.Programs.get(name).OptionsWithValue)
	return sub >= 0 && contains(e.rules.Suggest.Targets, name+" "+argv[sub])
}

// wildcardScope is the narrowest `… **` pattern for argv whose words say
// what runs, or "" when there is none: shells, wrappers and inline code
// have no words that could be generalised over.
func (e *Engine) wildcardScope(argv []string) string {
	name := programName(argv[0])
	if e.isShell(name) {
		return ""
	}
	if _, ok := e.rules.Wrappers.lookup(name); ok {
		return ""
	}
	if spec, ok := e.rules.Interpreters.lookup(name); ok {
		at := scriptIndex(argv, spec)
		if at < 0 || e.targets(argv[at:]) {
			return "" // `python3 -m pip install x` is pip install
		}
		if e.optionsReach(path.Base(argv[at]), nil) {
			return "" // python3 -m pytest takes pytest's options
		}
		if _, ok := e.rules.Suggest.Subcommands.lookup(path.Base(argv[at])); ok {
			// A script with subcommands of its own (Django's manage.py:
			// test, runserver, migrate) is scoped to the subcommand.
			if sub := operandIndex(argv, at+1, nil); sub >= 0 {
				return pattern.Prefix(argv, sub)
			}
			return ""
		}
		return pattern.Prefix(argv, at)
	}
	if contains(e.rules.Suggest.Runners, name) {
		at := operandIndex(argv, 1, nil)
		if at < 0 || e.targets(argv[at:]) {
			return ""
		}
		return pattern.Prefix(argv, at)
	}
	deeper, ok := e.rules.Suggest.Subcommands.lookup(argv[0])
	if !ok {
		deeper, ok = e.rules.Suggest.Subcommands.lookup(name)
	}
	if !ok {
		if e.optionsReach(name, nil) {
			return ""
		}
		return pattern.Prefix(argv, 0)
	}
	withValue := e.rules.Programs.get(name).OptionsWithValue
	sub := operandIndex(argv, 1, withValue)
	if sub < 0 {
		return "" // `git --version`: nothing to generalise over
	}
	if slices.Contains(deeper, argv[sub]) {
		if next := operandIndex(argv, sub+1, withValue); next >= 0 {
			if e.optionsReach(name, []string{argv[sub], argv[next]}) {
				return ""
			}
			return pattern.Prefix(argv, next)
		}
	}
	if e.optionsReach(name, []string{argv[sub]}) {
		return ""
	}
	return pattern.Prefix(argv, sub)
}

// optionsReach reports whether the program's model says an option given
// after the words a wildcard fixes can reach other targets or effects
// (issue 22, 5b: `pytest **` covered `pytest --basetemp=~`, `make all **`
// `make all -f ../x.mk`, `git apply **` what --unsafe-paths writes): a
// rule of the table that matches on the program's options or their
// values (or on any text, for a rule naming the subcommand), is firm or
// dangerous, and applies to the subcommand — it names it, or names none
// and the program's options may follow its operands (every program but
// suggest.optionsFirst's). Such a rule waives nothing
// under a wildcard, but the wildcard would still stand for every option
// the model does not know yet; only the exact command is offered.
func (e *Engine) optionsReach(program string, fixed []string) bool {
	for _, ru := range e.rules.rulesFor(program) {
		if !ru.Firm && ru.Risk != Dangerous {
			continue
		}
		if len(ru.Options) == 0 && len(ru.ValueOf) == 0 && (len(ru.Sub) == 0 || ru.Text == "" && len(ru.AnyArg) == 0) {
			// A rule on operands, or a free-text rule that names no
			// subcommand (its expression says which it is about:
			// install-from-url's "install … URL").
			continue
		}
		if len(ru.Sub) == 0 {
			if !contains(e.rules.Suggest.OptionsFirst, program) {
				return true
			}
			continue
		}
		for _, s := range ru.Sub {
			if subCompatible(strings.Fields(s), fixed) {
				return true
			}
		}
	}
	return false
}

func (e *Engine) isShell(name string) bool {
	for _, s := range e.rules.Shells {
		if s == name {
			return true
		}
	}
	return false
}

// scriptIndex is the index of the script file or module an interpreter
// runs (`python3 -m pytest` → pytest), or -1 for inline code, stdin, a
// program-text operand (awk) or nothing at all: those are allowed only
// exactly.
func scriptIndex(argv []string, spec *interpSpec) int {
	for i := 1; i < len(argv); i++ {
		w := argv[i]
		switch {
		case contains(spec.Inline, w) || w == "-" || w == "--":
			return -1
		case w == "-m" && i+1 < len(argv):
			return i + 1
		case contains(spec.OptionsWithValue, w):
			i++
		case strings.HasPrefix(w, "-"):
		default:
			if spec.ProgramArg {
				return -1 // awk's program text is code
			}
			return i
		}
	}
	return -1
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

// subCompatible reports whether a rule's subcommand words and the words a
// pattern fixes can name the same command: each pair they both have
// matches (a rule's part may be a set, "delete-*|terminate-*", or "*",
// any word). `git stash **` reaches `git stash drop`; `docker compose up
// **` reaches `docker compose up down -v`, which compose-down-volumes
// reads as compose PROJECT down, but not `docker compose run`.
func subCompatible(rule, fixed []string) bool {
	if len(fixed) == 0 {
		return false
	}
	for i := 0; i < len(rule) && i < len(fixed); i++ {
		if !subPartMatches(rule[i], fixed[i]) {
			return false
		}
	}
	return true
}
