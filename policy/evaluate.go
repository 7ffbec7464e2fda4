package policy

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/gitconfig"
	"github.com/execgate/execgate/pattern"
	"github.com/execgate/execgate/policy/shparse"
)

// Engine classifies commands with the built-in rule table. It is safe for
// concurrent use.
type Engine struct {
	rules *rules
}

// NewEngine returns an engine with the built-in rules. The table and its
// index are generated ahead of time (rules_gen.go), so this builds
// nothing: the shim constructs an engine for every command.
func NewEngine() (*Engine, error) {
	return &Engine{rules: builtinIndex}, nil
}

// Request is one command to evaluate and the context it runs in.
type Request struct {
	Command string
	// Cwd is the directory the command starts in, which relative paths
	// are resolved against.
	Cwd string
	// Workspace is the project the command is run for, which rm targets
	// and writes are judged against (a path outside it is not the
	// project's); "" means Cwd. A hook sets it apart from Cwd when the
	// agent runs a command in another directory than its session's.
	Workspace string
	// Home is the user's home directory, for ~ and $HOME.
	Home string
	// Getenv reads the environment the command starts with (the shim's,
	// the agent's for a hook): what git, npm and the shell itself will
	// read besides the command's words (GIT_CONFIG_*, GIT_DIR, CI …).
	// nil means an empty environment.
	Getenv func(string) string
	Agent  string
	Policy config.Policy
	// Allow and Deny match segments against the effective allowlist and
	// denylist; nil means an empty list.
	Allow, Deny *pattern.Matcher
	// Protected lists execgate's own files (config, socket, binary):
	// writing them is dangerous.
	Protected []string
	// ManagedProtected lists the managed policy's protected paths
	// (config.Config.ProtectedPaths): writing them or anything beneath
	// them is dangerous.
	ManagedProtected []string
	// Dialect is the shell that runs Command: bash (the zero value) or
	// zsh, which reads it in its own language and judges what the bash
	// analysis does not model as needs-review.
	Dialect Dialect
	// GitConfigs keeps the repositories' configuration read while this
	// command is judged; nil reads it every time. Its holder stops it
	// before anything runs (gitconfig.Cache).
	GitConfigs *gitconfig.Cache
}

// env reads the command's starting environment ("" when unset or when
// the request has none).
func (r Request) env(name string) string {
	if r.Getenv == nil {
		return ""
	}
	return r.Getenv(name)
}

// Result is the verdict on one command.
type Result struct {
	Command  string
	Agent    string
	Risk     Risk
	Decision Decision
	// Reasons sums up the segments' reasons, riskiest first.
	Reasons  []string
	Segments []*Segment
	// Opaque is set when some part of the command runs code the analysis
	// cannot see.
	Opaque bool
	// ParseError is the parser's message when the command does not parse.
	ParseError string

	assigned       map[string]bool // variables the program may set
	assignsUnknown bool            // it may set variables named at run time
}

// MayAssign reports whether the program may give the shell variable name a
// value: it assigns it (in any way bash has: NAME=, read, printf -v,
// declare, for, mapfile …), assigns a variable whose name is only known at
// run time, runs code the analysis cannot see, or could not be parsed.
// An agent's envelope that reads a variable after the payload relies on
// the payload leaving it alone.
func (r Result) MayAssign(name string) bool {
	return r.assignsUnknown || r.Opaque || r.ParseError != "" || r.assigned[name]
}

// Analyze classifies req.Command into segments and a risk, without the
// allowlist or a decision.
func (e *Engine) Analyze(req Request) Result {
	start := cleanDir(req.Cwd)
	a := &analyzer{r: e.rules, home: req.Home, workspace: cleanDir(cmp.Or(req.Workspace, req.Cwd)), cwd: start, start: start, protected: req.Protected, managedProtected: req.ManagedProtected, getenv: req.env, gitConfigs: req.GitConfigs}
	a.settle(req.Command)
	res := Result{Command: req.Command, Agent: req.Agent}
	top := frame{lang: req.Dialect.lang()}
	if err := a.program(req.Command, top); err != nil {
		res.ParseError = oneLine(err.Error())
		a.segs = a.segs[:0]
		a.funcs, a.calling, a.cwd = nil, nil, start
		// bash runs the lines before a syntax error before it reaches it:
		// judge them too.
		if prefix := linesBefore(req.Command, err); prefix != "" {
			_ = a.program(prefix, top)
		}
		if text := shparse.AsBash(err); text != "" {
			_ = a.program(text, top) // what bash runs, judged too
		}
		seg := &Segment{Text: req.Command}
		reason := Reason{Risk: NeedsReview, Text: "does not parse: " + res.ParseError, Rule: "parse-error"}
		switch {
		case errors.Is(err, shparse.ErrTooDeep):
			reason.Text, reason.Rule = shparse.ErrTooDeep.Error(), "too-deep"
		case errors.Is(err, shparse.ErrReadsOtherwise):
			reason.Text, reason.Rule = "bash reads it otherwise than execgate: "+res.ParseError, "reads-otherwise"
		}
		seg.add(reason)
		seg.Opaque = true
		a.segs = append(a.segs, seg)
	}
	if a.overflow {
		seg := &Segment{Text: req.Command}
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("has more than %d commands; the rest were not analyzed", maxSegments), Rule: "too-many"})
		seg.Opaque = true
		a.segs = append(a.segs, seg)
	}
	a.resolveArithUses()
	a.resolveLiteralUses()
	res.assigned, res.assignsUnknown = a.vars.assigned, a.vars.poisonAll
	res.Segments = a.segs
	for _, s := range a.segs {
		for i := range s.Reasons {
			if s.Reasons[i].Effect == "" {
				s.Reasons[i].Effect = a.effectOf(s.Reasons[i])
			}
		}
		res.Risk = res.Risk.Max(s.Risk)
		res.Opaque = res.Opaque || s.Opaque
		if s.Argv == nil && s.Risk == Safe {
			// A dynamic segment without a reason is a bug in the rules;
			// fail closed.
			s.add(Reason{Risk: NeedsReview, Text: "could not be analyzed"})
			res.Risk = res.Risk.Max(NeedsReview)
		}
	}
	if res.Opaque {
		res.Risk = res.Risk.Max(NeedsReview)
	}
	res.Reasons = summarize(a.segs)
	return res
}

