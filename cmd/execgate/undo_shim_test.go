package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/execgate/execgate/internal/treetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// workTree describes every path below root by type, mode, content and
// link target: equal trees are equal byte for byte.
func workTree(t testing.TB, root string) map[string]string {
	t.Helper()
	out, err := treetest.Describe(root)
	require.NoError(t, err)
	return out
}

// randomOps writes a bash program of n random file operations of the
// kinds the issue names: create, write, append, chmod, rm, mkdir,
// rename, symlink (some pointing out of the workspace), truncate.
func randomOps(r *rand.Rand, n int) string {
	names := []string{"a", "b", "c.txt", "d/e", "d/f", "g/h/i", "d", "g", "g/h"}
	pick := func() string { return names[r.IntN(len(names))] }
	var b strings.Builder
	for range n {
		p := pick()
		switch r.IntN(9) {
		case 0:
			fmt.Fprintf(&b, "mkdir -p $(dirname %s) && printf 'v%d\\n' > %s\n", p, r.IntN(1000), p)
		case 1:
			fmt.Fprintf(&b, "printf 'more %d' >> %s\n", r.IntN(1000), p)
		case 2:
			// Never through a link: it may point out of the workspace.
			fmt.Fprintf(&b, "[ -f %s ] && [ ! -L %s ] && chmod %s %s\n", p, p, []string{"600", "755", "444", "700", "4755"}[r.IntN(5)], p)
		case 3:
			fmt.Fprintf(&b, "rm -rf %s\n", p)
		case 4:
			fmt.Fprintf(&b, "mkdir -p %s\n", p)
		case 5:
			q := pick()
			fmt.Fprintf(&b, "mkdir -p $(dirname %s) && mv %s %s\n", q, p, q)
		case 6:
			fmt.Fprintf(&b, "mkdir -p $(dirname %s) && ln -s %s %s\n", p, []string{"a", "../outside", "/nonexistent/execgate", "d"}[r.IntN(4)], p)
		case 7:
			fmt.Fprintf(&b, "[ ! -L %s ] && : > %s\n", p, p)
		case 8:
			fmt.Fprintf(&b, "printf '%%s' %q > %s\n", strings.Repeat("\x00x\n", r.IntN(5)), p)
		}
	}
	return "exec 2>/dev/null\n" + b.String() + "true\n"
}

// TestUndoThroughShim is undo's property, through the real shim and the
// real execgate: whatever random file operations three commands made,
// undoing them newest first gives back, each time, the tree as it was
// before that command, byte for byte.
func TestUndoThroughShim(t *testing.T) {
	realBash(t)
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			e := newShimEnv(t, fullConfig)
			r := rand.New(rand.NewPCG(seed, 26))
			shell := func(prog string) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", prog), "")
				require.Equal(t, 0, o.status, "%+v", o)
			}
			shell(randomOps(r, 10)) // the start, itself checkpoint 1
			var before []map[string]string
			for range 3 {
				before = append(before, workTree(t, e.work))
				shell(randomOps(r, 1+r.IntN(8)))
			}
			for i := len(before) - 1; i >= 0; i-- {
				o := e.undo(t, fmt.Sprint(i+2))
				require.Equal(t, 0, o.status, "%+v", o)
				require.Equal(t, before[i], workTree(t, e.work), "undo %d: %s", i+2, o.stdout)
				require.Contains(t, o.stdout, fmt.Sprintf("execgate: undid checkpoint %d:", i+2))
			}
		})
	}
}

func (e *shimEnv) undo(t testing.TB, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return runOutcome(t, e.command(ctx, filepath.Join(e.dir, "execgate"), append([]string{"execgate", "undo"}, args...)...), "")
}

// TestUndoOlderThroughShim: undoing an older command merges when later
// commands changed other paths, and refuses in one line, changing
// nothing, when they changed the same ones.
func TestUndoOlderThroughShim(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, fullConfig)
	shell := func(prog string) {
		o := runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", "-c", prog), "")
		require.Equal(t, 0, o.status, "%+v", o)
	}
	shell("echo 0 > x; echo 0 > y")          // 1
	shell("echo 1 > x")                      // 2
	shell("echo 1 > y")                      // 3
	shell("echo 2 > x; rm y; ls >/dev/null") // 4
	list := e.undo(t, "--list")
	require.Equal(t, 0, list.status, "%+v", list)
	assert.Regexp(t, `(?m)^4 +\S+ \S+ +pending +echo 2 > x; rm y`, list.stdout)
	assert.Regexp(t, `(?m)^2 +\S+ \S+ +1 +echo 1 > x$`, list.stdout)

	before := workTree(t, e.work)
	o := e.undo(t, "2")
	assert.Equal(t, 1, o.status)
	assert.Equal(t, "execgate: refused to undo checkpoint 2: later changes touch the same paths (x); undo the later checkpoints first\n", o.stderr)
	assert.Equal(t, before, workTree(t, e.work))

	shell("echo 3 > z") // 5: a refused undo keeps no checkpoint
	o = e.undo(t, "3")  // y: 0 -> 1, later removed by 4
	assert.Equal(t, 1, o.status)
	assert.Contains(t, o.stderr, "(y)")

	o = e.undo(t, "4")
	require.Equal(t, 0, o.status, "%+v", o)
	assert.Contains(t, o.stdout, "  restored x\n  recreated y\n")
	assert.Contains(t, o.stdout, "merged: kept 1 path later commands changed")
	assert.Equal(t, map[string]string{"x": `file -rw-r--r-- "1\n"`, "y": `file -rw-r--r-- "1\n"`, "z": `file -rw-r--r-- "3\n"`}, workTree(t, e.work))
}

