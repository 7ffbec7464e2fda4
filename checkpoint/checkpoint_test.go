package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/execgate/execgate/internal/treetest"
	"github.com/stretchr/testify/require"
)

// tree describes every path below root (.git aside) by its type, mode,
// content and link target: two equal trees are equal byte for byte.
func tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out, err := treetest.Describe(root, ".git")
	require.NoError(t, err)
	return out
}

func newStore(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), dir, Limits{})
	require.NoError(t, err)
	return s
}

// fileOps applies n random file operations below root, the kinds the
// issue names: create, write, append, chmod, rm, mkdir, rename, symlink.
func fileOps(t testing.TB, r *rand.Rand, root string, n int) {
	t.Helper()
	names := []string{"a", "b", "c.txt", "d/e", "d/f", "g/h/i", "d", "g"}
	// An absolute link leads out of the tree to a file of the test's own:
	// the operations below follow links, and as root a link to a system
	// file (this test once used /etc/passwd) would have them truncate it.
	elsewhere := filepath.Join(filepath.Dir(root), "elsewhere")
	if _, err := os.Lstat(elsewhere); err != nil {
		os.WriteFile(elsewhere, []byte("outside the tree\n"), 0o644)
	}
	pick := func() string { return filepath.Join(root, names[r.IntN(len(names))]) }
	for range n {
		p := pick()
		switch r.IntN(9) {
		case 0, 1:
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(fmt.Sprintf("content %d\n", r.IntN(1000))), 0o644)
		case 2:
			if f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0); err == nil {
				fmt.Fprintf(f, "more %d\n", r.IntN(100))
				f.Close()
			}
		case 3:
			os.Chmod(p, []fs.FileMode{0o600, 0o755, 0o444, 0o700, 0o640}[r.IntN(5)])
		case 4:
			os.RemoveAll(p)
		case 5:
			os.MkdirAll(p, 0o755)
		case 6:
			q := pick()
			os.MkdirAll(filepath.Dir(q), 0o755)
			os.Rename(p, q)
		case 7:
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.Symlink([]string{"a", "../outside", elsewhere, "d"}[r.IntN(4)], p)
		case 8:
			os.Truncate(p, 0)
		}
	}
	// Directories left read-only would stop the test's own cleanup.
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}

// TestUndoRestoresTree is the package's property: whatever a sequence of
// file operations did, undoing its checkpoint gives the tree back byte
// for byte, mode for mode, link for link.
func TestUndoRestoresTree(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 26))
			dir := t.TempDir()
			fileOps(t, r, dir, 8)
			s := newStore(t, dir)
			want := tree(t, dir)
			_, err := s.Take(ctx, "ops", "")
			require.NoError(t, err)
			fileOps(t, r, dir, 1+r.IntN(12))
			changed := !equalTrees(want, tree(t, dir))
			rep, err := s.Undo(ctx, 0)
			require.NoError(t, err)
			require.Equal(t, want, tree(t, dir))
			require.Equal(t, changed, rep.Changed() > 0, "report %+v", rep)
		})
	}
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestUndoOlderMergesOrRefuses: undoing an older command keeps later work
// on other paths, and refuses, changing nothing, when the later work
// touched the command's paths.
func TestUndoOlderMergesOrRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	write("a", "a0")
	write("b", "b0")
	s := newStore(t, dir)
	first, err := s.Take(ctx, "cmd1", "")
	require.NoError(t, err)
	write("a", "a1") // cmd1
	_, err = s.Take(ctx, "cmd2", "")
	require.NoError(t, err)
	write("b", "b1") // cmd2

	rep, err := s.Undo(ctx, first.Seq)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, rep.Restored)
	require.Equal(t, 1, rep.Kept, "b's later change is kept")
	require.Equal(t, map[string]string{"a": `file -rw-r--r-- "a0"`, "b": `file -rw-r--r-- "b1"`}, tree(t, dir))

	// cmd3 changes b again; undoing cmd2 (b0 -> b1) now conflicts.
	third, err := s.Take(ctx, "cmd3", "")
	require.NoError(t, err)
	write("b", "b2")
	before := tree(t, dir)
	_, err = s.Undo(ctx, third.Seq-2) // cmd2's checkpoint
	var conflict *ConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, []string{"b"}, conflict.Paths)
	require.Contains(t, err.Error(), "refused to undo checkpoint")
	require.Equal(t, before, tree(t, dir), "a refused undo changes nothing")
}

