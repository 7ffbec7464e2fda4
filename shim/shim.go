package shim

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/checkpoint"
	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hookproto"
	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/internal/denial"
	"github.com/execgate/execgate/internal/gitconfig"
	"github.com/execgate/execgate/internal/hostproxy"
	"github.com/execgate/execgate/internal/self"
	"github.com/execgate/execgate/internal/state"
	"github.com/execgate/execgate/interp"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/prompt"
	"github.com/execgate/execgate/sandbox"
)

// ExitDenied is the exit status of a command that was not run, as bash
// reports a command found but not executable.
const ExitDenied = 126

// maxProgram bounds a script read from a file or stdin: the whole program is
// held in memory and checked before it runs.
const maxProgram = 16 << 20

// persistWait bounds the wait for the configuration lock when saving an
// "allow always" answer; touchWait when recording that an allowlist entry
// was used, which must never hold up the command.
const (
	persistWait = 2 * time.Second
	touchWait   = 50 * time.Millisecond
)

// Options connect the shim to the world. Zero values mean this process's own.
type Options struct {
	// Argv is the command line exactly as received, argv[0] included.
	// When Argv0FromShell is set, argv[0] is replaced by the real shell's
	// base name (for `execgate sh`, whose own argv[0] means nothing to
	// bash).
	Argv           []string
	Argv0FromShell bool
	Stdin          *os.File
	Stdout, Stderr *os.File
	Getenv         func(string) string
	Environ        []string
	// Asker asks a human; nil means the terminal. A hub channel goes in
	// front of the terminal in a prompt.Chain.
	Asker prompt.Asker
	// Now tells the time; nil means time.Now.
	Now func() time.Time
	// SandboxHelper is the program that serves sandbox.HelperArg
	// (SelfHelper in execgate's own binaries), which gives a confined
	// command that runs code its private loopback network when this
	// process is not root; "" gives it none (sandbox.Options).
	SandboxHelper string
	// HoldMax bounds how long a command that runs unconfined keeps what
	// confined commands left running paused (see leftovers.go); 0 means
	// 30 s.
	HoldMax time.Duration
}

// SelfHelper names this process's own program as the sandbox's helper,
// for binaries whose main serves sandbox.HelperArg: the kernel resolves
// it at exec, so nothing is looked up on the start-up path.
const SelfHelper = "/proc/self/exe"

// IsShellName reports whether argv0 names a shell execgate stands in for:
// its base name, without the '-' that marks a login shell, is one that
// install.sh links to execgate (zsh runs the real zsh and judges the
// command as zsh; see dialectOf).
func IsShellName(argv0 string) bool {
	switch filepath.Base(strings.TrimPrefix(argv0, "-")) {
	case "bash", "sh", "zsh":
		return true
	}
	return false
}

// Main runs one shell invocation and returns the exit status for the
// process. When the command ends by a signal, Main re-raises it on this
// process first, so that the caller sees what bash would have shown.
func Main(ctx context.Context, o Options) int {
	s := newSession(o)
	status, sig := s.run(ctx)
	if sig != 0 {
		reraise(sig)
	}
	return status
}

// session is one shim invocation.
type session struct {
	o      Options
	getenv func(string) string
	now    func() time.Time
	log    *slog.Logger
	audit  AuditLog
	// auditFailed is set once an audit write failed: later failures in
	// this run are not reported again.
	auditFailed bool
	cl          CommandLine
	// dialect is the shell this shim stands in for: zsh when invoked
	// under that name, else bash. It picks the command-line reading, the
	// real shell, the language the program is judged in and the
	// envelopes recognised.
	dialect policy.Dialect
	program string // the program checked and run
	source  string // Event.Source
	ev      Event  // the fields every event shares
	warn    []string
	engine  *policy.Engine
	hub     *hub.Client // nil when no hub runs
	via     string      // the agent whose envelope carried the command: "Claude Code"
	trust   policy.Trust
	// envelope is set when the program is an agent's envelope: its payload
	// is what is judged, shown and learnt; the whole program still runs.
	envelope *policy.Envelope
	relay    *interp.Relay // nil until a command is about to run as a child
	// outputTail is audit.outputTail; credentials is set once a command
	// judged in this run reads or sends credentials (see keepTail).
	outputTail  config.OutputTail
	credentials bool
	// sandbox is what this machine can confine, probed on first use.
	sandbox *sandbox.Status
	// taken is the checkpoint this shim took before its command, if any,
	// unkept the files of scratch it did not keep, and older those the
	// workspace held ScratchAge ago already.
	taken         *checkpoint.Info
	unkept, older []string
	// scratch lists the scratch files the command judged last deletes or
	// replaces unasked (policy.WorkLossOf): the checkpoint before it must
	// keep them (checkpointFirst).
	scratch []string
	// heldUntil is the latest end of the holds of unconfined commands
	// read last (holders), for the waiting line.
	heldUntil time.Time
	// loopbackOK says whether a confined command gets a private network
	// here, probed on first use (loopbackHere).
	loopbackOK *bool
	// sawRefusal is set when the captured end of a finished command's
	// output tells of a refused permission (see boundaryHint).
	sawRefusal bool
	// extra is the agent's addition to the sandbox (agents.NAME.sandbox).
	extra config.SandboxConfig
	// proxy serves the allowed hosts to the command running now (nil
	// without them; hostproxy.go).
	proxy *hostproxy.Proxy
	// planted lists the code files of the workspace that changed since a
	// confined command ran there (see planted.go): until a person
	// approves a command, nothing runs confined.
	planted []string
	// confinement is the sandbox the command runs in, once prepared.
	confinement *sandbox.Prepared
	// codeRecord is the record of the workspace's code files on disk when
	// plantedSince found the files as it says (nil otherwise): a record
	// still true is not written again.
	codeRecord *codeSnapshot
	// wsMemo is sandboxWorkspace's answer while the command is judged.
	wsMemo workspaceMemo
	// gitConfigs keeps the repositories' configuration while the command
	// is judged (policy.Request.GitConfigs); stopped as it starts.
	gitConfigs *gitconfig.Cache
	// checkpointed is the workspace the checkpoint taken before this
	// command recorded; "" when none was taken (see nested.go).
	checkpointed string
	// group is the cgroup the confined command runs in, groupWS its
	// workspace; paused names what confined commands left running that
	// is paused while this one runs unconfined (leftovers.go).
	group   *sandbox.Group
	groupWS string
	paused  []string
	// holdExpired: the pause was lifted after holdMax while the command
	// still ran (leftovers.go).
	holdExpired atomic.Bool
	// stays: this process must outlive the command (a group to end, a
	// pause to release, a private network made by a child), so it is
	// never exec'd in place.
	stays bool
}

