package shim

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/checkpoint"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/sandbox"
)

// gitWorld is a confined world whose workspace is a real repository:
// committed files (clean.txt, src/m.py, mod.txt), ignored build output
// (build/, *.pyc), an untracked directory and file, and a committed file
// changed since (mod.txt).
func gitWorld(t *testing.T) *confinedWorld {
	t.Helper()
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("cannot confine here: %s", st.Reason)
	}
	w := newConfinedWorld(t)
	require.NoError(t, os.RemoveAll(filepath.Join(w.ws, ".git")))
	files := map[string]string{
		".gitignore": "build/\n*.pyc\n", "clean.txt": "c\n", "mod.txt": "m\n", "src/m.py": "print(1)\n",
	}
	for name, body := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(w.ws, name)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(w.ws, name), []byte(body), 0o600))
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", w.ws, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Env = []string{"HOME=" + w.home, "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "init")
	more := map[string]string{
		"mod.txt": "m\nchanged\n", "untracked-dir/notes.md": "mine\n", "src/new.py": "new\n",
		"build/out.o": "obj\n", "src/cache.pyc": "pyc\n",
	}
	for name, body := range more {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(w.ws, name)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(w.ws, name), []byte(body), 0o600))
	}
	return w
}

// What git does not hold asks before it is destroyed; what a commit or
// the ignore rules bring back is destroyed confined, unasked. Each case
// that runs is checked on disk, and each that asks leaves the file as it
// was (nobody approves).
func TestDestroyingUncommittedWorkAsks(t *testing.T) {
	cases := []struct {
		program string
		asks    bool
		file    string // the file it would destroy
	}{
		{"rm -rf ./untracked-dir", true, "untracked-dir/notes.md"},
		{"rm -r untracked-dir/", true, "untracked-dir/notes.md"},
		{"rm -rf src", true, "src/new.py"},
		{"rm src/new.py", true, "src/new.py"},
		{"cd src && rm -f new.py", true, "src/new.py"},
		{"rm -f src/*.py", true, "src/new.py"},
		{"echo gone > mod.txt", true, "mod.txt"},
		{"cp clean.txt mod.txt", true, "mod.txt"},
		{"mv clean.txt mod.txt", true, "mod.txt"},
		{"truncate -s 0 mod.txt", true, "mod.txt"},
		{"printf x | tee src/new.py", true, "src/new.py"},
		{"rm -rf .git", true, ".git/HEAD"},
		{"git clean -fdx", true, "untracked-dir/notes.md"},
		{"git checkout -- mod.txt", true, "mod.txt"},
		{"git reset --hard", true, "mod.txt"},
		{"git stash drop", true, "mod.txt"},
		// What comes back: ignored build output, committed files.
		{"rm -rf build", false, "build/out.o"},
		{"rm -f src/*.pyc", false, "src/cache.pyc"},
		{"rm clean.txt", false, "clean.txt"},
		{"echo new > clean.txt", false, "clean.txt"},
		{"rm -rf src/m.py", false, "src/m.py"},
		// Appending destroys nothing.
		{"echo more >> mod.txt", false, ""},
	}
	for _, c := range cases {
		t.Run(c.program, func(t *testing.T) {
			w := gitWorld(t)
			// Every file is older than a task: a scratch file of the
			// task's own is TestScratchFileOfTheTaskRunsConfined's.
			w.later = policy.ScratchAge + time.Minute
			var before []byte
			if c.file != "" {
				var err error
				before, err = os.ReadFile(filepath.Join(w.ws, c.file))
				require.NoError(t, err)
			}
			status, _, errOut := w.run(t, c.program)
			if c.asks {
				assert.Equal(t, 1, w.asked, "should ask: %s", errOut)
				assert.NotEqual(t, 0, status)
				after, err := os.ReadFile(filepath.Join(w.ws, c.file))
				require.NoError(t, err, "the uncommitted file is gone")
				assert.Equal(t, string(before), string(after))
				if !strings.HasPrefix(c.program, "git ") {
					// Why it asks although it fits the sandbox otherwise.
					require.NotEmpty(t, w.reasons)
					assert.Contains(t, w.reasons[0], "deletes", "the question leads with what it destroys")
				}
				return
			}
			assert.Equal(t, 0, w.asked, "should run confined: %s", errOut)
			assert.Equal(t, 0, status, errOut)
			if c.file != "" {
				after, err := os.ReadFile(filepath.Join(w.ws, c.file))
				assert.True(t, err != nil || string(after) != string(before), "it ran")
			}
		})
	}
}