// TestUndoNeverWritesThroughLink: a directory replaced by a link out of
// the workspace is put back as a directory; nothing is written outside.
func TestUndoNeverWritesThroughLink(t *testing.T) {
	ctx := context.Background()
	dir, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d", "f"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	s := newStore(t, dir)
	want := tree(t, dir)
	_, err := s.Take(ctx, "cmd", "")
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "d")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "d")))
	_, err = s.Undo(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, want, tree(t, dir))
	ents, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, ents, "nothing written through the link")
}

// TestStateIsPrivate: the store's directories are 0700, its files 0600.
func TestStateIsPrivate(t *testing.T) {
	ctx := context.Background()
	dir, stateDir := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("secret"), 0o644))
	s, err := Open(stateDir, dir, Limits{})
	require.NoError(t, err)
	for range 2 {
		_, err = s.Take(ctx, "cmd", "")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("secret2"), 0o644))
	}
	n := 0
	require.NoError(t, filepath.WalkDir(filepath.Join(stateDir, "checkpoints"), func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		fi, err := d.Info()
		require.NoError(t, err)
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		require.Equal(t, want, fi.Mode().Perm(), p)
		n++
		return nil
	}))
	require.Greater(t, n, 5)
}

// TestPrune keeps Count checkpoints and the content they need only.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(t.TempDir(), dir, Limits{Count: 3})
	require.NoError(t, err)
	for i := range 2 * gcEvery {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte(fmt.Sprint("version ", i)), 0o644))
		_, err := s.Take(ctx, fmt.Sprint("cmd", i), "")
		require.NoError(t, err)
	}
	list, err := s.List()
	require.NoError(t, err)
	require.Len(t, list, 3)
	require.Equal(t, uint64(2*gcEvery), list[0].Seq)
	require.Equal(t, -1, list[0].Changes)
	require.Equal(t, 1, list[1].Changes)
	objs := 0
	filepath.WalkDir(s.obj.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			objs++
		}
		return nil
	})
	require.Equal(t, 3, objs, "the head's content and the two records' befores")

	// Age: all but the newest go.
	s.Now = func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
	_, err = s.Take(ctx, "later", "")
	require.NoError(t, err)
	list, err = s.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
}

// TestGitIgnoredLeftOut: a git workspace's ignored files are neither
// listed nor restored, and the checkpoint names the ignored directories;
// the user's index, HEAD and refs are untouched.
func TestGitIgnoredLeftOut(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "XDG_CONFIG_HOME="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	git("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n*.log\n!keep.log\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "node_modules", "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "node_modules", "x", "i.js"), []byte("1"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.log"), []byte("1"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keep.log"), []byte("1"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "m.go"), []byte("package m"), 0o644))
	git("add", ".gitignore")
	git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
	before := git("status", "--porcelain")
	index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	require.NoError(t, err)

	s, err := Open(t.TempDir(), filepath.Join(dir, "src"), Limits{})
	require.NoError(t, err)
	require.Equal(t, dir, s.Root)
	require.True(t, s.Git)
	info, err := s.Take(ctx, "cmd", "")
	require.NoError(t, err)
	require.Equal(t, []string{"node_modules"}, info.LeftOut)
	head, err := s.readListing()
	require.NoError(t, err)
	var paths []string
	for _, e := range head.Entries {
		paths = append(paths, e.Path)
	}
	require.Equal(t, []string{".gitignore", "keep.log", "src", "src/m.go"}, paths)
	require.Equal(t, before, git("status", "--porcelain"))
	index2, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	require.NoError(t, err)
	require.Equal(t, index, index2, "the user's index is untouched")
}

