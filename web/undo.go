package web

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/execgate/execgate/checkpoint"
	"strconv"

	"github.com/execgate/execgate/internal/display"
)

// Checkpoint is one checkpoint of a workspace, for the undo view: the
// state before Command ran there, as checkpoint.Recent lists it.
type Checkpoint = checkpoint.Info

// checkpointRow is a checkpoint as the page shows it, escaped. The page
// names it back by Key: it only holds the escaped text of its workspace.
type checkpointRow struct {
	Key     string `json:"key"`
	TimeMs  int64  `json:"timeMs"`
	Root    string `json:"root"`
	Seq     uint64 `json:"seq"`
	Command string `json:"command"`
	Changes int    `json:"changes"`
}

// undoView is what an undo did, or would do: the lines execgate undo
// prints, escaped, the summary last.
type undoView struct {
	Lines []string `json:"lines"`
}

// checkpointKey names a checkpoint for the page.
func checkpointKey(root string, seq uint64) string {
	sum := sha256.Sum256([]byte(root))
	return fmt.Sprintf("%x-%d", sum[:12], seq)
}

// errNoUndo answers the undo view where the server was given no way to
// read checkpoints.
var errNoUndo = errors.New("undo is not available from this web approver")

// checkpoints lists the recent checkpoints for the page.
func (s *Server) checkpoints(ctx context.Context) ([]checkpointRow, error) {
	if s.o.Checkpoints == nil {
		return nil, errNoUndo
	}
	cps, err := s.o.Checkpoints(ctx)
	rows := make([]checkpointRow, 0, len(cps))
	for _, c := range cps {
		rows = append(rows, checkpointRow{
			Key: checkpointKey(c.Root, c.Seq), TimeMs: c.Time.UnixMilli(), Root: display.Escape(c.Root), Seq: c.Seq,
			Command: display.Clip(c.Command, historyCommand), Changes: c.Changes,
		})
	}
	return rows, err
}

// undo undoes, or with preview says what undoing would change, the
// checkpoint the page names by key, among those it may list.
func (s *Server) undo(ctx context.Context, key string, preview bool) (*undoView, error) {
	if s.o.Checkpoints == nil || s.o.Undo == nil {
		return nil, errNoUndo
	}
	cps, err := s.o.Checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range cps {
		if checkpointKey(c.Root, c.Seq) != key {
			continue
		}
		lines, err := s.o.Undo(ctx, c.Root, c.Seq, preview)
		if err != nil {
			return nil, err
		}
		v := &undoView{Lines: make([]string, 0, len(lines))}
		for _, l := range lines {
			v.Lines = append(v.Lines, display.Escape(l))
		}
		return v, nil
	}
	return nil, fmt.Errorf("no checkpoint %s among the recent ones (pruned, or the page is stale: reload the list)", strconv.Quote(key))
}
