package shim

import (
	"context"
	"errors"
	"os"
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
// hub the socket file is absent and this costs one stat. When the hub runs
// but has no room for this connection (hub.ErrCodeBusy: the uid's share of
// connections is used up), refused says so: asking must then fail, and the
// command not run, rather than fall to askFallback as with no hub at all,
// or an agent could flood the hub to get its commands past it.
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
	var eb *hub.ErrorBody
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &eb) && eb.Code == hub.ErrCodeBusy:
		return nil, err
	case !errors.Is(err, hub.ErrNoHub):
		s.warnf("hub: %v", err)
	}
	return nil, nil
}

// hubOverride reads the session override an approver set for agent.
func (s *session) hubOverride(ctx context.Context, agent string) config.Override {
	if s.hub == nil {
		return config.Override{}
	}
	sctx, cancel := context.WithTimeout(ctx, hubWait)
	defer cancel()
	o, err := s.hub.Session(sctx, agent)
	if err != nil {
		s.warnf("hub: session override: %v", err)
		return config.Override{}
	}
	if o.Elevated {
		return config.Elevated
	}
	return config.Override{
		Security:    config.Security(o.Security),
		Ask:         config.Ask(o.Ask),
		AskFallback: config.Security(o.AskFallback),
	}
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
