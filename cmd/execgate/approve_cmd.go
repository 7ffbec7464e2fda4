package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/approve"
	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/shim"
)

// Bounds on the approver's history pane.
const (
	pastRows  = 200
	pastSince = 30 * 24 * time.Hour
)

// pastDecisions reads the newest decisions from the audit log, newest
// first, for the approver's history pane.
func pastDecisions(g *globals, now time.Time) ([]approve.Past, error) {
	path, err := shim.DefaultAuditPath(g.getenv)
	if err != nil {
		return nil, err
	}
	var rows []approve.Past
	l := shim.AuditLog{Path: path}
	err = l.Read(now.Add(-pastSince), func(ev shim.Event, _ []byte) error {
		switch ev.Event {
		case shim.EventStarted, shim.EventDenied, shim.EventAllowed:
		default:
			return nil
		}
		rows = append(rows, approve.Past{Time: ev.Time, Agent: ev.Agent, Risk: ev.Risk, Decision: ev.Decision,
			Scope: ev.Scope, Who: ev.Who(), Command: ev.Command, Saved: ev.Allowlisted, Message: ev.Message})
		if len(rows) > 2*pastRows {
			rows = slices.Delete(rows, 0, len(rows)-pastRows)
		}
		return nil
	})
	if len(rows) > pastRows {
		rows = rows[len(rows)-pastRows:]
	}
	slices.Reverse(rows)
	return rows, err
}

func newApproveCmd(g *globals) *cobra.Command {
	var noBell bool
	cmd := &cobra.Command{
		Use:   "approve [--no-bell]",
		Short: "Approve or deny agents' commands from this terminal as they come",
		Long: `approve lists the requests waiting in the hub, live: the command (escaped
as in the terminal prompt), cwd, agent, risk, reasons and the time left.

Keys: o or y allows once; a allows always, first choosing for each part of
the command what is saved (the exact command, or a wider pattern where one
is safe); d or n denies, m denies with a message the agent reads; up/down
or j/k move; f and r filter by agent and risk; h shows recent decisions
from the audit log; ? lists the keys; q or Ctrl-C quits. Quitting answers
nothing: pending requests stay for other approvers or run into their
timeout. A key arriving together with others (a paste) or right after the
selection changed by itself decides nothing. While the hub is down approve
keeps retrying.`,
		Args: noArgs("approve"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, inOK := g.stdin.(*os.File)
			out, outOK := g.stdout.(*os.File)
			if !inOK || !outOK {
				return errors.New("approve needs a terminal; in scripts use execgate pending, resolve and watch")
			}
			// Any way of ending restores the terminal.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			name := clientName(g, "approve")
			return approve.Run(ctx, in, out, approve.Options{
				Dial: func(ctx context.Context) (approve.Source, error) {
					c, _, err := dialAs(ctx, g, hub.DialOptions{Role: hub.RoleApprover, Name: name, Kind: hub.KindTUI})
					if err != nil {
						return nil, err
					}
					return c, nil
				},
				Name:        name,
				History:     func(context.Context) ([]approve.Past, error) { return pastDecisions(g, time.Now()) },
				Checkpoints: approveCheckpoints(g),
				Undo: func(ctx context.Context, root string, seq uint64, preview bool) ([]string, error) {
					return undoForApprover(ctx, g, root, seq, preview)
				},
				Bell:  !noBell,
				Color: g.getenv("NO_COLOR") == "" && g.getenv("TERM") != "dumb",
			})
		},
	}
	cmd.Flags().BoolVar(&noBell, "no-bell", false, "do not ring the terminal bell when a request arrives")
	return cmd
}
