package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
