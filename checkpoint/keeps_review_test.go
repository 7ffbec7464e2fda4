package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A checkpoint whose description cannot be read has no known time: it may
// be the one ScratchAge old, and what it held cannot be known. HeldAt
// counted it as absent, and with it the only checkpoint that old: a file
// the workspace held then was taken for a new one.
func TestHeldAtWithADamagedDescription(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(t.TempDir(), dir, Limits{})
	require.NoError(t, err)
	clock := time.Now().Add(-20 * time.Hour)
	s.Now = func() time.Time { return clock }
	old := filepath.Join(dir, "old.txt")
	require.NoError(t, os.WriteFile(old, []byte("o\n"), 0o644))
	_, err = s.Take(context.Background(), "x", "")
	require.NoError(t, err)
	clock = time.Now().Add(-time.Hour)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "new.txt"), []byte("n\n"), 0o644))
	_, err = s.Take(context.Background(), "y", "")
	require.NoError(t, err)
	twelve := time.Now().Add(-12 * time.Hour)
	require.Equal(t, []string{old}, s.HeldAt([]string{old, filepath.Join(dir, "new.txt")}, twelve))

	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), metaName(1)), []byte("{damaged"), 0o600))
	assert.Contains(t, s.HeldAt([]string{old}, twelve), old)
}

// Pruning (Limits.Count, 100 by default) drops the checkpoint ScratchAge
// old within a hundred writing commands: HeldAt then found none that old
// and answered that no file was held, and the shim's check of a user's
// re-saved file did nothing in any busy session. The oldest kept stands
// in for the pruned ones.
func TestHeldAtAfterPruning(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(t.TempDir(), dir, Limits{Count: 3})
	require.NoError(t, err)
	clock := time.Now().Add(-20 * time.Hour)
	s.Now = func() time.Time { return clock }
	take := func() {
		_, err := s.Take(context.Background(), "x", "")
		require.NoError(t, err)
	}
	old, made := filepath.Join(dir, "old.txt"), filepath.Join(dir, "made.txt")
	require.NoError(t, os.WriteFile(old, []byte("o\n"), 0o644))
	take() // 20 h ago: pruned below
	for i := range 3 {
		clock = time.Now().Add(-time.Duration(3-i) * time.Hour)
		if i == 1 {
			require.NoError(t, os.WriteFile(made, []byte("m\n"), 0o644))
		}
		take()
	}
	infos, err := s.List()
	require.NoError(t, err)
	require.Len(t, infos, 3, "the one 20 h old is pruned")
	twelve := time.Now().Add(-12 * time.Hour)
	assert.Equal(t, []string{old}, s.HeldAt([]string{old, made}, twelve), "made.txt was made since the oldest kept")
}
