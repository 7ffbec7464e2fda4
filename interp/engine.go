package interp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/expand"
	shinterp "mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/internal/denial"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/policy/shparse"
	"github.com/execgate/execgate/sandbox"
)

// ExitRefused is the status of a command the engine did not run because the
// Checker refused it: bash's status for a command found but not executable.
const ExitRefused = 126

// Command is one external command about to run under the interp engine, as
// the interpreter built it: after expansion, splitting and globbing, so it
// is what would really be executed, not what the source text says.
type Command struct {
	// Argv is the argument vector, argv[0] as written (a name or a path).
	Argv []string
	// Path is the absolute path of the executable that argv[0] resolved to,
	// through the program's own PATH.
	Path string
	// Dir is the interpreter's working directory.
	Dir string
	// Env lists the exported variables that differ from the environment the
	// program started with: NAME=VALUE for a new or changed one, a bare NAME
	// for one that was removed. Sorted; nil when nothing changed.
	Env []string
}

// Checker decides whether a command may run. A nil error runs it. An error
// refuses it: the command does not run, its status is 126 (ExitRefused), and
// the error's text, made one line, is written to the program's standard
// error, so it should be the complete message, e.g. "execgate: denied: …".
// The program then goes on as bash would after a failed command (and stops
// there under set -e).
//
// A Checker may block, asking a human, and must return when ctx is done; an
// error returned once ctx is done stops the whole program instead.
// Pipelines and background jobs call it from several goroutines at once.
type Checker func(ctx context.Context, c Command) error

