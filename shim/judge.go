package shim

import (
	"context"
	"os"
	"time"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/denial"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/prompt"
)

// EventAllowed is the audit event of a command that was judged and allowed
// but that execgate does not run itself: an agent's hook answered "allow",
// or the interactive gate let a typed line through.
const EventAllowed = "exec.allowed"

// EventDeferred is the audit event of a command that needed a person when
// none could be asked, left to the agent's own prompt (Claude Code's
// "ask"): execgate did not decide it.
const EventDeferred = "exec.deferred"

// ByAgent is Event.DecidedBy for a decision left to the agent's prompt.
const ByAgent = "agent"

// JudgeOptions describe a command to decide on without running it, as an
// agent's pre-tool hook or the interactive gate asks.
type JudgeOptions struct {
	// Command is the command line as the model wrote it.
	Command string
	// Cwd is where it will run; "" means this process's directory.
	Cwd string
	// Workspace is the project the command is run for; "" means Cwd (see
	// policy.Request).
	Workspace string
	// Agent is the policy's agent id; "" means detected from the
	// environment, as the shim does.
	Agent string
	// Via names the program that sent the command ("Claude Code"); it is
	// shown to approvers and logged.
	Via string
	// Source is recorded in the audit log: "hook", "interactive".
	Source string
	// Getenv and Environ default to this process's.
	Getenv  func(string) string
	Environ []string
	// Asker asks a human. nil means the hub's approvers only: a hook runs
	// under the agent's own terminal interface, which owns the terminal.
	Asker prompt.Asker
	// Timeout, when positive, bounds the wait for a human below the
	// policy's timeoutMs: a hook must answer within the agent's budget.
	Timeout time.Duration
	// Defer leaves a command that needs a person, when nobody can be
	// asked, to the agent's own prompt instead of applying askFallback:
	// the Judgement is Unanswered and not Allow, and the audit log says
	// the agent decides.
	Defer bool
	// Stderr receives debug logging with EXECGATE_DEBUG=1; nil means
	// os.Stderr.
	Stderr *os.File
	// Confinable: the caller runs the command through this shim (a hook
	// that rewrites it, see cmd/execgate/hook_confine.go), which confines
	// it. A command whose needs fit the sandbox is then allowed, with
	// Judgement.Confined, instead of asking; the shim decides again, and
	// confines it, when it runs.
	Confinable bool
}

// Judgement is the decision on one command.
type Judgement struct {
	// Allow says whether the command may run.
	Allow bool
	// Unanswered is set when the policy wanted a human and nobody could be
	// asked (no approver, no terminal): Allow then follows askFallback,
	// and a caller that can defer to the agent's own prompt may do that
	// instead.
	Unanswered bool
	// TimedOut is set when the human did not answer in time; Allow then
	// follows askFallback.
	TimedOut bool
	// Risk and Reasons are the policy's grade and why.
	Risk    string
	Reasons []string
	// DecidedBy is ByPolicy, ByTTY, ByHub or ByFallback.
	DecidedBy string
	// ID names this decision in the audit log and the hub.
	ID string
	// Message is the one line a denial shows: "execgate: denied: …".
	Message string
	// Allowlisted lists patterns an "allow always" answer saved.
	Allowlisted []string
	// Confined: with JudgeOptions.Confinable, the command is allowed on
	// the condition that it runs through the shim, confined — its needs
	// fit the sandbox (DecidedBy ByConfined), or it is proven safe and the
	// shim confines it to what its model needs.
	Confined bool
}

