package shim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/execgate/execgate/checkpoint"
	"github.com/execgate/execgate/internal/redact"
	"github.com/execgate/execgate/internal/state"
	"github.com/execgate/execgate/policy"
)

// checkpointWait bounds how long a command waits for another execgate
// checkpointing the same workspace.
const checkpointWait = 10 * time.Second

// checkpointFirst records the workspace right before an allowed command
// that may write in it starts, so that `execgate undo` can take back what
// it did; a command proven read-only pays nothing. When no checkpoint can
// be taken, the command is not let through silently: a person is asked,
// told that it could not be undone (fail closed). It returns true with an
// exit status when the command must not run.
func (s *session) checkpointFirst(ctx context.Context, req policy.Request, res policy.Result, configPath string) (int, bool) {
	if !res.MayWrite() {
		return 0, false
	}
	if root, _ := checkpoint.Workspace(req.Cwd); req.Cwd != "" && s.engine.NotAWorkspace(req, root) {
		// /, a home, /tmp: no workspace, so nothing there is granted as
		// one (writes ask on their own), and copying all of it would
		// copy the home's secrets into the state directory.
		return 0, false
	}
	err := s.takeCheckpoint(ctx, req.Cwd)
	if err == nil {
		return 0, false
	}
	s.warnf("checkpoint: %v", err)
	res.Decision = policy.AskHuman
	res.Reasons = append([]string{fmt.Sprintf("no checkpoint could be taken, so execgate undo could not take it back (%v)", err)}, res.Reasons...)
	v := s.decide(ctx, s.ev.ID, req, res, configPath)
	if v.allow {
		v.stamp(&s.ev)
		return 0, false
	}
	ev := s.ev
	ev.Event, ev.Message, ev.Decision = EventDenied, v.message, string(policy.Deny)
	v.stamp(&ev)
	s.record(ev)
	fmt.Fprintln(s.o.Stderr, v.message)
	return ExitDenied, true
}

func (s *session) takeCheckpoint(ctx context.Context, cwd string) error {
	if cwd == "" {
		return errors.New("the current directory is unknown")
	}
	dir, err := state.Dir(s.getenv)
	if err != nil {
		return err
	}
	st, err := checkpoint.Open(dir, cwd, checkpoint.Limits{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, checkpointWait)
	defer cancel()
	// Redacted as the audit log's copy is.
	_, err = st.Take(ctx, redact.String(s.ev.Command), s.ev.ID)
	return err
}
