package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/checkpoint"
	"github.com/execgate/execgate/internal/state"
)

// undoShown bounds the paths undo names one per line.
const undoShown = 20

func newUndoCmd(g *globals) *cobra.Command {
	var list bool
	var dir string
	cmd := &cobra.Command{
		Use:   "undo [ID] | undo --list",
		Short: "Take back what a command changed in the workspace, from the checkpoint taken before it ran",
		Long: `Before a command that may write in the workspace runs, the shim records
the workspace (a checkpoint). undo puts back the paths that command changed
— content, permissions, links, deleted and created files — as they were
before it ran; with no ID, the newest checkpoint's command.

Undoing an older command keeps what later commands changed on other paths
(a merge, and undo says so), and refuses, changing nothing, when later
commands changed the same paths: undo those first. An undo is checkpointed
too, so undo can itself be undone. Ignored files (git's rules; outside git,
node_modules and the like) are not covered.`,
		Example: "  execgate undo --list\n  execgate undo\n  execgate undo 12",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = wd
			}
			s, err := openCheckpoints(g, dir)
			if err != nil {
				return err
			}
			if list {
				if len(args) > 0 {
					return usagef("undo --list takes no ID")
				}
				return listCheckpoints(g, s)
			}
			var seq uint64
			if len(args) == 1 {
				if seq, err = strconv.ParseUint(args[0], 10, 64); err != nil || seq == 0 {
					return usagef("checkpoint ID %q is not a number (execgate undo --list shows them)", args[0])
				}
			}
			return undoCheckpoint(cmd.Context(), g, s, seq)
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the workspace's checkpoints, newest first")
	cmd.Flags().StringVar(&dir, "dir", "", "a directory of the workspace (default: the current one)")
	return cmd
}

func openCheckpoints(g *globals, dir string) (*checkpoint.Store, error) {
	sd, err := state.Dir(g.getenv)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return checkpoint.Open(sd, abs, checkpoint.Limits{})
}

func listCheckpoints(g *globals, s *checkpoint.Store) error {
	infos, err := s.List()
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		fmt.Fprintf(g.stdout, "execgate: no checkpoints of %s\n", s.Root)
		return nil
	}
	fmt.Fprintf(g.stdout, "checkpoints of %s, newest first:\n", s.Root)
	fmt.Fprintf(g.stdout, "%-6s %-19s %-8s %s\n", "ID", "TIME", "CHANGED", "COMMAND")
	for _, i := range infos {
		changed := "pending"
		if i.Changes >= 0 {
			changed = strconv.Itoa(i.Changes)
		}
		line := fmt.Sprintf("%-6s %-19s %-8s %s", i.ID(), i.Time.Local().Format(time.DateTime), changed, oneLineCommand(i.Command))
		if i.NotKept > 0 {
			line += fmt.Sprintf("  [%d files not kept]", i.NotKept)
		}
		fmt.Fprintln(g.stdout, line)
	}
	return nil
}

// oneLineCommand shows a command on one line, cut to a screen's width.
func oneLineCommand(c string) string {
	c = strings.ReplaceAll(c, "\n", `\n`)
	if r := []rune(c); len(r) > 100 {
		c = string(r[:100]) + "…"
	}
	return c
}

func undoCheckpoint(ctx context.Context, g *globals, s *checkpoint.Store, seq uint64) error {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	rep, err := s.Undo(ctx, seq)
	var conflict *checkpoint.ConflictError
	switch {
	case errors.As(err, &conflict):
		return lineError{"execgate: " + err.Error()}
	case errors.Is(err, checkpoint.ErrNoCheckpoint):
		return lineError{fmt.Sprintf("execgate: no checkpoint to undo in %s (commands that may write there are checkpointed before they run)", s.Root)}
	case err != nil && rep == nil:
		return err
	}
	for _, l := range rep.Paths(undoShown) {
		fmt.Fprintf(g.stdout, "  %s\n", l)
	}
	if err != nil {
		return err
	}
	// The same line the approvers show (checkpoint.Report.Summary).
	fmt.Fprintf(g.stdout, "execgate: %s\n", rep.Summary())
	return nil
}