func newSession(o Options) *session {
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &session{o: o, getenv: o.Getenv, now: o.Now}
	s.log = slog.New(slog.DiscardHandler)
	if o.Getenv("EXECGATE_DEBUG") == "1" {
		s.log = slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("pid", os.Getpid())
	}
	path, err := DefaultAuditPath(o.Getenv)
	if err != nil {
		// Append then fails, and says so in debug mode; the command runs
		// as it would without a log.
		s.log.Warn("no audit log", "err", err)
	}
	s.audit = AuditLog{Path: path}
	return s
}

// spillDir is where cut output is saved: output/ in the state directory,
// or "" (no spill file) when there is no state directory.
func (s *session) spillDir() string {
	dir, err := state.Path(s.getenv, "output")
	if err != nil {
		return ""
	}
	return dir
}

// warnf records a problem that does not stop the command: it goes to the
// audit log with the command's events, and to stderr in debug mode.
func (s *session) warnf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	s.warn = append(s.warn, msg)
	s.log.Warn(msg)
}

// record appends an event, never failing the command over it.
func (s *session) record(ev Event) {
	ev.Time = s.now().UTC() // UTC: no time zone file to load on every run
	ev.Warnings = append(ev.Warnings, s.warn...)
	s.warn = nil
	if err := s.audit.Append(ev); err != nil {
		// Counted for execgate log and doctor; said once per run, in
		// debug mode only (s.log discards otherwise): the command's output
		// stays the command's.
		cerr := s.audit.CountFailure(s.now())
		if !s.auditFailed {
			s.auditFailed = true
			s.log.Warn("audit log write failed; further failures in this run are not reported", "err", err, "counted", cerr == nil)
		}
	}
	s.report(ev)
}

// agentOwnsTerminal reports whether an agent started this command itself:
// it came in the agent's envelope, or the agent's own variables are in the
// environment. The terminal, if any, is then the agent's (its TUI in raw
// mode, or a pty whose text goes back to the model): a prompt drawn there
// would fight the agent for the screen and the keys, or end up in the tool
// result. Only the hub is asked, and with no approver askFallback applies
// at once. $EXECGATE_AGENT alone does not count: people set it to label
// their own shells, where the terminal prompt is the point.
func (s *session) agentOwnsTerminal() bool {
	return s.envelope != nil || config.AgentSignature(s.o.Environ) != ""
}

// statusTerminal is where the person who started the command is told
// that the hub is asking and who answered: stderr when it is a terminal
// and no agent owns it (its text would go to the model), else nil.
func (s *session) statusTerminal() io.Writer {
	f := s.o.Stderr
	if !isTerminal(f) || s.agentOwnsTerminal() {
		return nil
	}
	return f
}