// EngineOptions says what RunEngine runs and where its output goes. The
// output fields mean what they mean in Options.
type EngineOptions struct {
	// Program is the shell source to run.
	Program string
	// Name is $0, and the prefix of the interpreter's error messages as
	// bash uses it ("bash: line 1: foo: command not found"); "" means
	// "bash".
	Name string
	// Args are the positional parameters $1….
	Args []string
	// Set lists the shell options from the command line, in order, as the
	// shim's CommandLine.Set has them: "-errexit" / "+errexit" for set -o
	// options, "-O:extglob" / "+O:extglob" for shopt options. An option the
	// engine does not support makes RunEngine return an *UnsupportedError.
	Set []string

	// Dir is the working directory; "" means this process's.
	Dir string
	// Env is the environment; nil means this process's environment.
	Env []string
	// Stdin is the program's standard input; nil means /dev/null. An
	// *os.File is given to commands as is; any other reader is copied
	// through a pipe and may be read to its end.
	Stdin io.Reader
	// Stdout and Stderr receive the output; nil discards it.
	Stdout, Stderr io.Writer

	// MaxBytes, TailBytes, SpillDir, SpillMaxBytes, SpillKeep, Now and
	// Grace cap and save the output exactly as for Run.
	MaxBytes      int64
	TailBytes     int64
	SpillDir      string
	SpillMaxBytes int64
	SpillKeep     int
	Now           func() time.Time
	Grace         time.Duration

	// ForwardSignals makes SIGINT, SIGTERM, SIGHUP and SIGQUIT received by
	// this process stop the program, as they would stop bash: the running
	// command gets SIGINT, then SIGKILL after a grace, and the result says
	// the program was killed by the signal received. The shim sets it; a
	// daemon must not.
	ForwardSignals bool

	// Confine, if set, confines every external command the program runs
	// (see Options.Confine). The interpreter's own work (builtins, the
	// files its redirections open) stays in this process and is judged by
	// CheckOpen instead.
	Confine *sandbox.Prepared

	// Check decides every external command; nil refuses them all.
	Check Checker
	// CheckOpen, if set, decides every file the interpreter itself opens:
	// redirection targets and sources, `source` files and $(<file). path is
	// absolute; flag is os.OpenFile's. An error fails the redirection with
	// status 1 and the line "open PATH: ERROR" on the program's stderr, as a
	// failed redirection does in bash. nil allows every open.
	CheckOpen func(ctx context.Context, path string, flag int) error

	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// UnsupportedError is returned by RunEngine, before anything runs, for a
// program or a shell option that the engine would not run as bash would.
// The caller should treat the program as needing review and, if it is
// allowed, run it with the real shell instead.
type UnsupportedError struct {
	// Reasons are short phrases such as "uses `coproc`".
	Reasons []string
}

func (e *UnsupportedError) Error() string {
	return "interp engine cannot run this program as bash would: " + strings.Join(e.Reasons, "; ")
}

// RunEngine runs o.Program in the mvdan.cc/sh interpreter, inside this
// process, asking o.Check about every external command just before it would
// be executed, with its real argv. Builtins and functions run without a
// check: they are the interpreter's own code; whatever they run (eval,
// source, command, exec, traps) comes back through the check. See
// docs/interp-engine.md for what the engine does not do as bash would; a
// program that uses any of that (see Unsupported) is refused with an
// *UnsupportedError before anything runs.
//
// Output is captured and capped as by Run. A syntax error is reported on
// the program's stderr with status 2, as bash does. When ctx is done the
// running command gets SIGINT and, after a grace, SIGKILL; the program stops
// with status 130, as after ^C. Background jobs keep running after RunEngine
// returns, as they would after bash exits.
//
// RunEngine returns an error only when the program was not run: bad
// options, an unsupported program, or setup failures.
func RunEngine(ctx context.Context, o EngineOptions) (Result, error) {
	return runEngine(ctx, o, true)
}

// runEngine is RunEngine; refuse false runs even what Unsupported reports,
// which only the tests that show each reported feature's difference do.
func runEngine(ctx context.Context, o EngineOptions, refuse bool) (Result, error) {
	out := o.output()
	if err := out.checkOutput(); err != nil {
		return Result{}, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	name := o.Name
	if name == "" {
		name = "bash"
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	opts, reasons := runnerOptions(o.Set)
	if err := shparse.CheckNesting(o.Program); err != nil {
		// Parsing it might overflow the stack and kill the process.
		return Result{}, &UnsupportedError{Reasons: []string{err.Error()}}
	}
	file, parseErr := syntax.NewParser().Parse(strings.NewReader(o.Program), name)
	if parseErr == nil {
		reasons = Unsupported(file, o.Set...) // the options' reasons included
		subshellPipelines(file)
	}
	reasons = append(reasons, envUnsupported(env)...)
	if refuse && len(reasons) > 0 {
		return Result{}, &UnsupportedError{Reasons: reasons}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("run program: %w", err)
	}

	dir := o.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return Result{}, fmt.Errorf("run program: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Result{}, fmt.Errorf("run program: %w", err)
	}

	s, err := newStreams(&o, log)
	if err != nil {
		return Result{}, err
	}
	defer s.closeAll()

	env = startingEnv(env, dir)
	e := &engine{name: name, confine: o.Confine, check: o.Check, checkOpen: o.CheckOpen, log: log, opts: opts, files: &s.mu,
		start: exported(expand.ListEnviron(env...)), open: shinterp.DefaultOpenHandler()}
	if e.check == nil {
		e.check = func(context.Context, Command) error {
			return denial.New("no checker is configured for the interp engine")
		}
	}

	start := time.Now()
	var res Result
	if parseErr != nil {
		fmt.Fprintln(s.stderr(), syntaxError(name, parseErr))
		res.ExitStatus = 2
	} else {
		res = e.runFile(ctx, &o, file, dir, env, s)
	}
	s.finish(&res, parseErr == nil && lingers(file))
	res.Duration = time.Since(start)
	return res, nil
}

// engine holds what the handlers of one RunEngine call share.
type engine struct {
	name      string
	confine   *sandbox.Prepared
	check     Checker
	checkOpen func(ctx context.Context, path string, flag int) error
	open      shinterp.OpenHandlerFunc
	start     map[string]string // what commands would inherit at the start
	opts      []shinterp.RunnerOption
	files     *sync.RWMutex // streams.mu
	log       *slog.Logger
}

// runFile interprets file and returns its status.
func (e *engine) runFile(ctx context.Context, o *EngineOptions, file *syntax.File, dir string, env []string, s *streams) Result {
	// The run has its own cancellation: the caller's ctx reaches it only
	// while RunEngine runs. Background jobs outlive the program, as under
	// bash, and a caller cancelling afterwards must not interrupt them.
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stopWatch := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stopWatch()
	var sigMu sync.Mutex
	var got syscall.Signal
	if o.ForwardSignals {
		sigs := make(chan os.Signal, 4)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
		done := make(chan struct{})
		defer func() { signal.Stop(sigs); close(done) }()
		go func() {
			select {
			case sig := <-sigs:
				sigMu.Lock()
				got = sig.(syscall.Signal)
				sigMu.Unlock()
				cancel(fmt.Errorf("received %v", sig))
			case <-done:
			}
		}()
	}

	r, err := e.runner(env, dir, s.stdin, s.w[stdout], s.w[stderr], o.Args)
	if err != nil {
		// Options were validated by runnerOptions; this is a bug.
		fmt.Fprintf(s.stderr(), "%s: %v\n", e.name, err)
		return Result{ExitStatus: 2}
	}

	err = e.interpret(runCtx, r, file)
	var status shinterp.ExitStatus
	sigMu.Lock()
	sig := got
	sigMu.Unlock()
	switch {
	case sig != 0:
		return Result{ExitStatus: 128 + int(sig), Signaled: true, Signal: sig}
	case runCtx.Err() != nil:
		e.log.Debug("program cancelled", "err", context.Cause(runCtx))
		return Result{ExitStatus: 128 + int(syscall.SIGINT)}
	case err == nil:
		return Result{}
	case errors.As(err, &status):
		return Result{ExitStatus: int(status)}
	default:
		// A fatal interpreter error: say so where the shell's own errors
		// go, and fail.
		e.log.Warn("interpreter error", "err", err)
		fmt.Fprintf(s.stderr(), "%s: %v\n", e.name, err)
		return Result{ExitStatus: 1}
	}
}

// callHandler refuses code that a builtin would parse while the program
// runs (eval, source, trap, alias, unset's subscript) when it is too deeply
// nested to parse safely: the parser would overflow the stack and kill the
// process. The refusal stops the program with status 126 (ExitRefused).
func (e *engine) callHandler(ctx context.Context, args []string) ([]string, error) {
	i := 0
	for i < len(args)-1 && (args[i] == "builtin" || args[i] == "command") {
		i++
		for i < len(args)-1 && strings.HasPrefix(args[i], "-") {
			i++ // command -p, builtin --
		}
	}
	var code []string
	switch args[i] {
	case "eval":
		code = []string{strings.Join(args[i+1:], " ")}
	case "trap", "alias", "unset":
		code = args[i+1:]
	case "source", ".":
		if i+1 < len(args) {
			hc := shinterp.HandlerCtx(ctx)
			if b, err := os.ReadFile(sourcePath(hc, args[i+1])); err == nil {
				code = []string{string(b)}
			}
		}
	}
	for _, c := range code {
		if err := shparse.CheckNesting(c); err != nil {
			hc := shinterp.HandlerCtx(ctx)
			fmt.Fprintln(hc.Stderr, display.Flatten("execgate: not run: "+args[i]+": "+err.Error(), 0))
			return nil, shinterp.ExitStatus(ExitRefused)
		}
	}
	return args, nil
}

// sourcePath is the file `source name` reads: name itself when it has a
// slash, else the first match in $PATH, else name in the current directory.
func sourcePath(hc shinterp.HandlerContext, name string) string {
	if !strings.Contains(name, "/") {
		for _, dir := range filepath.SplitList(hc.Env.Get("PATH").String()) {
			if dir == "" {
				dir = "."
			}
			p := filepath.Join(dir, name)
			if !filepath.IsAbs(p) {
				p = filepath.Join(hc.Dir, p)
			}
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p
			}
		}
	}
	if !filepath.IsAbs(name) {
		return filepath.Join(hc.Dir, name)
	}
	return name
}

// interpret runs file, turning a panic (the interpreter's or a Checker's)
// into an error: input must never crash the shim. Panics in the
// interpreter's own goroutines (pipelines, background jobs) cannot be caught
// here; none is known to be reachable from bash syntax.
func (e *engine) interpret(ctx context.Context, r *shinterp.Runner, file *syntax.File) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	return r.Run(ctx, file)
}

// runner returns an interpreter set up with the engine's handlers and the
// command line's options.
func (e *engine) runner(env []string, dir string, stdin io.Reader, stdout, stderr io.Writer, args []string) (*shinterp.Runner, error) {
	return shinterp.New(append([]shinterp.RunnerOption{
		shinterp.Env(expand.ListEnviron(env...)),
		shinterp.Dir(dir),
		shinterp.StdIO(stdin, stdout, stderr),
		shinterp.Params(append([]string{"--"}, args...)...),
		shinterp.ExecHandlers(e.execHandler),
		shinterp.OpenHandler(e.openHandler),
		shinterp.CallHandler(e.callHandler),
	}, e.opts...)...)
}

// execHandler is the exec middleware: it resolves, checks and runs every
// external command. It never calls next (mvdan's default handler): running
// the command here lets the child get the environment bash would give it,
// the very file that was checked, and a script without a #! line run by
// this engine, with its commands checked, rather than by an unchecked
// interpreter.
func (e *engine) execHandler(shinterp.ExecHandlerFunc) shinterp.ExecHandlerFunc {
	return func(ctx context.Context, args []string) error {
		hc := shinterp.HandlerCtx(ctx)
		path, status, msg := resolve(hc, args[0])
		if msg != "" {
			e.shellError(hc, msg)
			return shinterp.ExitStatus(status)
		}
		env := childEnv(hc, path)
		c := Command{Argv: slices.Clone(args), Path: path, Dir: hc.Dir, Env: e.envDiff(env)}
		if err := e.check(ctx, c); err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx) // stops the program
			}
			e.log.Debug("command refused", "argv", c.Argv, "err", err)
			fmt.Fprintln(hc.Stderr, display.Flatten(err.Error(), 0))
			return shinterp.ExitStatus(ExitRefused)
		}
		e.log.Debug("command allowed", "argv", c.Argv)
		return e.execute(ctx, hc, path, args, env)
	}
}

