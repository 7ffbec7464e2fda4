package main

import (
	"context"

	"github.com/execgate/execgate/approve"
	"github.com/execgate/execgate/checkpoint"
	"github.com/execgate/execgate/internal/state"
	"github.com/execgate/execgate/web"
)

// The approvers (execgate approve, execgate web) offer undo of recent
// checkpoints. They read the checkpoints and undo them here, as the user
// they run as, on this machine — not through the hub: an undo writes the
// user's workspace, which only a process of that user on the machine
// holding it can do, and the approvers already read the audit log the
// same way for their history. The hub's protocol, and what an approver
// connection may ask of it, are unchanged.

// approverCheckpoints is how many recent checkpoints an approver lists.
const approverCheckpoints = 50

// recentCheckpoints lists the newest checkpoints of the user's workspaces.
func recentCheckpoints(g *globals) ([]checkpoint.Info, error) {
	dir, err := state.Dir(g.getenv)
	if err != nil {
		return nil, err
	}
	return checkpoint.Recent(dir, approverCheckpoints)
}

// undoForApprover undoes (or previews) checkpoint seq of root exactly as
// execgate undo does there, and returns the lines execgate undo prints:
// the paths, then the summary.
func undoForApprover(ctx context.Context, g *globals, root string, seq uint64, preview bool) ([]string, error) {
	dir, err := state.Dir(g.getenv)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	rep, err := checkpoint.UndoIn(ctx, dir, root, seq, preview)
	if err != nil {
		return nil, err
	}
	return append(rep.Paths(undoShown), rep.Summary()), nil
}

// approveCheckpoints lists the recent checkpoints for the terminal
// approver.
func approveCheckpoints(g *globals) func(context.Context) ([]approve.Checkpoint, error) {
	return func(context.Context) ([]approve.Checkpoint, error) { return recentCheckpoints(g) }
}

// webCheckpoints lists the recent checkpoints for the web approver.
func webCheckpoints(g *globals) func(context.Context) ([]web.Checkpoint, error) {
	return func(context.Context) ([]web.Checkpoint, error) { return recentCheckpoints(g) }
}