// run is Main without the exit: it returns the status and the signal to
// re-raise, if any.
func (s *session) run(ctx context.Context) (int, syscall.Signal) {
	argv := s.o.Argv
	if len(argv) == 0 {
		argv = []string{"bash"}
	}
	s.dialect = dialectOf(argv, s.o.Argv0FromShell)
	if s.dialect == policy.DialectZsh {
		s.cl = ParseZshCommandLine(argv)
	} else {
		s.cl = ParseCommandLine(argv)
	}

	cfg, configPath, set, unusable := s.loadConfig()
	if s.dialect == policy.DialectZsh {
		// The interp engine runs bash's language, not zsh's.
		set.engine = config.EngineBash
	}
	hookArgv := s.ownHook()
	ownHook := hookArgv != nil
	if unusable != nil && s.cl.Source != NoProgram && !ownHook {
		// Every command needs the policy, and the policy is unknown: refuse
		// it before anything else, in one line.
		return s.refuseAll(unusable)
	}
	shell, err := s.findShell(set.shellPath)
	if err != nil {
		// Nothing can run, so nothing is decided: one line, and bash's
		// status for a command that cannot be executed.
		fmt.Fprintf(s.o.Stderr, "execgate: cannot run: %v\n", err)
		s.log.Error("find shell", "err", err)
		return ExitDenied, 0
	}
	if s.o.Argv0FromShell {
		argv = append([]string{filepath.Base(shell)}, argv[1:]...)
	}
	agent := config.DetectAgent("", s.getenv, s.o.Environ)
	set.output(cfg.OutputFor(agent))
	s.outputTail = cfg.OutputTailSetting()
	run := interp.Options{
		Shell: shell, Argv: argv, Stdin: s.o.Stdin, Stdout: s.o.Stdout, Stderr: s.o.Stderr,
		MaxBytes: set.maxBytes, TailBytes: set.tailBytes,
		SpillDir: s.spillDir(), SpillMaxBytes: set.spillMaxBytes,
		Logger: s.log,
	}
	if ownHook {
		// execgate's own hook command (see ownHook), run as this binary
		// itself, not by bash: the path bash would run is only a name.
		err := syscall.Exec(hookArgv[0], hookArgv, s.o.Environ)
		fmt.Fprintln(s.o.Stderr, denial.Errorf("cannot run execgate's hook: %v", err))
		return ExitDenied, 0
	}
	if s.cl.Source == NoProgram {
		// --help, --version: bash prints and exits.
		return s.execOrRun(ctx, run, true)
	}
	if s.runsChild(set, agent) {
		// Catching the signals to relay takes a while; it is done in the
		// background while the command is judged.
		s.signalRelay()
	}

	cwd, err := os.Getwd()
	if err != nil {
		s.warnf("current directory: %v", err)
	}
	req := policy.NewRequest(cfg, agent, cwd, s.getenv("HOME"), policy.OwnFiles(configPath))
	s.extra = cfg.SandboxFor(agent, s.getenv("HOME"))
	req.Dialect, req.Getenv = s.dialect, s.getenv
	s.gitConfigs = &gitconfig.Cache{}
	req.GitConfigs = s.gitConfigs
	s.trust = policy.NewTrust(cfg, s.getenv("HOME"), s.getenv)
	var hubRefused error
	s.hub, hubRefused = s.connectHub(ctx, cfg)
	if s.hub != nil {
		defer s.hub.Close()
	}
	defaultAsker := s.o.Asker == nil
	if defaultAsker {
		// The hub's approvers first, then whoever is at the terminal.
		s.o.Asker = prompt.Chain{prompt.Hub{Client: s.hub, Refused: hubRefused, Status: s.statusTerminal()}, prompt.TTY{}}
	}
	req.Policy = s.sessionPolicy(ctx, agent, req.Policy)
	s.ev = Event{ID: newID(), Pid: os.Getpid(), Agent: agent, Cwd: cwd}
	if status, sig, ok := s.interactive(ctx, run, req, configPath); ok {
		return status, sig // see interactive.go
	}

	res, inspected := s.evaluate(req)
	s.noteCredentials(res)
	req.Command = s.judged()
	if s.cl.Source == FromStdin && inspected {
		run.Stdin = bytes.NewReader([]byte(s.program))
	}
	// An envelope runs as the agent wrote it, with bash: its plumbing is
	// trusted only in the shape it was recognised in, which the engine
	// would break into separately judged commands.
	engine := set.engine == config.EngineInterp && inspected && s.envelope == nil
	judgedWhole := res.Decision == policy.Allow // bash may run it as it is
	// How it would run, if allowed: decided before anyone is asked, so
	// that an approval grants what the person was shown.
	needs := s.needsOf(ctx, req, res)
	// What it destroys that only the checkpoint before it brings back:
	// said in its record.
	res.Reasons = append(res.Reasons, needs.Undoable...)
	switch {
	case len(needs.Destroys) > 0:
		// Why it asks although it would otherwise run confined: the
		// person sees that first.
		res.Reasons = append(slices.Clone(needs.Destroys), res.Reasons...)
	case len(needs.Beyond) > 0 && res.Decision != policy.Allow && res.Risk != policy.Dangerous && s.sandboxStatus().Supported():
		// Likewise what it needs beyond the sandbox (a signing key, the
		// network): "git commit is not read-only" alone would not say
		// why this commit asks when others run unasked.
		res.Reasons = leading(res.Reasons, needs.Beyond[0])
	}
	if s.sandboxStatus().Supported() {
		if s.planted = s.plantedSince(s.sandboxWorkspace(cwd)); len(s.planted) > 0 {
			// Nothing runs confined in place of asking; what runs still
			// runs inside the sandbox its needs call for.
			why := plantedReason(s.planted)
			res.Reasons = append([]string{why}, res.Reasons...)
			s.warnf("%s", why)
		}
	}
	confined := inspected && len(s.planted) == 0 && policy.CanConfine(req.Policy, res, needs, s.sandboxStatus().Supported())
	enclosed := inspected && !confined && s.runsEnclosed(req, res)
	var grants *sandbox.Grants
	if inspected && (res.Decision != policy.Allow || res.Risk == policy.Safe) {
		// A command the user's own policy lets through without proof
		// (an allowlist entry, security=full) runs as it did before
		// confinement: the user trusted it with more than the boundary
		// (git push to a remote on a path, a tool's own credentials).
		grants = s.grantsFor(req, needs)
	}
	if confined {
		// Bash runs it whole, inside the sandbox: nothing to ask about
		// command by command.
		engine = false
		res.Decision = policy.Allow
	}
	if enclosed {
		// Held by the sandbox of the command that started this shim
		// (enclosed.go): it runs in place, as that command's own code.
		engine = false
		res.Decision = policy.Allow
		grants = nil
		res.Reasons = append(res.Reasons, "runs inside the sandbox of the confined command that started it, which it cannot leave")
	}
	if engine {
		if why := s.engineUnsupported(); len(why) > 0 {
			// Refused rather than run with another meaning: a person may
			// still approve it, and then bash runs it.
			for _, w := range why {
				res = addReason(req.Policy, res, "the interp engine cannot run this as bash would: "+w)
			}
			engine = false
		} else if res.Decision != policy.Allow && req.Policy.Security != config.SecurityDeny && req.Policy.Ask != config.AskAlways {
			res.Decision = policy.Allow
			res.Reasons = append([]string{"each command is judged as it runs (interp engine)"}, res.Reasons...)
		}
	}
	res = s.plantedAsks(res, grants)
	// Last: the reasons that make it ask come first in a refusal's line.
	res.Reasons = append(res.Reasons, confinementLine(res, grants, confined, s.sandboxStatus()))
	s.ev.Command, s.ev.Source, s.ev.Via = s.judged(), s.source, s.via
	if s.envelope != nil {
		s.ev.Envelope = s.program
	}
	s.ev.Risk, s.ev.Reasons, s.ev.Decision = res.Risk.String(), res.Reasons, string(res.Decision)

	if defaultAsker && s.agentOwnsTerminal() {
		// The hub only; a hub that refused this shim still fails the ask.
		s.o.Asker = prompt.Hub{Client: s.hub, Refused: hubRefused}
	}
	v := s.decide(ctx, s.ev.ID, req, res, configPath)
	if !v.allow {
		ev := s.ev
		ev.Event, ev.Message = EventDenied, v.message
		v.stamp(&ev)
		ev.Decision = string(policy.Deny)
		s.record(ev)
		fmt.Fprintln(s.o.Stderr, v.message)
		return ExitDenied, 0
	}
	v.stamp(&s.ev)
	switch {
	case len(s.planted) > 0 && (v.by == ByTTY || v.by == ByHub):
		// A person was shown what changed and approved: what is there
		// now is theirs.
		s.rememberCode(s.sandboxWorkspace(cwd))
		s.planted = nil
	case len(s.planted) > 0:
		// Allowed without a person (a safe command, the policy): one
		// line says it, as a refusal's line would have.
		fmt.Fprintln(s.o.Stderr, "execgate: "+plantedReason(s.planted))
	}
	s.ev.Allowlisted = v.added
	s.ev.Decision = string(policy.Allow)
	if enclosed {
		s.ev.DecidedBy = ByConfined
	}
	if confined {
		s.ev.DecidedBy = ByConfined
		if grants == nil {
			// Never "confined" without the sandbox: refuse instead.
			return s.refuse(denial.New("cannot confine this command here; it was not run"))
		}
	}

	touched := s.touchAllowlist(cfg, agent, configPath, res)
	if status, stop := s.checkpointFirst(ctx, req, res, configPath); stop {
		<-touched
		return status, 0
	}
	// Only output an agent reads is capped (see capture.go); the envelope,
	// if any, is known by now.
	capped := s.capOutput(&run, agent)
	pl := plan{run: run, grants: grants, writesWorkspace: grants == nil || grants.WriteWorkspace,
		caches: s.cachesToMake(res, grants, req.Home), runsCode: needs.RunCode, enclosed: enclosed}
	switch {
	case engine:
		pl.way = wayEngine
		pl.approved = v.by == ByTTY || v.by == ByHub // a person saw the whole program
		pl.bashOK = judgedWhole || v.by != ByPolicy
	default:
		pl.way = wayShell
		// A lone command runs without bash only for bash: a zsh reads
		// ~/.zshenv first, which may change PATH or define functions, so
		// the real zsh runs it whatever it is.
		lone := inspected && s.dialect == policy.DialectBash && s.cl.Source != FromStdin && s.envelope == nil && loneLiteral(res)
		pl.passthrough = !capped
		if lone {
			if d, ok := planDirect(s.cl, res.Segments[0].Argv, s.o.Environ, cwd); ok {
				pl.way, pl.direct = wayDirect, d
			} else if pl.passthrough {
				pl.way = wayShellExec
			}
		}
	}
	return s.carryOut(ctx, pl, req, configPath, touched)
}