// execute runs one checked command and returns its status as the
// interpreter wants it, as mvdan's DefaultExecHandler does: on
// cancellation the command gets SIGINT, and SIGKILL killDelay later.
func (e *engine) execute(ctx context.Context, hc shinterp.HandlerContext, path string, args, env []string) error {
	newCmd := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, path)
		cmd.Args, cmd.Env, cmd.Dir = args, env, hc.Dir
		cmd.Stdin, cmd.Stdout, cmd.Stderr = hc.Stdin, hc.Stdout, hc.Stderr
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = killDelay
		return cmd
	}
	release := func() {}
	start := func() (*exec.Cmd, error) {
		e.files.RLock()
		defer e.files.RUnlock()
		cmd := newCmd()
		if e.confine != nil {
			cmd.SysProcAttr = e.confine.ChildAttr() // into its cgroup, if it has one
			var err error
			release, err = e.confine.OnThread(cmd.Start)
			if err != nil {
				release()
				release = func() {}
				if e.confine.DropGroup(err) {
					// Refused into the group (no clone3 here): nothing
					// ran; it runs untracked, as ForkExec would.
					cmd = newCmd()
					release, err = e.confine.OnThread(cmd.Start)
					if err != nil {
						release()
						release = func() {}
					}
				}
			}
			return cmd, err
		}
		return cmd, cmd.Start()
	}
	defer func() { release() }()
	cmd, err := start()
	// A file another goroutine has just written may still be open for
	// writing in a child forked meanwhile (go.dev/issue/22315): retry.
	for delay := time.Millisecond; errors.Is(err, syscall.ETXTBSY) && delay < 300*time.Millisecond; delay *= 2 {
		time.Sleep(delay)
		cmd, err = start()
	}
	if errors.Is(err, syscall.ENOEXEC) {
		return e.script(ctx, hc, path, args, env)
	}
	if err != nil {
		e.shellError(hc, args[0]+": "+strerror(err))
		if errors.Is(err, fs.ErrNotExist) {
			return shinterp.ExitStatus(127)
		}
		return shinterp.ExitStatus(126)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// ErrWaitDelay: it exited, but something it started still holds
		// the output pipes open.
		return nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return shinterp.ExitStatus(128 + int(ws.Signal()))
		}
		return shinterp.ExitStatus(ee.ExitCode())
	default:
		return err
	}
}

