package shim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/internal/denial"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/interp"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/policy/shparse"
)

// The interp engine (shell.engine "interp") runs the program in
// mvdan.cc/sh's interpreter and judges every external command by its
// actual argv as it is about to run, and every file the interpreter opens
// for writing, instead of judging the program text as a whole. Dynamic
// commands ($(which python) x.py, loops over files) then need no human
// when what they turn out to run is allowed. See docs/interp-engine.md.

// engineUnsupported lists why the interp engine cannot run this program as
// bash would; the program then needs review and, if allowed, runs with
// bash.
func (s *session) engineUnsupported() []string {
	var out []string
	if s.cl.Login {
		out = append(out, "a login shell (-l) reads profile files the interp engine does not")
	}
	if s.cl.Interactive {
		out = append(out, "an interactive shell")
	}
	if s.posix() {
		out = append(out, "POSIX mode (sh, --posix)")
	}
	if err := shparse.CheckNesting(s.program); err != nil {
		return append(out, err.Error())
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(s.program), "")
	if err != nil {
		return append(out, "does not parse: "+display.Flatten(err.Error(), 0))
	}
	return append(out, interp.Unsupported(f, s.cl.Set...)...)
}

// posix reports whether bash would run in POSIX mode.
func (s *session) posix() bool {
	invokedAsSh := len(s.o.Argv) > 0 && !s.o.Argv0FromShell &&
		strings.TrimPrefix(filepath.Base(s.o.Argv[0]), "-") == "sh"
	return invokedAsSh || s.cl.Posix
}

// engineParams returns $0 and the positional parameters bash would set.
func (s *session) engineParams() (string, []string) {
	name := "bash"
	if len(s.o.Argv) > 0 {
		name = s.o.Argv[0]
	}
	params := s.cl.Params
	switch s.cl.Source {
	case FromString:
		if len(params) > 0 {
			return params[0], params[1:]
		}
	case FromFile:
		return s.cl.Script, params
	}
	return name, params
}

// runEngine runs the approved program in the interp engine. approved says
// a human already approved the whole program: a command the policy would
// ask about then runs, as it would have under bash; the denylist and
// security=deny still refuse. If the engine refuses the program for what
// only it sees (the environment), bash runs it when bashOK says the whole
// program was allowed as it stands; otherwise it is refused.
func (s *session) runEngine(ctx context.Context, run interp.Options, req policy.Request, configPath string, approved, bashOK bool) (int, syscall.Signal) {
	ev := s.ev
	ev.Event = EventStarted
	s.record(ev)
	name, args := s.engineParams()
	stdin := run.Stdin
	if s.cl.Source == FromStdin {
		stdin = nil // the program was all of it
	}
	j := &judge{s: s, req: req, configPath: configPath, approved: approved}
	res, err := interp.RunEngine(ctx, interp.EngineOptions{
		Program: s.program, Name: name, Args: args, Set: s.cl.Set,
		Stdin: stdin, Stdout: run.Stdout, Stderr: run.Stderr, Env: run.Env,
		MaxBytes: run.MaxBytes, TailBytes: run.TailBytes, SpillDir: run.SpillDir, SpillMaxBytes: run.SpillMaxBytes,
		ForwardSignals: true, Confine: run.Confine, Check: j.command, CheckOpen: j.open, Logger: s.log,
	})
	var unsupported *interp.UnsupportedError
	if errors.As(err, &unsupported) {
		if bashOK {
			s.warnf("interp engine: %v; running it with bash", err)
			return s.runShell(ctx, run, nil)
		}
		ev := s.ev
		ev.Event, ev.Decision = EventDenied, string(policy.Deny)
		ev.Message = denial.Line("the interp engine cannot run this as bash would: " + strings.Join(unsupported.Reasons, "; "))
		s.record(ev)
		fmt.Fprintln(s.o.Stderr, ev.Message)
		return ExitDenied, 0
	}
	return s.finished(res, err)
}

// judge decides, as the program runs, each command and file it opens. The
// interpreter may call it from several goroutines (pipelines, background
// jobs); asking is one question at a time.
type judge struct {
	s          *session
	req        policy.Request
	configPath string
	approved   bool
	mu         sync.Mutex
}

// command is the interp.Checker.
func (j *judge) command(ctx context.Context, c interp.Command) error {
	src, err := commandSource(c, j.req.Cwd)
	if err != nil {
		return denial.New(err.Error())
	}
	return j.decide(ctx, src)
}

// open judges a file the interpreter opens for writing as the redirection
// `: > PATH` would be judged.
func (j *judge) open(ctx context.Context, path string, flag int) error {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) == 0 {
		return nil
	}
	q, err := syntax.Quote(path, syntax.LangBash)
	if err != nil {
		return denial.New("a file name that cannot be written in shell syntax")
	}
	return j.decide(ctx, ": >"+q)
}

func (j *judge) decide(ctx context.Context, src string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.s
	req := j.req
	req.Command = src
	res := s.engine.Evaluate(req)
	s.noteCredentials(res)
	if res.Decision == policy.AskHuman && j.approved {
		return nil
	}
	id := newID()
	v := s.decide(ctx, id, req, res, j.configPath)
	if v.allow {
		return nil
	}
	ev := s.ev
	ev.Event, ev.Command, ev.Risk, ev.Reasons = EventDenied, src, res.Risk.String(), res.Reasons
	ev.Decision, ev.Message = string(policy.Deny), v.message
	v.stamp(&ev)
	s.record(ev)
	return errors.New(v.message)
}

// commandSource writes an external command as shell source for the
// policy: its environment changes as assignments, and a cd first when it
// runs elsewhere than where the program started, so that relative paths
// are judged where they point.
func commandSource(c interp.Command, start string) (string, error) {
	var b strings.Builder
	if c.Dir != "" && c.Dir != start {
		q, err := syntax.Quote(c.Dir, syntax.LangBash)
		if err != nil {
			return "", fmt.Errorf("directory %q cannot be written in shell syntax", c.Dir)
		}
		b.WriteString("cd " + q + " && ")
	}
	for _, kv := range c.Env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue // removed: nothing to judge
		}
		q, err := syntax.Quote(value, syntax.LangBash)
		if err != nil {
			return "", fmt.Errorf("variable %s cannot be written in shell syntax", name)
		}
		b.WriteString(name + "=" + q + " ")
	}
	for i, a := range c.Argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return "", fmt.Errorf("argument %d cannot be written in shell syntax", i)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(q)
	}
	return b.String(), nil
}