// refuseAll refuses the invocation because the configuration cannot be used,
// recording it as any denial.
func (s *session) refuseAll(u *config.UnusableError) (int, syscall.Signal) {
	v := s.refuseUnusable(u)
	cwd, _ := os.Getwd()
	command := s.cl.Command
	if command == "" {
		command = strings.Join(s.o.Argv, " ")
	}
	s.record(Event{
		Event: EventDenied, ID: newID(), Pid: os.Getpid(), Agent: config.DetectAgent("", s.getenv, s.o.Environ),
		Cwd: cwd, Command: command, Decision: string(policy.Deny), DecidedBy: v.by, Message: v.message,
	})
	fmt.Fprintln(s.o.Stderr, v.message)
	return ExitDenied, 0
}

// runDirect runs a lone literal command as bash would have, without bash:
// a do-nothing builtin is answered here, a program is exec'd (or, when its
// output is capped, run as a child). If the program cannot be exec'd, bash
// runs the command after all, so that any error reads as bash's.
func (s *session) runDirect(ctx context.Context, run interp.Options, d directRun, passthrough bool, touched <-chan struct{}) (int, syscall.Signal) {
	s.ev.Direct = true
	if d.builtin {
		if s.relay != nil {
			if sig := s.relay.Pending(); sig != 0 {
				return 128 + int(sig), sig // stopped before it ran, as bash would be
			}
		}
		ev := s.ev
		ev.Event, ev.Exec = EventStarted, true
		s.record(ev)
		<-touched
		return d.status, 0
	}
	direct := run
	direct.Shell, direct.Argv, direct.Env = d.path, d.argv, d.env
	if !passthrough {
		direct.Env = withCapped(d.env)
	}
	<-touched
	if passthrough && !s.stays {
		// (A private network made by a child, a group: see carryOut.)
		ev := s.ev
		ev.Event, ev.Exec = EventStarted, true
		s.record(ev)
		err := interp.Exec(direct)
		s.log.Warn("exec command; running it with the shell instead", "path", d.path, "err", err)
		s.ev.Direct = false
		return s.execOrRun(ctx, run, true)
	}
	return s.runShell(ctx, direct, &run)
}

