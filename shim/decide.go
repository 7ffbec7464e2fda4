package shim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/denial"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/interp"
	"github.com/execgate/execgate/pattern"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/prompt"
	"mvdan.cc/sh/v3/syntax"
)

// verdict is the final word on one program.
type verdict struct {
	allow      bool
	by         string   // ByPolicy, ByTTY, ByHub, ByFallback
	approvalID string   // set when someone was asked
	message    string   // the one line shown on denial
	added      []string // patterns "allow always" saved
	nobody     bool     // a human was wanted and nobody could be asked
	timedOut   bool     // a human was asked and did not answer in time
	// approver is who answered, when a person did; scope is "once" or
	// "always" for a person's allow.
	approver *prompt.Approver
	scope    string
}

// Scopes of a person's allow, for Event.Scope.
const (
	ScopeOnce   = "once"
	ScopeAlways = "always"
)

// settings are the shim's own configuration: the shell and the output cap.
type settings struct {
	shellPath, engine                  string
	maxBytes, tailBytes, spillMaxBytes int64
}

func defaultSettings() settings {
	return settings{
		maxBytes:      interp.DefaultMaxBytes,
		tailBytes:     interp.DefaultTailBytes,
		spillMaxBytes: interp.DefaultSpillMaxBytes,
	}
}

// loadConfig reads the configuration. A missing file means the built-in
// defaults. A file that exists but cannot be used is returned as unusable:
// the caller refuses every command that needs the policy (the Config is
// then config.Load's strictest one, for a caller that would not). Warnings
// go to the audit log.
func (s *session) loadConfig() (cfg *config.Config, path string, set settings, unusable *config.UnusableError) {
	path = config.ConfigPath("", s.getenv)
	cfg, _, warnings, err := config.Load(path)
	if err != nil {
		s.warnf("%v", err)
		var ok bool
		if unusable, ok = config.AsUnusable(err); !ok {
			unusable = &config.UnusableError{Path: path, Err: err}
		}
	}
	for _, w := range warnings {
		s.warnf("config %s: %s", path, w)
	}
	set = defaultSettings()
	set.shellPath, set.engine = cfg.Shell.Path, cfg.Shell.Engine
	set.output(cfg.Output)
	return cfg, path, set, unusable
}

// output applies an output section (config.Config.OutputFor) over the
// defaults.
func (set *settings) output(o config.OutputConfig) {
	for _, f := range []struct {
		dst *int64
		src *int64
	}{
		{&set.maxBytes, o.MaxBytes},
		{&set.tailBytes, o.TailBytes},
		{&set.spillMaxBytes, o.SpillMaxBytes},
	} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if set.maxBytes > 0 && set.tailBytes > set.maxBytes {
		set.tailBytes = set.maxBytes // a small maxBytes with the default tail
	}
}

// refuseUnusable is the verdict on any command under a configuration that
// cannot be used: the one line that says which file, what is wrong and what
// to do.
func (s *session) refuseUnusable(u *config.UnusableError) verdict {
	return verdict{by: ByPolicy, message: u.Refusal(s.getenv("HOME"))}
}

