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

// ".." climbs from where a link leads, as the kernel climbs: rm
// link/../f deletes the f beside the link's target, not the one beside
// the link. The loss is that file — here a committed file's uncommitted
// changes, while the f beside the link is committed (or a scratch file).
func TestLossClimbsFromTheLinksTarget(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "keep", "sub"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "keep", "clean.txt"), []byte("k\n"), 0o600))
	runGit(t, ws, home, "add", "keep/clean.txt")
	runGit(t, ws, home, "commit", "-qm", "keep")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "keep", "clean.txt"), []byte("work\n"), 0o600))
	require.NoError(t, os.Symlink("keep/sub", filepath.Join(ws, "link")))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "repro.py"), []byte("p\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "keep", "repro.py"), []byte("p\n"), 0o600))
	for _, c := range []struct{ command, loss string }{
		{"rm link/../clean.txt", "keep/clean.txt"},
		{"cd link && rm -f ../clean.txt", "keep/clean.txt"},
		{"echo x > link/../clean.txt", "keep/clean.txt"},
		{"rm link/../repro.py", "keep/repro.py"},
		{"cd link/.. && rm clean.txt", "clean.txt"}, // cd climbs as written (cd -L)
		{"rm -f link/../*.txt", "keep/*.txt"},
		{"cd keep/sub && rm -f ../../*.pyc", "*.pyc"},
	} {
		res := e.Evaluate(Request{Command: c.command, Cwd: ws, Home: home})
		var losses []string
		for _, s := range res.Segments {
			for _, l := range s.Losses {
				losses = append(losses, l.Path)
			}
		}
		assert.Equal(t, []string{filepath.Join(ws, c.loss)}, losses, c.command)
	}
	res := e.Evaluate(Request{Command: "rm link/../clean.txt", Cwd: ws, Home: home})
	w := WorkLossOf(context.Background(), res, ws, home, nil, time.Now())
	assert.Empty(t, w.Undoable)
	assert.Len(t, w.Ask, 1, "the changes to keep/clean.txt")
}