// runsChild reports whether an allowed command is bound to run as a child
// of this process: its output is capped (as far as can be told before the
// program is read: an envelope found later starts the relay then), by bash
// (not the interp engine, which relays signals itself), and it is neither
// an interactive shell nor a builtin the shim answers itself.
func (s *session) runsChild(set settings, agent string) bool {
	if set.engine == config.EngineInterp || set.maxBytes == 0 || !streamReader(s.o.Stdout) ||
		!s.agentCaller(agent) || s.startsInteractive() {
		return false
	}
	_, builtin := doNothing(strings.TrimSpace(s.cl.Command))
	return !(s.cl.Source == FromString && builtin)
}

// signalRelay returns the relay that passes this process's signals on to
// the command it runs as a child, starting it on first use.
func (s *session) signalRelay() *interp.Relay {
	if s.relay == nil {
		s.relay = interp.StartRelay()
	}
	return s.relay
}

// sessionPolicy applies the temporary overrides to the configured policy:
// the hub's, set by an approver, may loosen it; the agent's environment
// can only tighten it.
func (s *session) sessionPolicy(ctx context.Context, agent string, p config.Policy) config.Policy {
	p = p.Loosened(s.hubOverride(ctx, agent))
	env, warnings := config.EnvOverride(s.getenv)
	for _, w := range warnings {
		s.warnf("%s", w)
	}
	return p.Tightened(env)
}

// execOrRun becomes the shell; if that fails, it falls back to running it.
func (s *session) execOrRun(ctx context.Context, run interp.Options, quiet bool) (int, syscall.Signal) {
	if !quiet {
		ev := s.ev
		ev.Event, ev.Exec = EventStarted, true
		s.record(ev)
	}
	err := interp.Exec(interp.Options{Shell: run.Shell, Argv: run.Argv, Env: run.Env, Confine: run.Confine})
	s.log.Warn("exec shell; running it instead", "err", err)
	run.MaxBytes = 0
	if quiet {
		return s.runQuiet(ctx, run)
	}
	return s.runShell(ctx, run, nil)
}

// runQuiet runs the shell without audit events.
func (s *session) runQuiet(ctx context.Context, run interp.Options) (int, syscall.Signal) {
	run.Relay = s.signalRelay()
	res, err := interp.Run(ctx, run)
	if err != nil {
		fmt.Fprintf(s.o.Stderr, "execgate: cannot run: %v\n", err)
		return ExitDenied, 0
	}
	return res.ExitStatus, res.Signal
}

// runShell runs the allowed program and logs its start and end. If it
// cannot be started and there is a fallback, the fallback runs instead.
func (s *session) runShell(ctx context.Context, run interp.Options, fallback *interp.Options) (int, syscall.Signal) {
	ev := s.ev
	ev.Event = EventStarted
	s.record(ev)
	run.Relay = s.signalRelay()
	res, err := interp.Run(ctx, run)
	if err != nil && res.Duration == 0 && fallback != nil && ctx.Err() == nil {
		s.log.Warn("run command; running it with the shell instead", "path", run.Shell, "err", err)
		fallback.Relay = run.Relay
		res, err = interp.Run(ctx, *fallback)
		s.ev.Direct = false
	}
	return s.finished(res, err)
}