// decide turns the policy's decision on req.Command into a verdict, asking
// a human when the policy says so (the question is named id) and applying
// askFallback when nobody answers.
func (s *session) decide(ctx context.Context, id string, req policy.Request, res policy.Result, configPath string) verdict {
	p := req.Policy
	switch res.Decision {
	case policy.Allow:
		return verdict{allow: true, by: ByPolicy}
	case policy.AskHuman:
	default:
		// Deny, or anything this version does not know: fail closed.
		return verdict{by: ByPolicy, message: denial.New(denyReason(req, res)).WithHint(refusedHint(req, res)).Error()}
	}

	pr := prompt.Request{
		ID: id, Command: req.Command, Via: s.via, Cwd: req.Cwd, Agent: req.Agent,
		Risk: res.Risk.String(), Reasons: res.Reasons,
		Timeout: time.Duration(p.TimeoutMs) * time.Millisecond,
	}
	if len(pr.Reasons) == 0 {
		pr.Reasons = []string{notCovered(res)}
	}
	pr.Proposals = s.proposals(res)
	// A signal while the prompt is up must restore the terminal first.
	askCtx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	ans, err := s.o.Asker.Ask(askCtx, pr)
	interrupted := askCtx.Err() != nil && ctx.Err() == nil
	stop()
	v := verdict{approvalID: id, by: ans.By}
	switch {
	case err != nil && (interrupted || ctx.Err() != nil):
		v.by, v.message = ByPolicy, denial.Line("interrupted while waiting for approval")
		return v
	case err != nil && !errors.Is(err, prompt.ErrUnavailable):
		// A channel broke while asking (the hub died, the terminal went
		// away) and no other answered: fail closed, whatever askFallback
		// says, so that a crash is never read as permission.
		s.warnf("ask: %v", err)
		v.by = ByFallback
		v.message = denial.Errorf("%s (needs approval; asking failed: %s)", denyReason(req, res), err).Error()
		return v
	case err != nil:
		v.by, v.nobody = ByFallback, true
		if fallbackAllows(p, res) {
			v.allow = true
			return v
		}
		v.message = denial.Errorf("%s (needs approval; nobody to ask; askFallback=%s)", denyReason(req, res), p.AskFallback).WithHint(s.proceedHint(req, res)).Error()
		return v
	case ans.TimedOut:
		v.by, v.timedOut = ByFallback, true
		if fallbackAllows(p, res) {
			v.allow = true
			return v
		}
		v.message = denial.Errorf("approval timed out after %s (askFallback=%s)", seconds(p.TimeoutMs), p.AskFallback).WithHint(s.proceedHint(req, res)).Error()
		return v
	}
	if v.by == "" {
		v.by = ByTTY
	}
	v.approver = ans.Approver
	if v.by == ByTTY && v.approver == nil {
		v.approver = localApprover()
	}
	switch ans.Decision {
	case prompt.AllowOnce:
		v.allow, v.scope = true, ScopeOnce
	case prompt.AllowAlways:
		v.allow, v.scope = true, ScopeAlways
		v.added = s.allowAlways(ctx, req, configPath, res, ans.Patterns)
	default:
		v.message = refusedLine(v.by, ans.Message)
	}
	return v
}

// proceedHint says how a person gets a command that needed approval to run:
// approve it from `execgate approve` when it comes again, or allow it ahead
// with the pattern "allow always" would save (when one describes it).
func (s *session) proceedHint(req policy.Request, res policy.Result) string {
	hint := "to approve it, run `execgate approve` in another terminal and run it again"
	if s.engine == nil {
		return hint
	}
	var patterns []string
	for _, seg := range res.Segments {
		if seg.Covered {
			continue
		}
		p := s.engine.Suggest(seg)
		if p == "" {
			return hint // part of it no pattern covers: only a person can
		}
		q, err := syntax.Quote(p, syntax.LangBash)
		if err != nil {
			return hint
		}
		if !slices.Contains(patterns, q) {
			patterns = append(patterns, q)
		}
	}
	if len(patterns) == 0 {
		return hint
	}
	agent := ""
	if req.Agent != "" && req.Agent != config.DefaultAgent {
		agent = " --agent " + req.Agent
	}
	allows := make([]string, len(patterns))
	for i, q := range patterns {
		allows[i] = "execgate" + agent + " allow " + q
	}
	return hint + "; or allow it ahead: " + strings.Join(allows, " && ")
}

// refusedHint says how to proceed after a refusal by policy: a denylist
// entry or security=deny is the user's own rule, which only they change.
func refusedHint(req policy.Request, res policy.Result) string {
	for _, seg := range res.Segments {
		if seg.Denylist != "" {
			return "your denylist refuses it; to change that: execgate config edit"
		}
	}
	if req.Policy.Security == config.SecurityDeny {
		agent := ""
		if req.Agent != "" && req.Agent != config.DefaultAgent {
			agent = "--agent " + req.Agent + " "
		}
		return "to change that: execgate " + agent + "policy set security=allowlist"
	}
	return ""
}