// script runs a file the kernel would not execute (no #! line) as a shell
// script, as bash does: in a new shell that inherits only the environment,
// here the engine itself, so that its commands are checked too.
func (e *engine) script(ctx context.Context, hc shinterp.HandlerContext, path string, args, env []string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		e.shellError(hc, args[0]+": "+strerror(err))
		return shinterp.ExitStatus(126)
	}
	if line, _, _ := strings.Cut(string(b), "\n"); strings.IndexByte(line, 0) >= 0 {
		e.shellError(hc, args[0]+": cannot execute binary file")
		return shinterp.ExitStatus(126)
	}
	if err := shparse.CheckNesting(string(b)); err != nil {
		fmt.Fprintln(hc.Stderr, display.Flatten("execgate: not run: "+args[0]+": "+err.Error(), 0))
		return shinterp.ExitStatus(ExitRefused)
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(string(b)), args[0])
	if err != nil {
		fmt.Fprintln(hc.Stderr, syntaxError(args[0], err))
		return shinterp.ExitStatus(2)
	}
	if reasons := Unsupported(f); len(reasons) > 0 {
		fmt.Fprintln(hc.Stderr, display.Flatten("execgate: not run: "+args[0]+": "+(&UnsupportedError{reasons}).Error(), 0))
		return shinterp.ExitStatus(ExitRefused)
	}
	subshellPipelines(f)
	// A new shell: its own name in error messages, default options.
	sub := *e
	sub.name, sub.opts = args[0], nil
	r, err := sub.runner(env, hc.Dir, hc.Stdin, hc.Stdout, hc.Stderr, args[1:])
	if err != nil {
		return err
	}
	return r.Run(ctx, f)
}