// finished records how the program ended and returns its status and the
// signal to re-raise.
func (s *session) finished(res interp.Result, err error) (int, syscall.Signal) {
	ev := s.ev
	ev.Event = EventFinished
	if err != nil && res.Duration == 0 {
		// Not started: say so in one line, like bash does for a file it
		// cannot execute.
		fmt.Fprintf(s.o.Stderr, "execgate: cannot run: %v\n", err)
		ev.Message = err.Error()
		status := ExitDenied
		ev.ExitStatus = &status
		s.record(ev)
		return ExitDenied, 0
	}
	switch {
	case errors.Is(err, interp.ErrStatusLost):
		// The command ran, but how it ended is unknown: a failure, said in
		// one line, never a success (res.ExitStatus is interp.StatusLost).
		fmt.Fprintf(s.o.Stderr, "execgate: %v\n", err)
		ev.Message = err.Error()
	case err != nil:
		s.warnf("run: %v", err)
	}
	s.sawRefusal = refusalIn(res.Tail)
	if s.proxy != nil {
		ev.Hosts, ev.HostsRefused = s.proxy.Reached(), s.proxy.Refused()
	}
	if s.confinement != nil {
		if err := s.confinement.LoopbackErr(); err != nil {
			// Decided with a private network, run without one: the
			// record says what it really had.
			ev.Confined += "; ran without its private loopback network: " + err.Error()
		}
		if err := s.confinement.GroupErr(); err != nil {
			ev.Confined += "; not tracked in a cgroup: " + err.Error()
		}
	}
	ev.LeftRunning = s.endGroup(s.groupWS, s.group)
	s.group = nil
	ev.Paused = s.paused
	if s.holdExpired.Load() && len(ev.Paused) > 0 {
		ev.Paused = append(slices.Clip(ev.Paused), fmt.Sprintf("(resumed after %s, while it still ran)", s.holdFor()))
	}
	ms := res.Duration.Milliseconds()
	status := res.ExitStatus
	ev.ExitStatus, ev.DurationMs = &status, &ms
	ev.OutputSize, ev.Omitted, ev.SpillPath = res.Bytes, res.Omitted, res.SpillPath
	if s.keepTail() {
		tail := strings.ToValidUTF8(string(res.Tail), "\uFFFD")
		if res.Bytes > int64(len(res.Tail)) {
			tail = dropPartialLine(tail)
		}
		ev.OutputTail = tail
	}
	var sig syscall.Signal
	if res.Signaled {
		ev.Signal = unix.SignalName(res.Signal)
		sig = res.Signal
	}
	s.record(ev)
	return status, sig
}

// noteCredentials remembers whether res has a command that reads or sends
// credentials: its output may show them.
func (s *session) noteCredentials(res policy.Result) {
	for _, seg := range res.Segments {
		for _, r := range seg.Reasons {
			if r.Effect == policy.EffectCredentials || r.Effect == policy.EffectSend {
				s.credentials = true
				return
			}
		}
	}
}

// keepTail decides whether the finished event keeps the end of the
// output (audit.outputTail). What is kept is redacted either way (see
// AuditLog.Append); this keeps the output of a command known to handle
// credentials out of the log altogether, since redaction only finds
// secrets of known shapes.
func (s *session) keepTail() bool {
	switch s.outputTail {
	case config.OutputTailOn:
		return true
	case config.OutputTailUnlessCredentials:
		return !s.credentials
	}
	return false
}

// dropPartialLine removes the first line of an output tail that does not
// start at the output's start: a token cut there would be left as a
// fragment too short to recognise.
func dropPartialLine(tail string) string {
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		return tail[i+1:]
	}
	return tail
}

// evaluate reads the program and judges it. inspected is false when the
// program could not be read ahead (an interactive shell, an unreadable
// script, a command line bash would refuse): the result then says it needs
// review, which only security=full lets through without asking.
func (s *session) evaluate(req policy.Request) (policy.Result, bool) {
	engine, err := policy.NewEngine()
	s.engine = engine
	if err != nil {
		// Without rules nothing can be judged: fail closed.
		s.warnf("load rules: %v", err)
		return policy.Result{Risk: policy.Dangerous, Decision: policy.Deny, Opaque: true,
			Reasons: []string{"execgate cannot load its rules: " + err.Error()}}, false
	}
	var problem string
	switch s.cl.Source {
	case FromString:
		s.program, s.source = s.cl.Command, "string"
		if env, ok := s.trust.UnwrapAs(s.program, s.cl.Params, s.dialect); ok {
			s.envelope, s.via = &env, env.Via
		} else if env, ok := s.harness(req); ok {
			s.envelope, s.via = &env, env.Via
		}
	case FromFile:
		s.source = "file"
		s.program, problem = s.readScript(s.cl.Script)
	case FromStdin:
		s.source = "stdin"
		if s.cl.Interactive || isTerminal(s.o.Stdin) {
			s.source = "interactive"
			problem = "starts an interactive shell: what is typed into it is not checked"
		} else {
			s.program, problem = readProgram(s.o.Stdin, "standard input")
		}
	case Invalid:
		s.source = "none"
		problem = s.dialect.String() + " command line not understood: " + s.cl.Problem
	}
	if problem != "" {
		s.program = strings.Join(s.o.Argv, " ")
		return uninspected(req, problem), false
	}
	if s.via == "" {
		s.via = policy.AgentLabel(req.Agent)
	}
	req.Command = s.judged()
	if s.envelope != nil && s.envelope.Harness != "" {
		// The agent's own start-up command: no model command in it, so
		// nothing to judge, ask about or learn from.
		return policy.Result{Command: req.Command, Agent: req.Agent, Risk: policy.Safe, Decision: policy.Allow,
			Reasons: []string{fmt.Sprintf("%s's own start-up command (%s), recognised by its exact shape", s.envelope.Via, s.envelope.Harness)}}, true
	}
	res := engine.Evaluate(req)
	if s.envelope != nil && !s.envelope.Holds(res) {
		// The payload may set a variable the envelope's own plumbing reads
		// after it (Gemini's trap writes to "$_bgpids_file"): judge the
		// program as written, wrapper and all.
		via := s.envelope.Via
		s.envelope = nil
		req.Command = s.judged()
		res = engine.Evaluate(req)
		res = addReason(req.Policy, res, fmt.Sprintf("the command sets a variable %s's wrapper uses after it, so the wrapper is judged with it", via))
	}
	if s.envelope != nil && s.envelope.Shell != "" && isExecgate(s.envelope.Shell) {
		// The envelope execs this shim again with the payload, which
		// judges it there: asking here too would ask twice.
		res = policy.Result{Command: req.Command, Agent: req.Agent, Risk: policy.Safe, Decision: policy.Allow,
			Reasons: []string{"the payload is judged by the execgate shim the envelope runs"}}
	}
	for _, reason := range s.startupReasons() {
		res = addReason(req.Policy, res, reason)
	}
	return res, true
}

