package shim

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A scratch file git lists untracked but the checkpoint's walk leaves out
// with what its ignore rules leave out is not kept, though the checkpoint
// counts no file it could not keep (NotKept): its deletion asks, and the
// file stays. The walk's rules part from git's where git does not follow
// a .gitignore that is a link, where a line lies past the bytes the walk
// reads, and where core.excludesFile replaces the default excludes file.
func TestScratchFileTheCheckpointLeavesOutAsks(t *testing.T) {
	cases := []struct {
		name, file string
		setup      func(t *testing.T, w *confinedWorld)
	}{
		{"a linked .gitignore", "src/new.py", func(t *testing.T, w *confinedWorld) {
			require.NoError(t, os.WriteFile(filepath.Join(w.home, "shared-ignore"), []byte("*.py\n"), 0o600))
			require.NoError(t, os.Symlink(filepath.Join(w.home, "shared-ignore"), filepath.Join(w.ws, "src", ".gitignore")))
		}},
		{"a .gitignore past the bytes read", "src/debug.log", func(t *testing.T, w *confinedWorld) {
			body := "*.log\n#" + strings.Repeat("-", 1<<20) + "\n!debug.log\n"
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "src", ".gitignore"), []byte(body), 0o600))
		}},
		{"core.excludesFile", "debug.log", func(t *testing.T, w *confinedWorld) {
			// The walk reads the excludes file from the shim's own
			// environment, as the real shim's is the user's.
			cfg := w.env["XDG_CONFIG_HOME"]
			t.Setenv("XDG_CONFIG_HOME", cfg)
			require.NoError(t, os.MkdirAll(filepath.Join(cfg, "git"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(cfg, "git", "ignore"), []byte("*.log\n"), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(w.home, ".gitignore_global"), []byte("*.swp\n"), 0o600))
			cmd := exec.Command("git", "config", "--global", "core.excludesFile", filepath.Join(w.home, ".gitignore_global"))
			cmd.Env = []string{"HOME=" + w.home, "XDG_CONFIG_HOME=" + cfg}
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := gitWorld(t)
			c.setup(t, w)
			p := filepath.Join(w.ws, c.file)
			if _, err := os.Stat(p); err != nil {
				require.NoError(t, os.WriteFile(p, []byte("mine\n"), 0o600))
			}
			status, _, errOut := w.run(t, "rm "+c.file)
			assert.Equal(t, ExitDenied, status, errOut)
			assert.Equal(t, 1, w.asked, errOut)
			assert.Contains(t, strings.Join(w.reasons, "\n"), "the checkpoint did not keep it")
			assert.FileExists(t, p)
		})
	}
}

// A file of the task's age with a second name outside the workspace is
// not deleted or replaced unasked: replacing it would replace the other
// name's content, which no checkpoint keeps.
func TestScratchFileWithAnotherNameAsks(t *testing.T) {
	w := gitWorld(t)
	other := filepath.Join(w.home, "elsewhere.txt")
	require.NoError(t, os.WriteFile(other, []byte("precious\n"), 0o600))
	require.NoError(t, os.Link(other, filepath.Join(w.ws, "notes.txt")))
	status, _, errOut := w.run(t, "echo y > notes.txt")
	assert.Equal(t, ExitDenied, status, errOut)
	assert.Equal(t, 1, w.asked, errOut)
	b, err := os.ReadFile(other)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(b))
}

// rm link/../f deletes the f beside the link's target: judged so, the
// uncommitted changes there ask, though the f beside the link is a scratch
// file of the task.
func TestScratchFileBesideALinkAsks(t *testing.T) {
	w := gitWorld(t)
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "src", "deep"), 0o700))
	require.NoError(t, os.Symlink("src/deep", filepath.Join(w.ws, "link")))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "m.py"), []byte("scratch\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "src", "m.py"), []byte("print(1)\nwork\n"), 0o600))
	status, _, errOut := w.run(t, "rm link/../m.py")
	assert.Equal(t, ExitDenied, status, errOut)
	assert.Equal(t, 1, w.asked, errOut)
	b, err := os.ReadFile(filepath.Join(w.ws, "src", "m.py"))
	require.NoError(t, err)
	assert.Equal(t, "print(1)\nwork\n", string(b))
}