// shellError writes one of the shell's own error lines, as bash words them.
func (e *engine) shellError(hc shinterp.HandlerContext, msg string) {
	fmt.Fprintf(hc.Stderr, "%s: line %d: %s\n", e.name, hc.Pos.Line(), msg)
}

// openHandler asks CheckOpen about every file the interpreter opens.
func (e *engine) openHandler(ctx context.Context, path string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	if e.checkOpen != nil {
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(shinterp.HandlerCtx(ctx).Dir, abs)
		}
		if err := e.checkOpen(ctx, abs, flag); err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			// Only an *os.PathError fails the redirection alone; any other
			// error would stop the program.
			return nil, &os.PathError{Op: "open", Path: path, Err: errors.New(display.Flatten(err.Error(), 0))}
		}
	}
	return e.open(ctx, path, flag, perm)
}

// resolve finds the executable for name as bash would, returning its path or
// bash's status and message for a command that cannot run.
func resolve(hc shinterp.HandlerContext, name string) (path string, status int, msg string) {
	if !strings.Contains(name, "/") {
		p, err := shinterp.LookPathDir(hc.Dir, hc.Env, name)
		if err != nil {
			return "", 127, name + ": command not found"
		}
		return p, 0, ""
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(hc.Dir, p)
	}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", 127, name + ": No such file or directory"
	case err != nil:
		return "", 126, name + ": " + strerror(err)
	case fi.IsDir():
		return "", 126, name + ": Is a directory"
	}
	if err := unix.Access(p, unix.X_OK); err != nil {
		return "", 126, name + ": " + strerror(err)
	}
	return p, 0, ""
}

