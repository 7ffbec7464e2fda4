package approve

import (
	"context"
	"fmt"
	"github.com/execgate/execgate/checkpoint"

	"github.com/execgate/execgate/internal/display"
)

// Checkpoint is one checkpoint of a workspace, for the undo pane: the
// state before Command ran there, as checkpoint.Recent lists it.
type Checkpoint = checkpoint.Info

// undoRows bounds the undo pane.
const undoRows = 50

// checkpointsMsg brings the undo pane's rows.
type checkpointsMsg struct {
	rows []Checkpoint
	err  error
}

// undoMsg brings what an undo did, or with preview would do: the lines to
// show, the summary last.
type undoMsg struct {
	preview bool
	lines   []string
	err     error
}

// undoState is the undo pane's: the checkpoints, the selected one, and the
// confirmation under way.
type undoState struct {
	rows []Checkpoint
	err  string
	sel  int
	// confirm is set once the selected undo was previewed: its lines, and
	// whether it may go ahead (a refusal may not).
	confirm []string
	ok      bool
	busy    bool
}

// openUndo shows the undo pane and reads its rows.
func (m *model) openUndo() []cmd {
	m.mode, m.undo = modeUndo, undoState{}
	m.status = ""
	return []cmd{m.checkpointsCmd()}
}

// undoKey handles a key in the undo pane and its confirmation.
func (m *model) undoKey(k keyMsg) []cmd {
	u := &m.undo
	if m.mode == modeUndoConfirm {
		switch {
		case u.busy:
			return nil
		case (k.key == "y" || k.key == "Y") && u.ok && !k.burst:
			u.busy = true
			m.status = "undoing…"
			return []cmd{m.undoCmd(u.rows[u.sel], false)}
		case k.key == "y" || k.key == "Y":
			if k.burst {
				m.status = "ignored keys that came all at once (a paste?): press y on its own"
				return nil
			}
		}
		m.mode, u.confirm = modeUndo, nil
		m.status = "undo cancelled: nothing changed"
		return nil
	}
	switch k.key {
	case "up", "k":
		u.sel = max(u.sel-1, 0)
	case "down", "j":
		u.sel = min(u.sel+1, max(len(u.rows)-1, 0))
	case "enter", "u", "U":
		if u.busy || u.sel >= len(u.rows) {
			return nil
		}
		if k.burst {
			m.status = "ignored keys that came all at once (a paste?): press one key at a time"
			return nil
		}
		u.busy = true
		m.status = "checking what the undo would change…"
		return []cmd{m.undoCmd(u.rows[u.sel], true)}
	case "q", "Q", "ctrl+c", "ctrl+d":
		m.quit = true
	default:
		m.mode = modeList
	}
	return nil
}

// undoUpdate takes the undo pane's messages.
func (m *model) undoUpdate(msg any) []cmd {
	u := &m.undo
	switch msg := msg.(type) {
	case checkpointsMsg:
		u.rows, u.err = msg.rows, ""
		if msg.err != nil {
			u.err = msg.err.Error()
		}
		if len(u.rows) > undoRows {
			u.rows = u.rows[:undoRows]
		}
		u.sel = min(u.sel, max(len(u.rows)-1, 0))
	case undoMsg:
		u.busy = false
		if m.mode != modeUndo && m.mode != modeUndoConfirm {
			return nil // the pane was left meanwhile
		}
		if msg.preview {
			m.mode, u.confirm, u.ok = modeUndoConfirm, msg.lines, msg.err == nil
			if msg.err != nil {
				u.confirm = []string{"refused: " + msg.err.Error()}
			}
			m.status = ""
			return nil
		}
		m.mode, u.confirm = modeUndo, nil
		if msg.err != nil {
			m.status = "undo failed: " + msg.err.Error()
		} else if len(msg.lines) > 0 {
			m.status = msg.lines[len(msg.lines)-1]
		}
		return []cmd{m.checkpointsCmd()}
	}
	return nil
}

// checkpointsCmd reads the undo pane's rows.
func (m *model) checkpointsCmd() cmd {
	read := m.o.Checkpoints
	return cmd{"checkpoints", func(ctx context.Context) any {
		if read == nil {
			return checkpointsMsg{err: fmt.Errorf("no checkpoints to read")}
		}
		rows, err := read(ctx)
		return checkpointsMsg{rows: rows, err: err}
	}}
}

// undoCmd undoes c, or previews it.
func (m *model) undoCmd(c Checkpoint, preview bool) cmd {
	undo := m.o.Undo
	return cmd{"undo", func(ctx context.Context) any {
		if undo == nil {
			return undoMsg{preview: preview, err: fmt.Errorf("undo is not available here")}
		}
		lines, err := undo(ctx, c.Root, c.Seq, preview)
		return undoMsg{preview: preview, lines: lines, err: err}
	}}
}

// undoBody is the undo pane: recent checkpoints, newest first, and the
// confirmation of the selected one's undo.
func (m *model) undoBody() []block {
	u := &m.undo
	if u.err != "" {
		return []block{{rows: []line{plain("  cannot read the checkpoints: " + display.Escape(u.err))}}}
	}
	if len(u.rows) == 0 {
		return []block{{rows: []line{plain("  no checkpoints yet: commands that may write a workspace are checkpointed before they run")}}}
	}
	var blocks []block
	for i, c := range u.rows {
		sel := i == u.sel
		marker, style := "  ", ""
		if sel {
			marker, style = "> ", sgrBold
		}
		changed := "pending"
		if c.Changes >= 0 {
			changed = fmt.Sprintf("%d changed", c.Changes)
		}
		b := block{sel: sel, rows: []line{{
			{fmt.Sprintf("%s%s  #%-4d %-10s ", marker, c.Time.Local().Format("01-02 15:04:05"), c.Seq, changed), style},
			{display.Escape(summaryLine(c.Command)), style},
		}}}
		if sel {
			b.rows = append(b.rows, plain("      in "+display.Escape(c.Root)))
			if m.mode == modeUndoConfirm {
				for _, l := range u.confirm {
					b.rows = append(b.rows, line{{"      " + display.Escape(l), sgrYellow}})
				}
				if u.ok {
					b.rows = append(b.rows, line{{"      y: undo it · any other key: back", sgrBold}})
				}
			}
		}
		blocks = append(blocks, b)
	}
	return blocks
}