// judged is the command the policy judges, approvers see and "allow
// always" learns from: an envelope's payload, else the whole program. An
// agent's start-up command is named for the audit log instead (its whole
// text is the event's envelope).
func (s *session) judged() string {
	switch {
	case s.envelope != nil && s.envelope.Harness != "":
		return s.envelope.Via + " start-up: " + s.envelope.Harness
	case s.envelope != nil:
		return s.envelope.Payload
	}
	return s.program
}

// harness recognises the agent's own start-up commands (policy.Trust.Harness)
// for the agent the environment names. Not when anything runs before the
// program unseen (BASH_ENV), nor when the policy refuses everything: those
// are judged as any program.
func (s *session) harness(req policy.Request) (policy.Envelope, bool) {
	if len(s.startupReasons()) > 0 || req.Policy.Security == config.SecurityDeny {
		return policy.Envelope{}, false
	}
	return s.trust.HarnessAs(s.program, s.cl.Params, req.Agent, s.dialect)
}

// ownHook recognises execgate's own hook command, `'/path/to/execgate'
// hook AGENT`, and returns the argv to run it with: this very binary,
// resolved (nil when the program is anything else): the CLI binary,
// execgate, which the lean execgate-shell runs beside. Gemini CLI runs its
// hooks with the bash on its PATH, which is this shim when the user puts
// the shims first: judged like a command, the hook would be refused, and an
// agent whose hook fails runs the tool anyway. Only the exact command
// counts: one simple command of literal words, nothing run before it unseen
// (BASH_ENV), and a path that names this binary outside /proc (where
// /proc/self/exe is execgate to the shim but bash to bash). The hook runs as
// this binary, never through bash, so whatever the path names to bash does
// not matter; it reads the request on its standard input and answers it.
func (s *session) ownHook() []string {
	// Every command passes here: a word check first, so that only a
	// program that could be the hook is parsed a second time.
	if s.cl.Source != FromString || !strings.Contains(s.cl.Command, " hook ") || len(s.cl.Params) > 0 ||
		len(s.cl.Command) > 4096 || len(s.startupReasons()) > 0 {
		return nil
	}
	argv, ok := literalCommand(s.cl.Command)
	if !ok || len(argv) != 3 || argv[1] != "hook" || !slices.Contains(hookproto.Names(), argv[2]) ||
		!filepath.IsAbs(argv[0]) || strings.HasPrefix(filepath.Clean(argv[0]), "/proc/") {
		return nil
	}
	cli, err := self.CLI()
	if err != nil {
		return nil
	}
	if named, err := filepath.EvalSymlinks(argv[0]); err != nil || named != cli {
		return nil
	}
	return []string{cli, "hook", argv[2]}
}

// literalCommand returns the words of src when it is one simple command of
// literal words (quotes allowed, nothing expanded), with no assignment,
// redirection or other statement.
func literalCommand(src string) ([]string, bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 {
		return nil, false
	}
	argv := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		lit, ok := policy.LiteralWord(w)
		if !ok {
			return nil, false
		}
		argv = append(argv, lit)
	}
	return argv, true
}

// isExecgate reports whether path is one of execgate's binaries (a shim
// link to one included).
func isExecgate(path string) bool {
	return filepath.IsAbs(path) && self.Is(path)
}

// startupReasons lists what bash runs before the program that the check
// cannot see.
func (s *session) startupReasons() []string {
	var out []string
	if s.dialect == policy.DialectZsh {
		return s.zshStartupReasons()
	}
	if env := s.getenv("BASH_ENV"); env != "" && !s.cl.Interactive {
		out = append(out, fmt.Sprintf("BASH_ENV=%s runs that file first, unchecked", env))
	}
	if s.cl.RCFile != "" && s.cl.Interactive {
		out = append(out, fmt.Sprintf("--rcfile %s runs that file first, unchecked", s.cl.RCFile))
	}
	return out
}

