package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRecentAndUndoIn: the approvers' view lists the checkpoints of every
// workspace newest first; a preview says what the undo then does, and
// changes nothing; an undo the command line would refuse is refused.
func TestRecentAndUndoIn(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	a, b := t.TempDir(), t.TempDir()
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	take := func(dir, cmd string) {
		s, err := Open(state, dir, Limits{})
		require.NoError(t, err)
		s.Now = func() time.Time { clock = clock.Add(time.Minute); return clock }
		_, err = s.Take(ctx, cmd, "")
		require.NoError(t, err)
	}
	write := func(p, data string) { require.NoError(t, os.WriteFile(p, []byte(data), 0o644)) }
	write(filepath.Join(a, "x"), "x0")
	take(a, "edit x")
	write(filepath.Join(a, "x"), "x1")
	write(filepath.Join(a, "new"), "n")
	take(b, "touch y")
	write(filepath.Join(b, "y"), "")
	take(a, "edit x again")
	write(filepath.Join(a, "x"), "x2")

	recent, err := Recent(state, 10)
	require.NoError(t, err)
	var got []string
	for _, i := range recent {
		got = append(got, filepath.Base(i.Root)+" "+i.Command)
	}
	require.Equal(t, []string{filepath.Base(a) + " edit x again", filepath.Base(b) + " touch y", filepath.Base(a) + " edit x"}, got)

	before := tree(t, a)
	_, err = UndoIn(ctx, state, a, 1, true)
	var conflict *ConflictError
	require.ErrorAs(t, err, &conflict, "x changed again since")
	_, err = UndoIn(ctx, state, a, 1, false)
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, before, tree(t, a))

	pre, err := UndoIn(ctx, state, a, 2, true)
	require.NoError(t, err)
	require.Equal(t, before, tree(t, a), "a preview changes nothing")
	require.Equal(t, "undo checkpoint 2 would restore 1, recreate 0 and remove 0 path", pre.Summary())
	rep, err := UndoIn(ctx, state, a, 2, false)
	require.NoError(t, err)
	require.Equal(t, pre.Paths(10), rep.Paths(10))
	require.Equal(t, "undid checkpoint 2: 1 restored, 0 recreated, 0 removed (execgate undo 3 takes this back)", rep.Summary())
	data, err := os.ReadFile(filepath.Join(a, "x"))
	require.NoError(t, err)
	require.Equal(t, "x1", string(data))

	_, err = UndoIn(ctx, state, "relative", 1, true)
	require.Error(t, err)
}
