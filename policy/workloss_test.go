package policy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lossRepo is a real repository in a temp dir: committed clean.txt and
// mod.txt (since changed), ignored build/ and *.pyc, untracked u/notes.md.
func lossRepo(t *testing.T) (ws, home string) {
	t.Helper()
	root := t.TempDir()
	root, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	ws, home = filepath.Join(root, "ws"), filepath.Join(root, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	write := func(name, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(body), 0o600))
	}
	write(".gitignore", "build/\n*.pyc\n")
	write("clean.txt", "c\n")
	write("mod.txt", "m\n")
	runGit(t, ws, home, "init", "-q")
	runGit(t, ws, home, "add", ".")
	runGit(t, ws, home, "commit", "-qm", "init")
	write("mod.txt", "changed\n")
	write("u/notes.md", "mine\n")
	write("build/out.o", "o\n")
	write("x.pyc", "p\n")
	return ws, home
}

func runGit(t *testing.T, dir, home string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

func workLossOf(t *testing.T, e *Engine, command, cwd, home string) []string {
	t.Helper()
	res := e.Evaluate(Request{Command: command, Cwd: cwd, Home: home})
	return WorkLoss(context.Background(), res, cwd, home, nil)
}

func TestWorkLoss(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	for command, loses := range map[string]bool{
		"rm -rf u":                 true,
		"rm u/notes.md":            true,
		"rm -r ./u/":               true,
		"rm -f *.md u/*":           true,
		"echo x > mod.txt":         true,
		"echo x &> mod.txt":        true,
		"echo x >| mod.txt":        true,
		"cp clean.txt mod.txt":     true,
		"cp -t u clean.txt":        false, // u/clean.txt does not exist
		"cp u/notes.md .":          false, // ./notes.md does not exist
		"cp clean.txt u":           false,
		"cp -f clean.txt mod.txt":  true,
		"mv -f clean.txt mod.txt":  true,
		"mv -n clean.txt mod.txt":  false,
		"ln -sf clean.txt mod.txt": true,
		"ln -s clean.txt mod.txt":  false,
		"tee -a mod.txt":           false,
		"tee mod.txt":              true,
		"truncate -s0 mod.txt":     true,
		"shred -u mod.txt":         true,
		"unlink mod.txt":           true,
		"rm -rf .git":              true,
		"rm -rf .":                 true,
		"rm -rf $DIR":              true, // unknown, and the workspace has work not committed
		"rm $(cat list)":           true,
		"rm -rf build":             false,
		"rm -f x.pyc *.pyc":        false,
		"rm clean.txt":             false,
		"echo x > clean.txt":       false,
		"echo x >> mod.txt":        false,
		"sed -i s/a/b/ mod.txt":    false, // an edit, as the agent's own
		"ls u":                     false,
	} {
		why := workLossOf(t, e, command, ws, home)
		assert.Equal(t, loses, len(why) > 0, "%s: %q", command, why)
	}
}

// A workspace with nothing uncommitted loses nothing, whatever is
// deleted: all of it comes back.
func TestWorkLossCleanRepository(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	require.NoError(t, os.RemoveAll(filepath.Join(ws, "u")))
	runGit(t, ws, home, "commit", "-qam", "more")
	for _, command := range []string{"rm -rf $DIR", "rm -rf build/*", "echo > mod.txt", "rm -rf build"} {
		assert.Empty(t, workLossOf(t, e, command, ws, home), command)
	}
	// The repository itself is not in any commit; * is taken to match it
	// (shopt -s dotglob makes it so).
	assert.NotEmpty(t, workLossOf(t, e, "rm -rf .git", ws, home))
	assert.NotEmpty(t, workLossOf(t, e, "rm -rf *", ws, home))
}

// Outside a git workspace a tree deleted is gone; a file is a write.
func TestWorkLossOutsideGit(t *testing.T) {
	e := testEngine(t)
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "d"), 0o700))
	assert.NotEmpty(t, workLossOf(t, e, "rm -rf d", dir, dir))
	assert.NotEmpty(t, workLossOf(t, e, "rm -r $X", dir, dir))
	assert.Empty(t, workLossOf(t, e, "rm -f f", dir, dir))
	assert.Empty(t, workLossOf(t, e, "echo > f", dir, dir))
}