// strerror is the C library's wording of err's errno, which bash prints:
// Go's errno strings are the same text, uncapitalised.
func strerror(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	s := []rune(errno.Error())
	s[0] = unicode.ToUpper(s[0])
	return string(s)
}

// envDiff lists how env differs from e.start.
func (e *engine) envDiff(env []string) []string {
	cur := exported(expand.ListEnviron(env...))
	delete(cur, "_")
	var diff []string
	for k, v := range cur {
		if old, ok := e.start[k]; !ok || old != v {
			diff = append(diff, k+"="+v)
		}
	}
	for k := range e.start {
		if _, ok := cur[k]; !ok && k != "_" {
			diff = append(diff, k)
		}
	}
	slices.Sort(diff)
	return diff
}

// exported returns the variables of env that a command would inherit.
func exported(env expand.Environ) map[string]string {
	m := make(map[string]string)
	// Each visits outer scopes first, so inner values and unsets win.
	env.Each(func(name string, vr expand.Variable) bool {
		if vr.IsSet() && vr.Exported && vr.Kind == expand.String {
			m[name] = vr.Str
		} else {
			delete(m, name)
		}
		return true
	})
	return m
}

// startingEnv is the environment as bash sets it up before running anything:
// PWD is the working directory, an OLDPWD that is not a directory is
// dropped, SHLVL counts one more.
func startingEnv(env []string, dir string) []string {
	out := make([]string, 0, len(env)+2)
	shlvl := 0
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PWD":
			continue
		case "OLDPWD":
			if fi, err := os.Stat(v); err != nil || !fi.IsDir() {
				continue
			}
		case "SHLVL":
			shlvl, _ = strconv.Atoi(strings.TrimSpace(v))
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PWD="+dir, "SHLVL="+strconv.Itoa(max(shlvl, 0)+1))
}

// childEnv is the environment bash would give a command: the exported
// variables, PWD and OLDPWD as the shell has them (the interpreter forgets
// that they are exported once cd changes them), and _ the command's path.
func childEnv(hc shinterp.HandlerContext, path string) []string {
	m := exported(hc.Env)
	for _, k := range []string{"PWD", "OLDPWD"} {
		if vr := hc.Env.Get(k); vr.IsSet() && vr.Kind == expand.String {
			m[k] = vr.Str
		}
	}
	m["_"] = path
	env := make([]string, 0, len(m))
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// runnerOptions translates the command line's shell options. Options the
// interpreter implements differently come back as reasons.
func runnerOptions(set []string) (opts []shinterp.RunnerOption, reasons []string) {
	for _, s := range set {
		on := strings.HasPrefix(s, "-")
		if !on && !strings.HasPrefix(s, "+") {
			reasons = append(reasons, fmt.Sprintf("shell option %q is malformed", s))
			continue
		}
		name, shopt := strings.CutPrefix(s[1:], "O:")
		switch {
		case shopt && shoptSupported(name):
			mode := "-u"
			if on {
				mode = "-s"
			}
			opts = append(opts, shinterp.BashOpts(mode, name))
		case shopt:
			reasons = append(reasons, fmt.Sprintf("shell option `shopt %s` is not supported", name))
		case setSupported(name):
			opts = append(opts, shinterp.Params(s[:1]+"o", name))
		case setNoop(name) == on:
			// Already the interpreter's behaviour.
		default:
			reasons = append(reasons, fmt.Sprintf("shell option `set %so %s` is not supported", s[:1], name))
		}
	}
	return opts, reasons
}

// The option tables below are switches, not maps: a package-level map is
// built at start-up, and the shim is a new process for every command.

// setSupported reports whether the interpreter implements the `set -o`
// option name.
func setSupported(name string) bool {
	switch name {
	case "allexport", "errexit", "noexec", "noglob", "nounset", "xtrace", "pipefail":
		return true
	}
	return false
}

// setNoop returns the state of `set -o` option name that is what the
// interpreter always does: setting the option that way changes nothing.
// An option not listed is off in the interpreter.
func setNoop(name string) bool {
	switch name {
	case "braceexpand": // brace expansion is always on
		return true
	case "hashall": // PATH is searched every time, which only differs in speed
		return true
	case "posix": // not emulated
		return false
	}
	return false
}

// shoptSupported reports whether the interpreter implements the shopt
// option name.
func shoptSupported(name string) bool {
	switch name {
	case "dotglob", "expand_aliases", "extglob", "globstar", "nocaseglob", "nullglob":
		return true
	}
	return false
}

// lingers reports whether f starts work that can outlive it inside the
// interpreter: background jobs and process substitutions run in goroutines
// that nothing waits for.
func lingers(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			found = found || n.Background
		case *syntax.ProcSubst:
			found = true
		}
		return !found
	})
	return found
}

