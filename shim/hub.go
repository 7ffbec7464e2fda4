package shim

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/prompt"
)

// hubWait bounds each exchange with the hub that a command waits on before
// it runs (connecting, reading the session override): a hub that is up but
// stuck costs at most this, then the shim goes on without it.
const hubWait = 500 * time.Millisecond

// connectHub connects to the hub when one runs, or returns nil. With no
// hub the socket file is absent (or nothing listens on it) and this costs
// a stat or a refused connect. When something listens but the connection
// fails (hub.ErrCodeBusy: the uid's share of connections is used up; a
// refusal closed without a word; a stuck hello), refused says so: asking
// must then fail, and the command not run, rather than fall to
// askFallback as with no hub at all, or an agent could flood the hub to get
// its commands past it.
func (s *session) connectHub(ctx context.Context, cfg *config.Config) (c *hub.Client, refused error) {
	path, err := hub.SocketPath(cfg, s.getenv)
	if err != nil {
		s.warnf("hub: %v", err)
		return nil, nil
	}
	if _, err := os.Lstat(path); err != nil {
		return nil, nil
	}
	dctx, cancel := context.WithTimeout(ctx, hubWait)
	defer cancel()
	c, err = hub.Dial(dctx, hub.DialOptions{Socket: path, Token: cfg.Socket.Token, Role: hub.RoleRequester, Name: "shim"})
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, hub.ErrNoHub):
		return nil, nil // nothing listens: no hub, as documented
	}
	// Something listens but did not let this shim in: BUSY, a refusal
	// closed without a word, a hello that timed out, a bad token. Any of
	// them may be a flood meant to push commands to askFallback; asking
	// fails instead, and the command is refused.
	s.warnf("hub: %v", err)
	return nil, err
}

// hubOverride reads the session override an approver set for agent.
func (s *session) hubOverride(ctx context.Context, agent string) config.Override {
	if s.hub == nil {
		return config.Override{}
	}
	o, err := sessionOverride(ctx, s.hub, agent)
	if err != nil {
		s.warnf("hub: session override: %v", err)
	}
	return o
}

// sessionOverride asks the hub for agent's session override.
func sessionOverride(ctx context.Context, c *hub.Client, agent string) (config.Override, error) {
	sctx, cancel := context.WithTimeout(ctx, hubWait)
	defer cancel()
	o, err := c.Session(sctx, agent)
	if err != nil {
		return config.Override{}, err
	}
	if o.Elevated {
		return config.Elevated, nil
	}
	return config.Override{
		Security:    config.Security(o.Security),
		Ask:         config.Ask(o.Ask),
		AskFallback: config.Security(o.AskFallback),
	}, nil
}

// SessionPolicy is the policy the shim applies to agent's commands now:
// p with the running hub's session override for agent (set by an
// approver; it may loosen) and then the environment's (it may only
// tighten). notes say what changed p, for `execgate check` and `policy
// get` to show; none when nothing did.
func SessionPolicy(ctx context.Context, cfg *config.Config, getenv func(string) string, agent string, p config.Policy) (config.Policy, []string) {
	s := &session{getenv: getenv, log: slog.New(slog.DiscardHandler)}
	var notes []string
	if c, _ := s.connectHub(ctx, cfg); c != nil {
		o, err := sessionOverride(ctx, c, agent)
		c.Close()
		switch {
		case err != nil:
			notes = append(notes, "the hub's session override could not be read: "+err.Error())
		case o != config.Override{}:
			p = p.Loosened(o)
			notes = append(notes, "the hub's session override for "+agent+" applies: "+describeOverride(o))
		}
	}
	env, warnings := config.EnvOverride(getenv)
	notes = append(notes, warnings...)
	if env != (config.Override{}) {
		p = p.Tightened(env)
		notes = append(notes, "the environment tightens it: "+describeOverride(env))
	}
	return p, notes
}

func describeOverride(o config.Override) string {
	if o == config.Elevated {
		return "elevated (security=full, ask=off)"
	}
	var parts []string
	if o.Security != "" {
		parts = append(parts, "security="+string(o.Security))
	}
	if o.Ask != "" {
		parts = append(parts, "ask="+string(o.Ask))
	}
	if o.AskFallback != "" {
		parts = append(parts, "askFallback="+string(o.AskFallback))
	}
	return strings.Join(parts, " ")
}

// approverInfo puts who decided on the wire.
func approverInfo(a *prompt.Approver) *hub.ApproverInfo {
	if a == nil {
		return nil
	}
	return &hub.ApproverInfo{Uid: a.Uid, User: a.User, Kind: a.Kind, Host: a.Host, Name: a.Name}
}

// report tells the hub's subscribers what happened, without waiting.
func (s *session) report(ev Event) {
	if s.hub == nil {
		return
	}
	switch ev.Event {
	case EventStarted, EventFinished, EventDenied:
	default:
		return
	}
	err := s.hub.Report(hub.ExecReport{
		Event: ev.Event, ID: ev.ID, ApprovalID: ev.ApprovalID, Command: ev.Command, Cwd: ev.Cwd,
		AgentID: ev.Agent, Risk: ev.Risk, Reasons: ev.Reasons, DecidedBy: ev.DecidedBy,
		Approver: approverInfo(ev.Approver), Scope: ev.Scope, Allowlisted: ev.Allowlisted,
		ExitStatus: ev.ExitStatus, DurationMs: ev.DurationMs, Pid: ev.Pid, TimeMs: ev.Time.UnixMilli(),
	})
	if err != nil {
		s.log.Warn("hub report", "err", err)
	}
}
