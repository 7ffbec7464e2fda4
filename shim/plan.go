package shim

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/execgate/execgate/internal/denial"
	"github.com/execgate/execgate/interp"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/sandbox"
)

// A command leaves execgate's hands in one place, carryOut, by a plan
// decided once: which way it runs and with which grants.

// way is how an allowed command runs.
type way int

const (
	// wayShell runs the real shell as a child (its output capped, or
	// signals to relay).
	wayShell way = iota
	// wayShellExec makes this process the real shell.
	wayShellExec
	// wayDirect runs a lone simple command without bash, exactly as bash
	// would (see planDirect): a do-nothing builtin answered here, or the
	// program exec'd or run as a child.
	wayDirect
	// wayEngine runs the program in the interp engine, judging each
	// command as it runs.
	wayEngine
)

// plan is how an allowed command runs.
type plan struct {
	way way
	// run is the shell's invocation, output settings included.
	run interp.Options
	// direct is the lone command, for wayDirect.
	direct directRun
	// passthrough: the output goes straight to the caller's streams.
	passthrough bool
	// approved and bashOK are the engine's (see runEngine).
	approved, bashOK bool
	// grants are the sandbox's; nil runs the command unconfined (no
	// sandbox on this machine, or a person or the user's policy allowed
	// needs no sandbox can bound).
	grants *sandbox.Grants
	// writesWorkspace says whether the command may change the workspace:
	// false only when the sandbox holds it to reading it. A step that
	// must happen before the workspace changes (a checkpoint) hooks in
	// carryOut, knowing this.
	writesWorkspace bool
	// caches are the tools' cache directories made before it runs
	// confined (see caches.go).
	caches []string
	// runsCode: it may run code the analysis did not read (the
	// workspace's), which may leave processes running (leftovers.go).
	runsCode bool
	// enclosed: it runs held by the sandbox of the confined command that
	// started this shim (enclosed.go).
	enclosed bool
}