// TestCheckpointOnlyForWrites: a command that cannot write takes no checkpoint; a
// workspace where none can be taken makes a writing command ask, and
// with nobody to ask it does not run.
func TestCheckpointOnlyForWrites(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, fullConfig)
	o := runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", "-c", "ls; cat /dev/null"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	list := e.undo(t, "--list")
	assert.Equal(t, fmt.Sprintf("execgate: no checkpoints of %s\n", e.work), list.stdout)

	// The checkpoints' directory is a file: none can be stored.
	require.NoError(t, os.MkdirAll(filepath.Join(e.state, "execgate"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(e.state, "execgate", "checkpoints"), nil, 0o600))
	o = runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", "-c", "echo hi > f"), "")
	assert.Equal(t, 126, o.status, "%+v", o)
	assert.Contains(t, o.stderr, "no checkpoint could be taken")
	assert.NoFileExists(t, filepath.Join(e.work, "f"))
	o = runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", "-c", "echo hi"), "")
	assert.Equal(t, outcome{stdout: "hi\n"}, o, "a read-only command still runs")
}

// TestCheckpointCommandRedacted: the command a checkpoint names is stored
// redacted, as the audit log's copy is.
func TestCheckpointCommandRedacted(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, fullConfig)
	token := "ghp_" + strings.Repeat("a1B2", 9)
	o := runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", "-c", "echo "+token+" > f"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	list := e.undo(t, "--list")
	assert.Contains(t, list.stdout, "[REDACTED:github-token]")
	assert.NotContains(t, list.stdout, token)
	// grep exits 1 when nothing holds it: the output is what counts.
	stored, _ := exec.Command("grep", "-r", "-l", token, filepath.Join(e.state, "execgate", "checkpoints")).Output()
	// The file f itself holds the token (it is the workspace's content);
	// only objects/ may.
	for _, p := range strings.Fields(string(stored)) {
		assert.Contains(t, p, "/objects/", "token stored outside the content: %s", p)
	}
}

// TestUndoGitWorkspace: in a git repository, undo through the real shim
// puts back what `git checkout -- .` and `rm -rf` took, from a
// subdirectory too; ignored files are not covered; the repository's own
// files (index, HEAD, refs, reflog, stash) are untouched.
func TestUndoGitWorkspace(t *testing.T) {
	realBash(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	e := newShimEnv(t, fullConfig)
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.work
		cmd.Env = e.env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	git("init", "-q")
	require.NoError(t, os.MkdirAll(filepath.Join(e.work, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "src", "m.go"), []byte("package m\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, ".gitignore"), []byte("*.log\n"), 0o644))
	git("add", "-A")
	git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "src", "m.go"), []byte("package m // edited, not committed\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("untracked work\n"), 0o600))
	repo := func() string {
		return git("rev-parse", "HEAD") + git("status", "--porcelain") + git("stash", "list") + git("reflog") + git("ls-files", "-s")
	}
	before, repoBefore := workTree(t, e.work), repo()
	delete(before, ".git")
	sub := *e
	sub.work = filepath.Join(e.work, "src")
	o := runOutcome(t, sub.command(t.Context(), e.shim("bash"), "bash", "-c", "git checkout -- . && rm -rf ../notes.txt && echo x > ../run.log"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	o = sub.undo(t)
	require.Equal(t, 0, o.status, "%+v", o)
	assert.Contains(t, o.stdout, "  restored src/m.go\n  recreated notes.txt\n")
	after := workTree(t, e.work)
	delete(after, ".git")
	assert.Equal(t, `file -rw-r--r-- "x\n"`, after["run.log"], "ignored: not covered")
	delete(after, "run.log")
	for k := range after {
		if strings.HasPrefix(k, ".git/") {
			delete(after, k)
		}
	}
	for k := range before {
		if strings.HasPrefix(k, ".git/") {
			delete(before, k)
		}
	}
	assert.Equal(t, before, after)
	assert.Equal(t, repoBefore, repo())
	refs := git("for-each-ref")
	assert.NotContains(t, refs, "execgate")
}

// TestNoCheckpointOfHome: a command started in the home directory has no
// workspace; its writes are judged as writes to the home, and no
// checkpoint copies the home (its secrets, execgate's own state) away.
func TestNoCheckpointOfHome(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, fullConfig)
	home := filepath.Dir(e.state)
	cmd := e.command(t.Context(), e.shim("bash"), "bash", "-c", "echo hi > f")
	cmd.Dir = home
	o := runOutcome(t, cmd, "")
	require.Equal(t, 0, o.status, "%+v", o)
	assert.FileExists(t, filepath.Join(home, "f"))
	assert.NoDirExists(t, filepath.Join(e.state, "execgate", "checkpoints"))
}