// subshellPipelines makes the last command of every pipeline run in a
// subshell, as bash runs it (without shopt lastpipe). The interpreter runs
// it in the current shell, where `echo x | read v`, `… | while …; do
// n=$((n+1)); done` or `… | exit 1` would change the shell itself.
func subshellPipelines(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		b, ok := n.(*syntax.BinaryCmd)
		if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
			return true
		}
		switch y := b.Y.Cmd.(type) {
		case *syntax.Subshell:
		case *syntax.BinaryCmd:
			if y.Op == syntax.Pipe || y.Op == syntax.PipeAll {
				break // its own last command is handled when Walk gets there
			}
			b.Y = &syntax.Stmt{Position: b.Y.Position, Cmd: &syntax.Subshell{Lparen: b.Y.Pos(), Rparen: b.Y.End(), Stmts: []*syntax.Stmt{b.Y}}}
		default:
			b.Y = &syntax.Stmt{Position: b.Y.Position, Cmd: &syntax.Subshell{Lparen: b.Y.Pos(), Rparen: b.Y.End(), Stmts: []*syntax.Stmt{b.Y}}}
		}
		return true
	})
}

// envVarReason says what bash does with the environment variable name,
// set and not empty, before or while it runs the program, that the
// interpreter does not do; ok is false for the others. (A switch: a map
// would be built at start-up of every shim process.)
func envVarReason(name string) (reason string, ok bool) {
	switch name {
	case "BASH_ENV":
		return "BASH_ENV is set: bash would source that file first", true
	case "SHELLOPTS":
		return "SHELLOPTS is set: bash would turn on those options", true
	case "BASHOPTS":
		return "BASHOPTS is set: bash would turn on those options", true
	case "POSIXLY_CORRECT":
		return "POSIXLY_CORRECT is set: bash would run in POSIX mode", true
	case "GLOBIGNORE":
		return "GLOBIGNORE is set: bash would leave those names out of globs", true
	case "CDPATH":
		return "CDPATH is set: bash's cd would search it", true
	case "EXECIGNORE":
		return "EXECIGNORE is set: bash would skip those files in PATH", true
	}
	return "", false
}

// envUnsupported lists what in env the engine would not honour as bash does.
func envUnsupported(env []string) []string {
	var reasons []string
	funcs := false
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if r, ok := envVarReason(k); ok && v != "" {
			reasons = append(reasons, r)
		}
		funcs = funcs || strings.HasPrefix(k, "BASH_FUNC_")
	}
	if funcs {
		reasons = append(reasons, "the environment exports bash functions (BASH_FUNC_…), which bash would define")
	}
	slices.Sort(reasons)
	return slices.Compact(reasons)
}

