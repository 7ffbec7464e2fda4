package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A repository of its own is found where bash's pattern takes it
// (build/[!x]*: path.Match reads no [!x] and matched nothing) and under
// any name git accepts: a bare clone (HEAD, objects/, refs/), or the git
// directory a .git file names. Each was deleted unasked.
func TestWorkLossNestedRepositoryAsBashAndGitSeeIt(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	lib := filepath.Join(ws, "build", "lib")
	require.NoError(t, os.MkdirAll(lib, 0o700))
	runGit(t, lib, home, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(lib, "a.c"), []byte("x\n"), 0o600))
	runGit(t, lib, home, "add", ".")
	runGit(t, lib, home, "commit", "-qm", "mine alone")
	for _, command := range []string{"rm -rf build/[!x]*", "rm -rf build/[[:lower:]]ib", "rm -rf build/l*"} {
		why := workLossOf(t, e, command, ws, home)
		require.NotEmpty(t, why, command)
		assert.Contains(t, why[0], "holds a git repository of its own", command)
	}
	assert.Empty(t, workLossOf(t, e, "rm -rf build/[!l]*", ws, home), "the pattern does not take lib")

	// A bare clone, and a work tree whose .git file names a git
	// directory in the same tree.
	runGit(t, ws, home, "clone", "-q", "--bare", lib, filepath.Join(ws, "out", "mirror.git"))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "vendor", "meta"), 0o700))
	runGit(t, lib, home, "init", "-q", "--separate-git-dir", filepath.Join(ws, "vendor", "meta", "lib-history"))
	require.NoError(t, os.Rename(lib, filepath.Join(ws, "vendor", "lib")))
	for _, command := range []string{"rm -rf out", "rm -rf vendor"} {
		why := workLossOf(t, e, command, ws, home)
		require.NotEmpty(t, why, command)
		assert.Contains(t, why[0], "holds a git repository of its own", command)
	}
}

// A pattern takes the uncommitted work bash's reading of it takes:
// rm [!c]*.txt deletes mod.txt, rm -rf [!b]* deletes u/notes.md. Both ran
// unasked, path.Match matching neither.
func TestWorkLossPatternsAsBashReadsThem(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	for _, command := range []string{"rm -f [!c]*.txt", "rm -rf [!b]*", "rm -f [[:lower:]]od.txt", "rm -rf [^b]"} {
		assert.NotEmpty(t, workLossOf(t, e, command, ws, home), command)
	}
	assert.Empty(t, workLossOf(t, e, "rm -f [!m]*.txt", ws, home), "it takes clean.txt only")
}