// Outside a git workspace, a deleted tree is gone for good: it asks; a
// single file deleted there runs confined, as any workspace write.
func TestRecursiveDeleteOutsideGitAsks(t *testing.T) {
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("cannot confine here: %s", st.Reason)
	}
	w := newConfinedWorld(t)
	plain := filepath.Join(filepath.Dir(w.ws), "plain")
	require.NoError(t, os.MkdirAll(filepath.Join(plain, "d"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(plain, "d", "f"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(plain, "g"), []byte("x"), 0o600))
	w.ws = plain
	status, _, errOut := w.run(t, "rm -rf d")
	assert.Equal(t, 1, w.asked, errOut)
	assert.NotEqual(t, 0, status)
	assert.FileExists(t, filepath.Join(plain, "d", "f"))
	status, _, errOut = w.run(t, "rm g")
	assert.Equal(t, 1, w.asked, errOut)
	assert.Equal(t, 0, status, errOut)
	assert.NoFileExists(t, filepath.Join(plain, "g"))
}

// A scratch file the task made (untracked, small, made moments ago) is
// deleted or replaced confined, unasked: the checkpoint taken right before
// keeps it, the record says so, and execgate undo brings it back. The same
// command on a file older than ScratchAge, on a modified tracked file, on a
// tree or through a pattern asks (TestDestroyingUncommittedWorkAsks).
func TestScratchFileOfTheTaskRunsConfined(t *testing.T) {
	for _, program := range []string{"rm src/new.py", "cd src && rm -f new.py", "printf x | tee src/new.py", "echo y > src/new.py"} {
		t.Run(program, func(t *testing.T) {
			w := gitWorld(t)
			status, _, errOut := w.run(t, program)
			require.Equal(t, 0, status, errOut)
			assert.Equal(t, 0, w.asked, errOut)
			after, _ := os.ReadFile(filepath.Join(w.ws, "src", "new.py"))
			assert.NotEqual(t, "new\n", string(after), "it ran")
			rec := w.lastRecord(t)
			assert.Equal(t, ByConfined, rec.DecidedBy)
			assert.Contains(t, strings.Join(rec.Reasons, "\n"), "deletes or replaces src/new.py, made ")

			infos, err := checkpoint.Recent(w.env["XDG_STATE_HOME"]+"/execgate", 1)
			require.NoError(t, err)
			require.Len(t, infos, 1)
			_, err = checkpoint.UndoIn(context.Background(), w.env["XDG_STATE_HOME"]+"/execgate", infos[0].Root, infos[0].Seq, false)
			require.NoError(t, err)
			back, err := os.ReadFile(filepath.Join(w.ws, "src", "new.py"))
			require.NoError(t, err)
			assert.Equal(t, "new\n", string(back), "undo brings it back")
		})
	}
}

// A checkpoint that cannot keep every file (one over its size limit) cannot
// promise the scratch file back: the deletion asks.
func TestScratchFileAsksWhenTheCheckpointCannotKeepIt(t *testing.T) {
	w := gitWorld(t)
	big, err := os.Create(filepath.Join(w.ws, "data.bin"))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(checkpoint.DefaultLimits().FileBytes+1))
	require.NoError(t, big.Close())
	status, _, errOut := w.run(t, "rm src/new.py")
	assert.NotEqual(t, 0, status)
	assert.Equal(t, 1, w.asked, errOut)
	assert.Contains(t, strings.Join(w.reasons, "\n"), "could not keep 1 of the workspace's files")
	assert.FileExists(t, filepath.Join(w.ws, "src", "new.py"))
}

// A user's older untracked file made anew (an editor's save by rename,
// git stash -u and pop) has a fresh birth time, but the workspace's
// checkpoints held it more than ScratchAge ago: it is no scratch file,
// and deleting it asks.
func TestScratchFileTheWorkspaceHeldBeforeAsks(t *testing.T) {
	w := gitWorld(t)
	st, err := checkpoint.Open(filepath.Join(w.env["XDG_STATE_HOME"], "execgate"), w.ws, checkpoint.Limits{})
	require.NoError(t, err)
	st.Now = func() time.Time { return time.Now().Add(-policy.ScratchAge - time.Hour) }
	_, err = st.Take(context.Background(), "an older command", "")
	require.NoError(t, err)
	// Saved by rename since: a new inode, born now.
	p := filepath.Join(w.ws, "src", "new.py")
	require.NoError(t, os.WriteFile(p+".tmp", []byte("new, edited\n"), 0o600))
	require.NoError(t, os.Rename(p+".tmp", p))

	status, _, errOut := w.run(t, "rm src/new.py")
	assert.NotEqual(t, 0, status)
	assert.Equal(t, 1, w.asked, errOut)
	assert.Contains(t, strings.Join(w.reasons, "\n"), "which the workspace held 12h0m0s ago already")
	assert.FileExists(t, p)

	// A file made since that checkpoint is the task's: it runs.
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "repro.py"), []byte("print(1)\n"), 0o600))
	status, _, errOut = w.run(t, "rm repro.py")
	assert.Equal(t, 0, status, errOut)
	assert.Equal(t, 1, w.asked, "it did not ask again")
	assert.NoFileExists(t, filepath.Join(w.ws, "repro.py"))
}

// A repository cloned into an ignored directory holds commits that may be
// nowhere else: rm -rf of the directory asks and leaves it, where the
// build output beside it alone would be deleted confined.
func TestNestedRepositoryInIgnoredTreeAsks(t *testing.T) {
	w := gitWorld(t)
	lib := filepath.Join(w.ws, "build", "lib")
	require.NoError(t, os.MkdirAll(lib, 0o700))
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", lib, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Env = []string{"HOME=" + w.home, "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(lib, "a.c"), []byte("x\n"), 0o600))
	git("add", ".")
	git("commit", "-qm", "mine alone")
	status, _, errOut := w.run(t, "rm -rf build")
	assert.NotEqual(t, 0, status)
	assert.Equal(t, 1, w.asked, errOut)
	require.NotEmpty(t, w.reasons)
	assert.Contains(t, w.reasons[0], "holds a git repository of its own")
	assert.DirExists(t, filepath.Join(lib, ".git"))
}