// refusedLine is the refusal of a human's deny; the approver's message,
// when they wrote one, is what the agent most needs to read.
func refusedLine(by, message string) string {
	if message != "" {
		return denial.Errorf("refused by the user (%s): %s", by, message).Error()
	}
	return denial.Errorf("refused by the user (%s)", by).Error()
}

// fallbackAllows applies askFallback when nobody answered.
func fallbackAllows(p config.Policy, res policy.Result) bool {
	switch p.AskFallback {
	case config.SecurityFull:
		return true
	case config.SecurityAllowlist:
		return res.Satisfied()
	}
	return false
}

// denyReason is the REASON in "execgate: denied: REASON": the one thing the
// agent most needs to know, on one line.
func denyReason(req policy.Request, res policy.Result) string {
	for _, seg := range res.Segments {
		if seg.Denylist != "" {
			return fmt.Sprintf("matches denylist pattern %q", seg.Denylist)
		}
	}
	if req.Policy.Security == config.SecurityDeny {
		return fmt.Sprintf("security=deny for agent %s", req.Agent)
	}
	reason := notCovered(res)
	if len(res.Reasons) > 0 {
		reason = res.Reasons[0]
		if n := len(res.Reasons) - 1; n > 0 {
			reason += fmt.Sprintf(" (and %d more)", n)
		}
	}
	if req.Policy.Ask == config.AskOff && req.Policy.Security != config.SecurityFull {
		reason += " (ask=off)"
	}
	return reason
}

// notCovered explains an ask without reasons: a safe command that the
// policy still wants approved.
func notCovered(res policy.Result) string {
	for _, seg := range res.Segments {
		if !seg.Covered {
			return fmt.Sprintf("%s is not on the allowlist", display.Flatten(seg.Text, maxShown))
		}
	}
	return "approval required for every command (ask=always)"
}

// maxShown bounds command text quoted in a reason.
const maxShown = 300

// allowAlways saves, for each segment that needed approval, the scope the
// person chose (chosen, one per proposal; nil: the narrowest), so that the
// command runs without asking next time, and returns the patterns added.
// Only a pattern the engine proposes for that very segment is ever saved:
// a choice that is not one (a buggy or hostile approver, proposals that
// changed) is refused with a warning, never widened into a grant. A
// failure is logged, not fatal: the human did approve this run.
func (s *session) allowAlways(ctx context.Context, req policy.Request, configPath string, res policy.Result, chosen []string) []string {
	if s.engine == nil {
		return nil
	}
	targets := alwaysTargets(res)
	if chosen != nil && len(chosen) != len(targets) {
		s.warnf("allow always: %d scopes chosen for %d segments; nothing saved", len(chosen), len(targets))
		return nil
	}
	var patterns []string
	for i, seg := range targets {
		p, err := s.scopeFor(seg, chosen, i)
		if err != nil {
			s.warnf("allow always: %v", err)
			continue
		}
		if p != "" && !slices.Contains(patterns, p) {
			patterns = append(patterns, p)
		}
	}
	return s.saveAlways(ctx, req, configPath, patterns)
}

// scopeFor is the pattern to save for seg: the i-th choice when there are
// choices ("" when the person chose none), else the narrowest proposal.
func (s *session) scopeFor(seg *policy.Segment, chosen []string, i int) (string, error) {
	proposals := s.engine.Proposals(seg)
	shown := display.Flatten(seg.Text, maxShown)
	switch {
	case chosen != nil && chosen[i] == "":
		return "", nil
	case chosen != nil && !slices.Contains(proposals, chosen[i]):
		return "", fmt.Errorf("%q was not proposed for %q; nothing saved for it", display.Flatten(chosen[i], maxShown), shown)
	case chosen != nil:
		return chosen[i], nil
	case len(proposals) == 0:
		return "", fmt.Errorf("no pattern describes %q; it will be asked again", shown)
	}
	return proposals[0], nil
}