// TestIgnoreMatchesGit holds the ignore reader to git's own answers
// (git check-ignore) on patterns of each kind.
func TestIgnoreMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	rules := "*.o\n/top\nsub/deep\n**/any\nx/**/y\nbuild/\n!keep.o\n\\#lit\nsp\\ \n[a-c]?.z\n*.[!q]w\nd**e\n# comment\n"
	paths := []string{"a.o", "keep.o", "top", "s/top", "sub/deep", "q/sub/deep", "any", "m/n/any", "x/y", "x/a/b/y",
		"build", "b/build", "#lit", "sp ", "sp", "ab.z", "dd.z", "k.pw", "k.qw", "dxe", "d/e", "deep", "m.O"}
	dirs := map[string]bool{"build": true, "b/build": true}
	cmd := exec.Command("git", "init", "-q", dir)
	require.NoError(t, cmd.Run())
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(rules), 0o644))
	r := (&ignoreRules{}).with("", []byte(rules))
	for _, p := range paths {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		if dirs[p] {
			require.NoError(t, os.MkdirAll(full, 0o755))
		} else {
			require.NoError(t, os.WriteFile(full, nil, 0o644))
		}
		cmd := exec.Command("git", "-c", "core.ignoreCase=false", "check-ignore", "-q", "--no-index", p)
		cmd.Dir = dir
		err := cmd.Run()
		var exit *exec.ExitError
		gitSays := err == nil
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
			t.Fatalf("git check-ignore %s: %v", p, err)
		}
		// git judges a path by its parents too; the walk never goes
		// into an ignored directory, so ask the same of the reader.
		ours := false
		parts := strings.Split(p, "/")
		for i := range parts {
			if r.ignored(strings.Join(parts[:i+1], "/"), i < len(parts)-1 || dirs[p]) {
				ours = true
				break
			}
		}
		require.Equal(t, gitSays, ours, "%q", p)
	}
}

