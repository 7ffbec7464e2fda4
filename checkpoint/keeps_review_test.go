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