// carryOut runs the plan: confinement first, on every way, or nothing
// runs.
func (s *session) carryOut(ctx context.Context, pl plan, req policy.Request, configPath string, touched <-chan struct{}) (int, syscall.Signal) {
	if pl.way == wayDirect && pl.direct.builtin {
		pl.grants = nil // true, false and ':' run nothing: nothing to confine
	}
	if pl.grants != nil && pl.way == wayEngine && pl.grants.TempDir == "" {
		// The engine makes its process substitutions' FIFOs in TMPDIR,
		// which the commands it runs confined must reach.
		if dir, err := privateTemp(pl.grants.Workspace, req.Home); err == nil {
			g := *pl.grants
			g.TempDir = dir
			pl.grants = &g
		}
	}
	if pl.grants != nil {
		s.makeCaches(pl.caches, pl.grants.Workspace)
		helper := s.o.SandboxHelper
		if pl.way == wayEngine {
			// The engine starts each command with os/exec on a confined
			// thread, never through the helper: where only the helper
			// could make the private network, say there is none.
			helper = ""
		}
		enclosed := pl.grants.Loopback && s.enclosed(req.Home)
		if pl.runsCode && !enclosed {
			// (Inside a confined command, the enclosing one's group
			// holds it already.)
			s.group, s.groupWS = s.newGroup(pl.grants.Workspace), pl.grants.Workspace
			if s.group != nil {
				if sig := s.waitHeld(ctx, s.group); sig != 0 {
					// Stopped while it waited: not started, as bash
					// stopped before its exec.
					<-touched
					return s.finished(interp.Result{ExitStatus: 128 + int(sig), Signaled: true, Signal: sig}, nil)
				}
				defer s.watchHeld(s.group)()
			}
		}
		p, err := sandbox.PrepareWith(*pl.grants, sandbox.Options{Helper: helper, OnProxy: s.serveProxy(ctx, pl.grants),
			// Inside a confined command, its network is this one's too.
			Enclosed: enclosed, Group: s.group})
		if err != nil {
			s.endGroup(s.groupWS, s.group)
			<-touched
			return s.refuse(denial.Errorf("cannot confine this command: %v; it was not run", err))
		}
		defer p.Close()
		s.confinement = p
		// What it really gets: no private loopback where this process
		// has no way to make one.
		eff := p.Grants()
		pl.grants = &eff
		// Its private network is made by a child (sandbox.HelperArg):
		// exec'd in place it would have none. A group is entered by
		// starting a child into it: moving this process in (cgroup.procs)
		// costs the kernel a wait of ~10 ms, the child ~1 ms
		// (docs/BENCHMARKS.md).
		s.stays = p.NeedsChild() || s.group != nil
		if writesCode(pl) && len(s.planted) == 0 && s.codeRecord == nil {
			// What the code files are before it may change them (see
			// planted.go); after an unacknowledged change, the record
			// stays the one before it. A record plantedSince found true
			// a moment ago stands: written again, it would take in a
			// change made since.
			s.rememberCode(pl.grants.Workspace)
		}
		pl.run.Confine = p
		pl.run.Env = markConfined(s.markCheckpointed(pl.grants.Environ(environOr(pl.run.Env, s.o.Environ))), pl.grants.Workspace)
		if pl.way == wayDirect {
			pl.direct.env = markConfined(s.markCheckpointed(pl.grants.Environ(pl.direct.env)), pl.grants.Workspace)
		}
		s.ev.Confined = pl.grants.Summary()
	} else if (pl.way != wayDirect || !pl.direct.builtin) && !pl.enclosed && !s.startsInteractive() {
		// (Enclosed, it is confined and its group is the enclosing
		// command's; an interactive shell, approved whole, would hold
		// the workspace for as long as a person types.)
		release, err := s.holdUnconfined(ctx, req.Cwd)
		if err != nil {
			<-touched
			return s.refuse(err)
		}
		defer release()
	}
	if s.stays && pl.way == wayShellExec {
		pl.way, pl.run.MaxBytes = wayShell, 0
	}
	// What runs from here on may change what the workspace is.
	s.forgetWorkspace()
	switch pl.way {
	case wayEngine:
		status, sig := s.runEngine(ctx, pl.run, req, configPath, pl.approved, pl.bashOK)
		<-touched
		return s.afterRun(pl, req, status), sig
	case wayDirect:
		status, sig := s.runDirect(ctx, pl.run, pl.direct, pl.passthrough, touched)
		return s.afterRun(pl, req, status), sig
	case wayShellExec:
		<-touched
		return s.execOrRun(ctx, pl.run, false)
	}
	status, sig := s.runShell(ctx, pl.run, nil)
	<-touched
	return s.afterRun(pl, req, status), sig
}

// afterRun is what follows a run that returns here: the hint at a
// boundary hit, and, after an unconfined run (a person's or the policy's
// choice, not the sandbox's), the record of the workspace's code files
// brought up to date, so that what it changed there is not taken for
// code planted by a confined command.
func (s *session) afterRun(pl plan, req policy.Request, status int) int {
	ranNothing := pl.way == wayDirect && pl.direct.builtin
	if pl.grants == nil && !ranNothing && len(s.planted) == 0 && s.sandboxStatus().Supported() {
		ws := s.sandboxWorkspace(req.Cwd)
		if path, err := s.snapshotPath(ws); ws != "" && err == nil {
			if _, err := os.Stat(path); err == nil {
				s.rememberCode(ws)
			}
		}
	}
	return s.boundaryHint(pl, status)
}

// environOr is env, or this process's environment when env is nil (as
// interp.Options.Env means it).
func environOr(env, own []string) []string {
	if env != nil {
		return env
	}
	return own
}

// refuse records and prints a refusal made after the decision (the
// command cannot be run as decided).
func (s *session) refuse(err error) (int, syscall.Signal) {
	ev := s.ev
	ev.Event, ev.Decision, ev.Message = EventDenied, string(policy.Deny), err.Error()
	s.record(ev)
	fmt.Fprintln(s.o.Stderr, err.Error())
	return ExitDenied, 0
}
