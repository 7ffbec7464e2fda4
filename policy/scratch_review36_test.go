package policy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file of the task's age with another name is no scratch file: writing
// it writes the other name's content too, and that name may lie outside
// the workspace, where no checkpoint keeps it. It asks, as any file git
// does not hold.
func TestScratchFileOfManyNamesAsks(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	other := filepath.Join(home, "notes.txt")
	require.NoError(t, os.WriteFile(other, []byte("mine\n"), 0o600))
	require.NoError(t, os.Link(other, filepath.Join(ws, "notes.txt")))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "repro.py"), []byte("p\n"), 0o600))
	for _, command := range []string{"echo y > notes.txt", "cp repro.py notes.txt", "rm notes.txt"} {
		res := e.Evaluate(Request{Command: command, Cwd: ws, Home: home})
		w := WorkLossOf(context.Background(), res, ws, home, nil, time.Now())
		assert.Empty(t, w.Undoable, command)
		assert.NotEmpty(t, w.Ask, command)
	}
}