// What git cannot answer in time counts as uncommitted.
func TestWorkLossDeadline(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	res := e.Evaluate(Request{Command: "rm clean.txt", Cwd: ws, Home: home})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	why := WorkLoss(ctx, res, ws, home, nil)
	require.NotEmpty(t, why)
	assert.Contains(t, why[0], "cannot be known")
}

// A repository whose configuration names a program git status runs is
// not asked: the program would run outside the sandbox, before the
// decision. The canary proves it did not run.
func TestWorkLossRunsNoRepositoryProgram(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	canary := filepath.Join(t.TempDir(), "ran")
	hook := filepath.Join(ws, "mon.sh")
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+canary+"\n"), 0o700))
	runGit(t, ws, home, "config", "core.fsmonitor", hook)
	why := workLossOf(t, e, "rm clean.txt", ws, home)
	require.NotEmpty(t, why)
	assert.Contains(t, why[0], "fsmonitor")
	assert.NoFileExists(t, canary)
}

// A relaxation's neighbour: a committed file deleted through a link to
// an untracked one deletes the link (rm), but a redirect writes through
// it, and asks.
func TestWorkLossThroughLink(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	require.NoError(t, os.Symlink("u/notes.md", filepath.Join(ws, "link")))
	assert.NotEmpty(t, workLossOf(t, e, "echo x > link", ws, home))
	require.NoError(t, os.Symlink("u", filepath.Join(ws, "dirlink")))
	assert.NotEmpty(t, workLossOf(t, e, "rm dirlink/notes.md", ws, home))
}