// readScript reads the script file bash would run: the operand itself, or,
// when it names no file in the current directory and has no slash, the
// first readable match on PATH, as bash looks it up.
func (s *session) readScript(name string) (string, string) {
	path := name
	if _, err := os.Stat(path); err != nil && !strings.Contains(name, "/") {
		for _, dir := range filepath.SplitList(s.getenv("PATH")) {
			if dir == "" {
				dir = "."
			}
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				path = p
				break
			}
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Sprintf("script %s cannot be read: %v", name, pathlessErr(err))
	}
	defer f.Close()
	return readProgram(f, "script "+name)
}

// readProgram reads a whole program, bounded by maxProgram.
func readProgram(r io.Reader, what string) (string, string) {
	b, err := io.ReadAll(io.LimitReader(r, maxProgram+1))
	if err != nil {
		return "", fmt.Sprintf("%s cannot be read: %v", what, pathlessErr(err))
	}
	if len(b) > maxProgram {
		return "", fmt.Sprintf("%s is larger than %d bytes", what, maxProgram)
	}
	return string(b), ""
}

func pathlessErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// uninspected is the verdict on a program the shim could not read ahead.
func uninspected(req policy.Request, problem string) policy.Result {
	return policy.Result{
		Command: req.Command, Agent: req.Agent, Risk: policy.NeedsReview, Opaque: true,
		Reasons: []string{problem}, Decision: policy.Decide(req.Policy, false, false),
	}
}

// addReason adds a needs-review reason found outside the program.
func addReason(p config.Policy, res policy.Result, reason string) policy.Result {
	res.Reasons = append(res.Reasons, reason)
	res.Risk = res.Risk.Max(policy.NeedsReview)
	res.Opaque = true // what runs is not all in the program
	if res.Decision == policy.Allow {
		res.Decision = policy.Decide(p, false, false)
	}
	return res
}

// loneLiteral reports whether the program is one simple command written
// without quotes, expansions or redirections, the case where bash itself
// execs the command without forking: nothing about it is worth waiting
// around to report.
func loneLiteral(res policy.Result) bool {
	if len(res.Segments) != 1 || res.Opaque {
		return false
	}
	seg := res.Segments[0]
	return seg.Argv != nil && !seg.Opaque && len(seg.Wrappers) == 0 &&
		strings.TrimSpace(res.Command) == strings.Join(seg.Argv, " ") && seg.Text == strings.Join(seg.Argv, " ")
}

func newID() string {
	// The id joins the lines of one command in the audit log; it is not a
	// secret. math/rand/v2's generator is seeded from the random bytes the
	// kernel gives every new process (AT_RANDOM), so it costs nothing
	// here, where getrandom(2) first sets up per-thread state and
	// crypto/rand its generator, in a process that runs one command.
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], rand.Uint64())
	return hex.EncodeToString(b[:6])
}

func isTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(int(f.Fd()))
}

// reraise ends this process with sig, as the command ended, so that the
// caller's wait status says "killed by sig" just as with bash. Only signals
// that the Go runtime turns into a plain death by that signal are re-raised
// (it prints a stack trace for SIGQUIT and ignores SIGPIPE, SIGUSR1 …);
// the others become exit 128+n, which is what a calling shell reports
// either way.
func reraise(sig syscall.Signal) {
	switch sig {
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL:
	default:
		return
	}
	signal.Reset(sig)
	syscall.Kill(os.Getpid(), sig)
	// The signal is delivered asynchronously; give it a moment.
	time.Sleep(100 * time.Millisecond)
}

// seconds formats a timeout for the agent: 60s, 1.5s.
func seconds(ms int) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + "s"
}

// zshStartupReasons lists what zsh runs before the program that the check
// cannot see and the user did not write: the .zshenv of a ZDOTDIR other
// than the home directory. ~/.zshenv and /etc/zshenv are the user's and
// the system's own, trusted as bash's start-up files are.
func (s *session) zshStartupReasons() []string {
	dir := s.getenv("ZDOTDIR")
	if dir == "" || filepath.Clean(dir) == filepath.Clean(s.getenv("HOME")) {
		return nil
	}
	return []string{fmt.Sprintf("ZDOTDIR=%s runs %s first, unchecked", dir, filepath.Join(dir, ".zshenv"))}
}

// dialectOf is the shell the shim was invoked as: zsh when argv[0]'s base
// name, less a login shell's leading '-', is zsh; bash otherwise (bash,
// sh, and `execgate sh`, whose argv[0] names no shell).
func dialectOf(argv []string, argv0FromShell bool) policy.Dialect {
	if len(argv) > 0 && !argv0FromShell && filepath.Base(strings.TrimPrefix(argv[0], "-")) == "zsh" {
		return policy.DialectZsh
	}
	return policy.DialectBash
}

// findShell is the real shell this invocation runs: zsh for a zsh shim
// (shell.path names the bash that bash shims run), else shell.path or the
// default bash.
func (s *session) findShell(configured string) (string, error) {
	if s.dialect == policy.DialectZsh {
		return interp.FindZsh()
	}
	return interp.FindShell(configured)
}

// leading returns reasons with first moved, or put, at the front.
func leading(reasons []string, first string) []string {
	out := append(make([]string, 0, len(reasons)+1), first)
	for _, r := range reasons {
		if r != first {
			out = append(out, r)
		}
	}
	return out
}