// proposals tells approvers, per segment "allow always" would cover, its
// reasons and the scopes it may save, narrowest first (none: it will be
// asked again).
func (s *session) proposals(res policy.Result) []prompt.Proposal {
	if s.engine == nil {
		return nil
	}
	var out []prompt.Proposal
	for _, seg := range alwaysTargets(res) {
		p := prompt.Proposal{Text: seg.Text}
		for _, r := range seg.Reasons {
			p.Reasons = append(p.Reasons, r.Text)
		}
		p.Patterns = s.engine.Proposals(seg)
		out = append(out, p)
	}
	return out
}

// alwaysTargets are the segments "allow always" saves a pattern for: those
// that needed approval, or with ask=always those the allowlist does not
// already hold.
func alwaysTargets(res policy.Result) []*policy.Segment {
	targets := make([]*policy.Segment, 0, len(res.Segments))
	for _, seg := range res.Segments {
		if !seg.Covered {
			targets = append(targets, seg)
		}
	}
	if len(targets) == 0 {
		// Everything was covered and asked anyway (ask=always): remember
		// what the allowlist does not already hold.
		for _, seg := range res.Segments {
			if seg.Allowlist == "" {
				targets = append(targets, seg)
			}
		}
	}
	return targets
}

// saveAlways adds patterns to agent's allowlist and returns those added.
func (s *session) saveAlways(ctx context.Context, req policy.Request, configPath string, patterns []string) []string {
	agent := req.Agent
	if len(patterns) == 0 {
		return nil
	}
	now := s.now()
	var added []string
	uctx, cancel := context.WithTimeout(ctx, persistWait)
	defer cancel()
	store := config.Store{Path: configPath}
	_, err := store.Update(uctx, "", func(d *config.Document) error {
		added = added[:0]
		for _, p := range patterns {
			e := pattern.Entry{Pattern: p, Source: "shim", LastUsedAt: now.UnixMilli(),
				LastUsedCommand: display.Cut(req.Command, 1000), LastResolvedPath: resolvedPath(p)}
			if d.AddAllowlist(agent, e) {
				added = append(added, p)
			}
		}
		return nil
	})
	if err != nil {
		s.warnf("allow always: %v", err)
		return nil
	}
	return added
}

// touchAllowlist records, in the background, that allowlist entries let
// this command through. The returned channel closes when that is done; it
// never takes longer than touchWait for the lock, and a busy or broken
// configuration only costs a warning.
func (s *session) touchAllowlist(cfg *config.Config, agent, configPath string, res policy.Result) <-chan struct{} {
	done := make(chan struct{})
	type use struct{ pattern, command, path string }
	var uses []use
	for _, seg := range res.Segments {
		if seg.Allowlist == "" || len(seg.Argv) == 0 {
			continue
		}
		uses = append(uses, use{seg.Allowlist, display.Cut(seg.Text, 1000), resolvedPath(seg.Argv[0])})
	}
	if len(uses) == 0 {
		close(done)
		return done
	}
	now := s.now()
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), touchWait)
		defer cancel()
		store := config.Store{Path: configPath}
		_, err := store.Update(ctx, "", func(d *config.Document) error {
			for _, u := range uses {
				d.Touch(agent, u.pattern, u.command, u.path, now)
			}
			return nil
		})
		if err != nil {
			s.log.Warn("record allowlist use", "err", err)
		}
	}()
	return done
}

// resolvedPath is the absolute path of the program a pattern or argv[0]
// names, as the allowlist matcher resolves it.
func resolvedPath(program string) string {
	program, _, _ = strings.Cut(program, " ")
	if strings.Contains(program, "/") {
		if abs, err := filepath.Abs(program); err == nil {
			return abs
		}
		return program
	}
	return policy.LookPath(program)
}

// localApprover is the person at this terminal: the shim's own user.
func localApprover() *prompt.Approver {
	a := &prompt.Approver{Uid: os.Getuid(), Kind: prompt.KindTTY}
	if u, err := user.Current(); err == nil {
		a.User = u.Username
	}
	a.Host, _ = os.Hostname()
	return a
}

// stamp records on ev who decided v and how.
func (v verdict) stamp(ev *Event) {
	ev.DecidedBy, ev.ApprovalID, ev.Approver, ev.Scope = v.by, v.approvalID, v.approver, v.scope
}
