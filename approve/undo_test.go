package approve

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeUndo is the checkpoints of one workspace and the undos asked of it.
type fakeUndo struct {
	rows  []Checkpoint
	asked []string
}

func (f *fakeUndo) options() Options {
	return Options{
		Checkpoints: func(context.Context) ([]Checkpoint, error) { return f.rows, nil },
		Undo: func(_ context.Context, root string, seq uint64, preview bool) ([]string, error) {
			f.asked = append(f.asked, fmt.Sprintf("%s %d %v", root, seq, preview))
			if seq == 1 {
				return nil, errors.New("refused to undo checkpoint 1: later changes touch the same paths (a)")
			}
			if preview {
				return []string{"recreated b", "undo checkpoint 2 would restore 0, recreate 1 and remove 0 path"}, nil
			}
			return []string{"recreated b", "undid checkpoint 2: 0 restored, 1 recreated, 0 removed (execgate undo 3 takes this back)"}, nil
		},
	}
}

// run feeds the messages of cmds back into m, as Run does.
func run(t *testing.T, m *model, cmds []cmd) {
	t.Helper()
	for len(cmds) > 0 {
		c := cmds[0]
		cmds = append(cmds[1:], m.update(exec(t, c))...)
	}
}

// TestUndoPane: u lists the checkpoints; Enter shows what the undo would
// change and y does it; any other key, or a refusal, changes nothing.
func TestUndoPane(t *testing.T) {
	c := newClock()
	f := &fakeUndo{rows: []Checkpoint{
		{Root: "/w", Seq: 2, Time: c.t, Command: "rm b", Changes: -1},
		{Root: "/w", Seq: 1, Time: c.t, Command: "edit a", Changes: 1},
	}}
	m := connected(t, c, newFake(), f.options())
	run(t, m, m.update(keyMsg{key: "u"}))
	require.Equal(t, modeUndo, m.mode)
	assert.Contains(t, screen(m), "rm b")
	assert.Contains(t, screen(m), "edit a")

	run(t, m, m.update(keyMsg{key: "enter"}))
	require.Equal(t, modeUndoConfirm, m.mode)
	assert.Contains(t, screen(m), "would restore 0, recreate 1")
	run(t, m, m.update(keyMsg{key: "n"}))
	assert.Equal(t, modeUndo, m.mode)
	assert.Equal(t, []string{"/w 2 true"}, f.asked, "nothing undone")

	run(t, m, m.update(keyMsg{key: "enter"}))
	run(t, m, m.update(keyMsg{key: "y", burst: true}))
	assert.Equal(t, []string{"/w 2 true", "/w 2 true"}, f.asked, "a pasted y undoes nothing")
	run(t, m, m.update(keyMsg{key: "y"}))
	assert.Equal(t, "/w 2 false", f.asked[len(f.asked)-1])
	assert.Contains(t, m.status, "undid checkpoint 2")

	run(t, m, m.update(keyMsg{key: "j"}))
	run(t, m, m.update(keyMsg{key: "enter"}))
	require.Equal(t, modeUndoConfirm, m.mode)
	assert.Contains(t, screen(m), "refused: refused to undo checkpoint 1")
	assert.NotContains(t, screen(m), "y: undo it")
	n := len(f.asked)
	run(t, m, m.update(keyMsg{key: "y"}))
	assert.Len(t, f.asked, n, "a refused undo cannot be confirmed")
	assert.Equal(t, modeUndo, m.mode)
	run(t, m, m.update(keyMsg{key: "x"}))
	assert.Equal(t, modeList, m.mode)
}