func TestParsePorcelainZ(t *testing.T) {
	got, err := parsePorcelainZ([]byte(" M a.txt\x00?? u/n.md\x00R  new\x00old\x00 D gone\x00D  staged\x00!! build/\x00AM added\x00"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a.txt", "u/n.md", "new", "added"}, got)
	_, err = parsePorcelainZ([]byte("garbage"))
	assert.Error(t, err)
}

func FuzzParsePorcelainZ(f *testing.F) {
	f.Add([]byte(" M a\x00?? b\x00R  c\x00d\x00"))
	f.Add([]byte("R  c"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parsePorcelainZ(b)
		if err == nil {
			for _, p := range got {
				if strings.ContainsRune(p, 0) {
					t.Fatalf("path with NUL: %q", p)
				}
			}
		}
	})
}

func TestLossHits(t *testing.T) {
	for _, c := range []struct {
		loss Loss
		p    string
		hits bool
	}{
		{Loss{Path: "/w/a"}, "/w/a", true},
		{Loss{Path: "/w/a"}, "/w/b", false},
		{Loss{Path: "/w/d", Tree: true}, "/w/d/x/y", true},
		{Loss{Path: "/w/d"}, "/w/d/x", true}, // fails without -r, counted
		{Loss{Path: "/w/*.py", Pattern: true}, "/w/a.py", true},
		{Loss{Path: "/w/*.py", Pattern: true}, "/w/a.pyc", false},
		{Loss{Path: "/w/*/x", Pattern: true}, "/w/d/x", true},
		{Loss{Path: "/w/sub/f"}, "/w/sub", true}, // into a nested repository
		{Loss{Path: "/w/[", Pattern: true}, "/w/a", true},
	} {
		assert.Equal(t, c.hits, lossHits(c.loss, c.p), "%+v %s", c.loss, c.p)
	}
}

// What lies outside the workspace (/dev/null, a scratch file) is not
// looked up: git is not even run for it.
func TestWorkLossIgnoresOutside(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	res := e.Evaluate(Request{Command: "ls 2>/dev/null > /tmp/scratch-out.txt", Cwd: ws, Home: home})
	for _, s := range res.Segments {
		for _, l := range s.Losses {
			assert.NotEqual(t, "/dev/null", l.Path)
		}
	}
	// A context already done would make git fail: nothing is asked of it.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.Empty(t, WorkLoss(ctx, res, ws, home, nil))
}

// TestScratchFiles: of what git does not hold, only a file the command
// names itself, untracked, regular, small and made within ScratchAge is a
// scratch file the checkpoint brings back; everything else asks. At most
// maxScratch per command.
func TestScratchFiles(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	write := func(name string, size int) {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), make([]byte, size), 0o600))
	}
	write("repro.py", 10)
	write("big.log", scratchBytes+1)
	for i := range maxScratch + 1 {
		write("s"+strconv.Itoa(i)+".txt", 1)
	}
	require.NoError(t, os.Symlink("clean.txt", filepath.Join(ws, "link")))
	of := func(command string, now time.Time) WorkLosses {
		res := e.Evaluate(Request{Command: command, Cwd: ws, Home: home})
		return WorkLossOf(context.Background(), res, ws, home, nil, now)
	}
	now := time.Now()
	w := of("rm repro.py", now)
	assert.Empty(t, w.Ask)
	require.Len(t, w.Undoable, 1)
	assert.Equal(t, filepath.Join(ws, "repro.py"), w.Undoable[0].Path)
	assert.Contains(t, w.Undoable[0].Reason, "deletes or replaces repro.py, made ")
	assert.Equal(t, []string{w.Undoable[0].Reason}, WorkLoss(context.Background(), e.Evaluate(Request{Command: "rm repro.py", Cwd: ws, Home: home}), ws, home, nil),
		"WorkLoss still names it")

	for _, command := range []string{
		"rm u/notes.md",                  // untracked, but of an older date (below)
		"rm big.log",                     // too large
		"echo x > mod.txt", "rm mod.txt", // a tracked file's changes
		"rm -rf u", "rm -f *.py", "rm link", "rm -r repro.py",
	} {
		at := now
		if command == "rm u/notes.md" {
			at = now.Add(ScratchAge + time.Minute)
		}
		w := of(command, at)
		assert.Empty(t, w.Undoable, command)
		assert.NotEmpty(t, w.Ask, command)
	}
	w = of("rm s0.txt s1.txt s2.txt s3.txt s4.txt s5.txt", now)
	assert.Len(t, w.Undoable, maxScratch)
	assert.Len(t, w.Ask, 1, "the sixth asks")
}

// A repository of its own inside an ignored directory (a library cloned
// into build/) holds commits that may be nowhere else: deleting a tree
// that holds it asks, though git status lists nothing there. A worktree's
// or submodule's .git file, a tool's directory and a tree without one do
// not.
func TestWorkLossNestedRepository(t *testing.T) {
	e := testEngine(t)
	ws, home := lossRepo(t)
	lib := filepath.Join(ws, "build", "deps", "lib")
	require.NoError(t, os.MkdirAll(lib, 0o700))
	runGit(t, lib, home, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(lib, "a.c"), []byte("x\n"), 0o600))
	runGit(t, lib, home, "add", ".")
	runGit(t, lib, home, "commit", "-qm", "mine alone")
	for _, command := range []string{"rm -rf build", "rm -rf build/deps", "rm -rf build/*", "rm -r build/deps/lib"} {
		why := workLossOf(t, e, command, ws, home)
		require.NotEmpty(t, why, command)
		assert.Contains(t, why[0], "holds a git repository of its own", command)
	}
	// Not: a .git file, a tool's directory, a tree without one.
	wt := filepath.Join(ws, "build", "wt")
	require.NoError(t, os.MkdirAll(wt, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "node_modules", "x", ".git"), 0o700))
	for _, command := range []string{"rm -rf build/wt", "rm -rf node_modules", "rm -rf build/out.o"} {
		assert.Empty(t, workLossOf(t, e, command, ws, home), command)
	}
}