func cleanDir(d string) string {
	if d == "" {
		return ""
	}
	return path.Clean(d)
}

// summarize lists the distinct reasons, dangerous ones first.
func summarize(segs []*Segment) []string {
	var out []string
	seen := map[string]bool{}
	for _, level := range []Risk{Dangerous, NeedsReview} {
		for _, s := range segs {
			for _, r := range s.Reasons {
				text := r.Text
				if len(s.context) > 0 {
					text += " (in " + strings.Join(s.context, " → ") + ")"
				}
				if r.Risk == level && !seen[text] {
					seen[text] = true
					out = append(out, text)
				}
			}
		}
	}
	return out
}

// Evaluate classifies req.Command and decides under req.Policy.
func (e *Engine) Evaluate(req Request) Result {
	res := e.Analyze(req)
	denied := false
	allCovered := true
	for _, s := range res.Segments {
		if entry, _, ok := req.Deny.Match(s.Argv); ok {
			s.Denylist = entry.Pattern
			denied = true
		}
		if entry, exact, ok := req.Allow.Match(s.Argv); ok && !s.Opaque && ((exact && s.exactCovers()) || !s.firm()) {
			s.Allowlist = entry.Pattern
		}
		s.Covered = s.Allowlist != "" || (s.Risk == Safe && req.Policy.AutoAllowSafe) ||
			(req.Policy.AutoAllowWorkspaceRunners && s.workspaceRunnerOnly())
		allCovered = allCovered && s.Covered
	}
	if bad := req.Deny.Invalid(); len(bad) > 0 {
		// A denylist entry that cannot be read might have matched: deny.
		denied = true
		res.Reasons = append(res.Reasons, fmt.Sprintf("denylist pattern %q is invalid, so everything is denied", bad[0]))
	}
	res.Decision = Decide(req.Policy, denied, allCovered && !res.Opaque)
	return res
}

// workspaceRunnerRule is the rule id of the workspace-runner class: a
// command that runs the workspace's own code (npm test, go test, make,
// pytest). It needs review by default; autoAllowWorkspaceRunners lets it
// run (see docs/decisions.md, "Workspace runners").
const workspaceRunnerRule = "workspace-runner"

// workspaceRunnerOnly reports whether running the workspace's own code is
// all the segment does that is not read-only: every reason is of the
// workspace-runner class, and nothing is opaque or made unsafe by its
// arguments. A runner with a firm reason beside it (go test -exec,
// make -f /elsewhere, a dangerous variable) is not.
func (s *Segment) workspaceRunnerOnly() bool {
	if s.Opaque || s.unsafe || s.Argv == nil || s.Risk != NeedsReview || len(s.Reasons) == 0 {
		return false
	}
	for _, r := range s.Reasons {
		if r.Rule != workspaceRunnerRule || r.Risk != NeedsReview {
			return false
		}
	}
	return true
}

// Decide applies policy p to a command: denied when a denylist pattern
// matched, covered when every segment is allowlisted or safe (with
// autoAllowSafe) and nothing is opaque.
func Decide(p config.Policy, denied, covered bool) Decision {
	switch {
	case denied, p.Security == config.SecurityDeny:
		return Deny
	case p.Security == config.SecurityFull:
		if p.Ask == config.AskAlways {
			return AskHuman
		}
		return Allow
	case covered && p.Ask != config.AskAlways:
		return Allow
	case p.Ask == config.AskOff:
		return Deny
	}
	return AskHuman
}

// Satisfied reports whether the allowlist alone lets the result run: what
// askFallback=allowlist allows when nobody answers.
func (r Result) Satisfied() bool {
	if r.Opaque {
		return false
	}
	for _, s := range r.Segments {
		if s.Denylist != "" || !s.Covered {
			return false
		}
	}
	return true
}

// linesBefore returns the complete lines of src before the line a parse
// error points at, or "".
func linesBefore(src string, err error) string {
	var pe syntax.ParseError
	if !errors.As(err, &pe) || pe.Pos.Line() <= 1 {
		return ""
	}
	lines := strings.SplitAfter(src, "\n")
	n := int(pe.Pos.Line()) - 1
	if n > len(lines) {
		return ""
	}
	return strings.Join(lines[:n], "")
}
