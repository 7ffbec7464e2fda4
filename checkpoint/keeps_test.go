package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TakeKeeping names each needed file whose content the checkpoint does not
// hold, whatever the reason — also those its count of files not kept
// (NotKept) cannot see: a file the walk's ignore rules leave out although
// git lists it untracked (a .gitignore behind a link, which git does not
// follow), a directory, a file outside the workspace. A file it kept is
// not named, be the workspace opened through a link to it or not.
func TestTakeKeepingNamesWhatItDidNotKeep(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "XDG_CONFIG_HOME="+root)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	write := func(p, body string) {
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	write(filepath.Join(root, "shared-ignore"), "*.py\n")
	require.NoError(t, os.Symlink(filepath.Join(root, "shared-ignore"), filepath.Join(dir, "src", ".gitignore")))
	write(filepath.Join(dir, "src", "new.py"), "new\n")
	write(filepath.Join(dir, "notes.txt"), "n\n")
	write(filepath.Join(root, "outside.txt"), "o\n")
	require.NoError(t, os.Symlink(dir, filepath.Join(root, "via-link")))

	s, err := Open(t.TempDir(), filepath.Join(root, "via-link"), Limits{})
	require.NoError(t, err)
	need := []string{
		filepath.Join(dir, "notes.txt"), filepath.Join(root, "via-link", "notes.txt"),
		filepath.Join(dir, "src", "new.py"), filepath.Join(dir, "src"), filepath.Join(root, "outside.txt"),
		filepath.Join(dir, "gone.txt"),
	}
	info, missing, err := s.TakeKeeping(context.Background(), "rm", "", need)
	require.NoError(t, err)
	assert.Zero(t, info.NotKept, "the count cannot see it")
	assert.Equal(t, need[2:], missing)

	_, missing, err = s.TakeKeeping(context.Background(), "rm", "", need[:2])
	require.NoError(t, err)
	assert.Empty(t, missing)
}

// HeldAt answers from the checkpoint as old as asked: a file the
// workspace held then is held, though it was deleted and made again since
// (a save by rename renews its birth time); one made since is not; with no
// checkpoint that old, nothing is.
func TestHeldAt(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(t.TempDir(), dir, Limits{})
	require.NoError(t, err)
	clock := time.Now().Add(-20 * time.Hour)
	s.Now = func() time.Time { return clock }
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	take := func() {
		_, err := s.Take(context.Background(), "x", "")
		require.NoError(t, err)
	}
	write("old.txt", "o\n")
	write("kept.txt", "k\n")
	assert.Empty(t, s.HeldAt([]string{filepath.Join(dir, "old.txt")}, clock), "no checkpoint yet")
	take() // 20 h ago: old.txt and kept.txt
	clock = clock.Add(10 * time.Hour)
	require.NoError(t, os.Remove(filepath.Join(dir, "old.txt")))
	write("new.txt", "n\n")
	take() // 10 h ago: old.txt gone, new.txt made
	clock = clock.Add(9 * time.Hour)
	write("old.txt", "o again\n")
	write("newer.txt", "n\n")
	take() // 1 h ago: old.txt made again

	paths := []string{filepath.Join(dir, "old.txt"), filepath.Join(dir, "kept.txt"), filepath.Join(dir, "new.txt"),
		filepath.Join(dir, "newer.txt"), filepath.Join(dir, "never.txt"), "/elsewhere/x"}
	twelve := time.Now().Add(-12 * time.Hour)
	assert.Equal(t, []string{filepath.Join(dir, "old.txt"), filepath.Join(dir, "kept.txt"), "/elsewhere/x"}, s.HeldAt(paths, twelve))
	five := time.Now().Add(-5 * time.Hour)
	assert.Equal(t, []string{filepath.Join(dir, "kept.txt"), filepath.Join(dir, "new.txt"), "/elsewhere/x"}, s.HeldAt(paths, five))
	assert.Empty(t, s.HeldAt(paths[:5], time.Now().Add(-30*time.Hour)), "no checkpoint that old")

	// A record that cannot be read: every path counts as held.
	require.NoError(t, os.Remove(filepath.Join(s.Dir(), recName(2))))
	assert.Equal(t, paths, s.HeldAt(paths, twelve))
}