// Judge decides whether command may run under the user's policy, asking a
// human when the policy says so, exactly as the shim would before running
// it, and records the decision in the audit log. It never runs anything;
// like the shim, it takes a checkpoint of the workspace before letting a
// command that may write in it go (see checkpointForAgent).
// Whatever goes wrong (rules that do not load, a hub that dies while
// asking) ends in a refusal, never an allowance.
func Judge(ctx context.Context, o JudgeOptions) Judgement {
	s, cwd := judgeSession(o)
	s.cl = CommandLine{Source: FromString, Command: o.Command}
	s.via = o.Via

	cfg, configPath, _, unusable := s.loadConfig()
	agent := config.DetectAgent(o.Agent, s.getenv, s.o.Environ)
	if unusable != nil {
		v := s.refuseUnusable(unusable)
		j := Judgement{DecidedBy: v.by, ID: newID(), Message: v.message, Reasons: []string{unusable.Error()}}
		s.record(Event{
			Event: EventDenied, ID: j.ID, Pid: os.Getpid(), Agent: agent, Cwd: cwd, Command: o.Command, Via: o.Via,
			Source: o.Source, Reasons: j.Reasons, Decision: string(policy.Deny), DecidedBy: j.DecidedBy, Message: j.Message,
		})
		return j
	}
	req := policy.NewRequest(cfg, agent, cwd, s.getenv("HOME"), policy.OwnFiles(configPath))
	req.Workspace, req.Getenv = o.Workspace, s.getenv
	var hubRefused error
	s.hub, hubRefused = s.connectHub(ctx, cfg)
	if s.hub != nil {
		defer s.hub.Close()
	}
	if s.o.Asker == nil {
		s.o.Asker = prompt.Hub{Client: s.hub, Refused: hubRefused}
	}
	req.Policy = s.sessionPolicy(ctx, agent, req.Policy)
	if o.Timeout > 0 && time.Duration(req.Policy.TimeoutMs)*time.Millisecond > o.Timeout {
		req.Policy.TimeoutMs = int(o.Timeout.Milliseconds())
	}
	s.ev = Event{ID: newID(), Pid: os.Getpid(), Agent: agent, Cwd: cwd, Via: o.Via}

	res, _ := s.evaluate(req)
	req.Command = s.program
	s.ev.Command, s.ev.Source = s.program, o.Source
	s.ev.Risk, s.ev.Reasons = res.Risk.String(), res.Reasons

	confined := false
	if o.Confinable {
		var destroys []string
		confined, destroys = s.confinable(ctx, req, res)
		res.Reasons = append(destroys, res.Reasons...) // why it asks after all
		s.ev.Reasons = res.Reasons
	}
	var v verdict
	if confined && res.Decision != policy.Allow {
		v = verdict{allow: true, by: ByConfined}
	} else {
		v = s.decide(ctx, s.ev.ID, req, res, configPath)
	}
	// Allowed on the condition that it runs confined: the hook rewrites
	// it to run through the shim, which takes its checkpoint (or asks)
	// itself. Anything else the agent runs as it is, after the answer.
	rewritten := confined && v.allow && (v.by == ByConfined || res.Risk == policy.Safe)
	if !rewritten {
		v, res = s.checkpointForAgent(ctx, req, res, configPath, v, o.Defer && v.nobody)
		s.ev.Reasons = res.Reasons
	}
	j := Judgement{
		Allow: v.allow, Unanswered: v.nobody, TimedOut: v.timedOut,
		Risk: res.Risk.String(), Reasons: res.Reasons, DecidedBy: v.by, ID: s.ev.ID,
		Message: v.message, Allowlisted: v.added,
		Confined: rewritten,
	}
	ev := s.ev
	v.stamp(&ev)
	ev.Message, ev.Allowlisted = v.message, v.added
	if j.Confined {
		ev.Confined = "through the shim"
	}
	if o.Defer && v.nobody {
		j.Allow, j.DecidedBy, j.Message = false, ByAgent, ""
		ev.Event, ev.Decision, ev.DecidedBy, ev.Message = EventDeferred, string(policy.AskHuman), ByAgent, ""
		s.record(ev)
		return j
	}
	if v.allow {
		ev.Event, ev.Decision = EventAllowed, string(policy.Allow)
		<-s.touchAllowlist(cfg, agent, configPath, res)
	} else {
		ev.Event, ev.Decision = EventDenied, string(policy.Deny)
	}
	s.record(ev)
	return j
}

// judgeSession is the session Judge and Refuse work in, and the directory
// the command would run in.
func judgeSession(o JudgeOptions) (*session, string) {
	stderr := o.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	s := newSession(Options{Getenv: o.Getenv, Environ: o.Environ, Asker: o.Asker, Stderr: stderr})
	cwd := o.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			s.warnf("current directory: %v", err)
		}
	}
	return s, cwd
}

// Refuse records the refusal of a command that is refused without being
// judged (a hook input that cannot be read, a line that would disarm the
// interactive gate) and returns it: decided by policy, with reason as the
// one line "execgate: denied: REASON". risk is the grade to log ("" when
// nothing was graded, as for input that could not be read).
func Refuse(o JudgeOptions, risk, reason string) Judgement {
	s, cwd := judgeSession(o)
	j := Judgement{Risk: risk, DecidedBy: ByPolicy, ID: newID(), Reasons: []string{reason},
		Message: denial.Line(reason)}
	s.record(Event{
		Event: EventDenied, ID: j.ID, Pid: os.Getpid(), Agent: config.DetectAgent(o.Agent, s.getenv, s.o.Environ),
		Cwd: cwd, Command: o.Command, Via: o.Via, Source: o.Source, Risk: j.Risk, Reasons: j.Reasons,
		Decision: string(policy.Deny), DecidedBy: j.DecidedBy, Message: j.Message,
	})
	return j
}

// confinable reports whether the shim, given res to run, would run it
// confined: unasked when its needs fit the sandbox, or, proven safe, with
// what its model needs. Nothing planted in the workspace may be pending
// (the shim would ask then). destroys is the work it would destroy that
// keeps it from running confined (policy.Needs.Destroys).
func (s *session) confinable(ctx context.Context, req policy.Request, res policy.Result) (ok bool, destroys []string) {
	if !s.sandboxStatus().Supported() {
		return false, nil
	}
	if len(s.plantedSince(s.sandboxWorkspace(req.Cwd))) > 0 {
		return false, nil
	}
	needs := s.needsOf(ctx, req, res)
	if res.Decision == policy.Allow {
		return res.Risk == policy.Safe && needs.Within(), nil
	}
	return policy.CanConfine(req.Policy, res, needs, true), needs.Destroys
}