func FuzzDecodeListing(f *testing.F) {
	f.Add(encodeListing(&listing{Seq: 3, Entries: []Entry{{Path: "a", Kind: KindFile, Mode: 0o644, Size: 3}, {Path: "b", Kind: KindLink, Mode: 0o777, Link: "a"}}}))
	f.Add([]byte(magic + "S"))
	f.Add(encodeListing(&listing{Seq: 1, Entries: []Entry{{Path: "c", Kind: KindFile, Mode: 0o755, Size: 5, Blob: "0123456789abcdef0123456789abcdef01234567"}}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := decodeListing(data)
		if err == nil {
			require.True(t, slices.IsSortedFunc(l.Entries, func(a, b Entry) int { return comparePaths(a.Path, b.Path) }))
			require.Equal(t, data, encodeListing(l))
		}
		// The checksum hides the body from the fuzzer: read it bare too.
		if l, err := decodeListingBody(data); err == nil {
			for _, e := range l.Entries {
				require.True(t, validPath(e.Path))
			}
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(&record{Seq: 1, Changes: []Change{{Path: "a", Before: &Entry{Path: "a", Kind: KindDir, Mode: 0o755}}}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if rec, err := decodeRecord(data); err == nil {
			require.Equal(t, data, encodeRecord(rec))
		}
		if rec, err := decodeRecordBody(data); err == nil {
			for _, c := range rec.Changes {
				require.True(t, c.Before != nil || c.After != nil)
			}
		}
	})
}

func FuzzDecodeInfo(f *testing.F) {
	f.Add([]byte(`{"seq":1,"time":"2026-01-01T00:00:00Z","root":"/w","entries":2,"copied":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if i, err := decodeInfo(data); err == nil {
			require.NotZero(t, i.Seq)
		}
	})
}

// TestUndoKeepsNeighbours: the temporary file a restore writes beside a
// path never takes the name of one the workspace has.
func TestUndoKeepsNeighbours(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("a0"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.execgate-undo-0"), []byte("mine"), 0o600))
	s := newStore(t, dir)
	want := tree(t, dir)
	_, err := s.Take(ctx, "cmd", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("a1"), 0o644))
	_, err = s.Undo(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, want, tree(t, dir))
}

// TestTakeConcurrent: checkpoints taken at once by several processes of
// one workspace (here, stores) queue on the lock and form one chain.
func TestTakeConcurrent(t *testing.T) {
	ctx := context.Background()
	dir, stateDir := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644))
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			s, err := Open(stateDir, dir, Limits{})
			if err == nil {
				_, err = s.Take(ctx, "cmd", "")
			}
			errs <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
	s, err := Open(stateDir, dir, Limits{})
	require.NoError(t, err)
	list, err := s.List()
	require.NoError(t, err)
	require.Len(t, list, 8)
	for i, info := range list {
		require.Equal(t, uint64(8-i), info.Seq)
		if i > 0 {
			require.Equal(t, 0, info.Changes, "seq %d", info.Seq)
		}
	}
}

// TestDamagedHeadStartsOver: a listing cut short is never read as a
// state: the chain starts again, and undo has nothing to restore from it.
func TestDamagedHeadStartsOver(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644))
	s := newStore(t, dir)
	_, err := s.Take(ctx, "cmd", "")
	require.NoError(t, err)
	head := filepath.Join(s.Dir(), "listing")
	data, err := os.ReadFile(head)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(head, data[:len(data)-1], 0o600))
	_, err = s.Undo(ctx, 0)
	require.ErrorIs(t, err, ErrDamaged)
	info, err := s.Take(ctx, "cmd2", "")
	require.NoError(t, err)
	require.Equal(t, uint64(1), info.Seq)
	list, err := s.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
}

// TestUndoChecksContent: content damaged in the store is not restored.
func TestUndoChecksContent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("a0"), 0o644))
	s := newStore(t, dir)
	_, err := s.Take(ctx, "cmd", "")
	require.NoError(t, err)
	head, err := s.readListing()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.obj.path(head.Entries[0].Hash), []byte("XX"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("a1"), 0o644))
	_, err = s.Undo(ctx, 0)
	require.ErrorIs(t, err, ErrDamaged)
	data, err := os.ReadFile(filepath.Join(dir, "a"))
	require.NoError(t, err)
	require.Equal(t, "a1", string(data), "the file is left as it was")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temporary file left behind")
}

// TestUnreadableDirectoryLeftOut: a directory this user cannot read is
// left out and named, not a reason to take no checkpoint at all.
func TestUnreadableDirectoryLeftOut(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	ctx := context.Background()
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked")
	require.NoError(t, os.Mkdir(locked, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(locked, "x"), nil, 0o644))
	require.NoError(t, os.Chmod(locked, 0o000))
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	info, err := newStore(t, dir).Take(ctx, "cmd", "")
	require.NoError(t, err)
	require.Equal(t, []string{"locked (unreadable)"}, info.LeftOut)
}

// FuzzIgnore reads a repository's .gitignore (text the repository, not
// the user, chooses) and matches paths with it: never a panic.
func FuzzIgnore(f *testing.F) {
	f.Add([]byte("*.o\n!keep.o\n/build/\n**/x/**/y\n[a-\\]]?\\ \n"), "a/b/c.o", true)
	f.Add([]byte("[[:alpha:]]*\n[!\n\\"), "x", false)
	f.Fuzz(func(t *testing.T, data []byte, path string, dir bool) {
		r := (&ignoreRules{}).with("sub", data)
		if validPath(path) {
			r.ignored("sub/"+path, dir)
			r.ignored(path, dir)
		}
	})
}

// TestIgnoreNoBlowUp: a pattern built to backtrack is matched in bounded
// time (wildmatch gives up on a star once a later one failed).
func TestIgnoreNoBlowUp(t *testing.T) {
	r := (&ignoreRules{}).with("", []byte(strings.Repeat("*a", 30)+"*b\n"+strings.Repeat("**/a", 20)+"/b\n"))
	name := strings.Repeat("a", 200)
	deep := strings.Repeat("a/", 100) + "c"
	start := time.Now()
	require.False(t, r.ignored(name, false))
	require.False(t, r.ignored(deep, false))
	require.Less(t, time.Since(start), 2*time.Second)
}