// syntaxError words a parse error the way bash begins its own.
func syntaxError(name string, err error) string {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: line %d: syntax error: %s", name, pe.Pos.Line(), pe.Text)
	}
	return fmt.Sprintf("%s: syntax error: %v", name, err)
}

// output is the subset of Options that shapes captured output.
func (o *EngineOptions) output() *Options {
	return &Options{
		Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr,
		MaxBytes: o.MaxBytes, TailBytes: o.TailBytes, SpillDir: o.SpillDir,
		SpillMaxBytes: o.SpillMaxBytes, SpillKeep: o.SpillKeep, Now: o.Now, Grace: o.Grace,
	}
}

// streams connects the interpreter to the caller's streams, through the
// capper when output is captured, exactly as Run connects the shell: each
// captured stream is an OS pipe, so that builtins and commands write to the
// same file and the order of their output is kept.
type streams struct {
	stdin  io.Reader
	w      [2]*os.File // what the interpreter writes to
	reads  [2]*os.File // read ends of captured streams, else nil
	own    []*os.File  // files to close at the end (pipe ends, /dev/null)
	c      *capper
	wg     sync.WaitGroup
	grace  time.Duration
	mu     sync.RWMutex // held to close files, read-held to start commands
	closed bool
}

func newStreams(o *EngineOptions, log *slog.Logger) (*streams, error) {
	out := o.output()
	s := &streams{stdin: o.Stdin, grace: o.Grace}
	if s.grace <= 0 {
		s.grace = DefaultGrace
	}
	s.c = newCapper([2]io.Writer{o.Stdout, o.Stderr}, o.MaxBytes, o.TailBytes, newSpill(out, log), log)
	devNull := func() (*os.File, error) {
		f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err == nil {
			s.own = append(s.own, f)
		}
		return f, err
	}
	if s.stdin == nil {
		f, err := devNull()
		if err != nil {
			return nil, fmt.Errorf("run program: %w", err)
		}
		s.stdin = f
	}
	for i, w := range [2]io.Writer{o.Stdout, o.Stderr} {
		if o.MaxBytes == 0 {
			if f, ok := w.(*os.File); ok && f != nil {
				s.w[i] = f
				continue
			}
			if w == nil {
				f, err := devNull()
				if err != nil {
					s.closeAll()
					return nil, fmt.Errorf("run program: %w", err)
				}
				s.w[i] = f
				continue
			}
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			s.closeAll()
			return nil, fmt.Errorf("run program: %w", err)
		}
		s.own = append(s.own, pr, pw)
		s.reads[i], s.w[i] = pr, pw
		s.wg.Go(func() { pump(s.c, i, pr) })
	}
	return s, nil
}

// stderr is where the engine writes the shell's own error messages.
func (s *streams) stderr() io.Writer { return s.w[stderr] }

// finish closes the write ends, reads what is left (for at most the grace
// when background jobs hold the pipes) and settles the capper.
//
// linger says background jobs of the interpreter may still be about to
// start commands on these files; they are then kept open for the grace, as
// bash's pipes stay open while its jobs start, and closed after it. (A
// command started later fails to start: its files are closed.)
func (s *streams) finish(res *Result, linger bool) {
	closeWrites := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, r := range s.reads {
			if r != nil {
				s.w[i].Close()
			}
		}
	}
	if !linger {
		closeWrites()
	}
	deadline := time.Now().Add(s.grace)
	for _, r := range s.reads {
		if r != nil {
			r.SetReadDeadline(deadline) // fails only if the pump already closed it
		}
	}
	s.wg.Wait()
	s.c.finish(res)
	s.closeAll()
}

// closeAll closes the files the streams own. It holds the lock that
// starting a command holds, so that no command is handed a file while it
// is being closed.
func (s *streams) closeAll() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for _, f := range s.own {
		f.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
