package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitRepo makes a git repository in a temporary directory and returns it
// with a function running git there.
func gitRepo(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	git("init", "-q")
	return dir, git
}

// storedObjects counts the contents copied into the store.
func storedObjects(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	filepath.WalkDir(s.obj.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// TestFirstCheckpointUsesIndexBlobs: the first checkpoint of a git
// workspace copies only what the index does not already hold byte for
// byte (a modified file, an untracked one, one git converts on its way in),
// and undo puts every file back exactly, the others read from git.
func TestFirstCheckpointUsesIndexBlobs(t *testing.T) {
	ctx := context.Background()
	dir, git := gitRepo(t)
	for i := range 40 {
		p := filepath.Join(dir, fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%d", i))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, fmt.Appendf(nil, "file %d\n", i), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "crlf.txt"), []byte("one\r\ntwo\r\n"), 0o644))
	git("-c", "core.autocrlf=true", "add", "-A")
	git("commit", "-qm", "x")
	// The index holds crlf.txt with LF endings: its bytes are not the blob.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d1", "f1"), []byte("modified\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "new.txt"), []byte("untracked\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d2", "f2"), []byte("staged, not committed\n"), 0o644))
	git("add", "d2/f2")
	want := tree(t, dir)

	s := newStore(t, dir)
	info, err := s.Take(ctx, "first", "")
	require.NoError(t, err)
	require.Equal(t, 4, storedObjects(t, s), "only d1/f1, d2/f2, new.txt and crlf.txt are copied")
	require.Equal(t, int64(len("modified\n")+len("untracked\n")+len("one\r\ntwo\r\n")+len("staged, not committed\n")), info.Copied)

	for _, d := range []string{"d0", "d1", "d2", "d3"} {
		require.NoError(t, os.RemoveAll(filepath.Join(dir, d)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.sh"), []byte("clobbered"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "crlf.txt"), []byte("x"), 0o644))
	rep, err := s.Undo(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, want, tree(t, dir))
	require.Len(t, rep.Recreated, 44)
}

// TestUndoBlobGone: a file kept as a git blob that git has since pruned is
// named, and the undo changes nothing.
func TestUndoBlobGone(t *testing.T) {
	ctx := context.Background()
	dir, git := gitRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "staged.txt"), []byte("committed once\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.txt"), []byte("other\n"), 0o644))
	git("add", "staged.txt")
	git("commit", "-qm", "x")
	s := newStore(t, dir)
	_, err := s.Take(ctx, "cmd", "")
	require.NoError(t, err)
	require.Equal(t, 1, storedObjects(t, s), "staged.txt is kept as its blob")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "staged.txt"), []byte("overwritten\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "other.txt")))
	// History rewritten, and everything unreachable pruned at once.
	git("rm", "-q", "-f", "--cached", "staged.txt")
	git("commit", "-q", "--amend", "--allow-empty", "-m", "y")
	git("reflog", "expire", "--expire=now", "--all")
	git("gc", "-q", "--prune=now")
	before := tree(t, dir)

	_, err = s.Undo(ctx, 0)
	require.ErrorIs(t, err, ErrBlobGone)
	require.Contains(t, err.Error(), "staged.txt")
	require.NotContains(t, err.Error(), "other.txt")
	require.Equal(t, before, tree(t, dir), "nothing changed, no temporary file")
}

// TestUndoBlobChecked: a repository whose object for the blob id holds
// other bytes (another repository put in its place) is never restored
// from: the content is checked against its SHA-256.
func TestUndoBlobChecked(t *testing.T) {
	ctx := context.Background()
	dir, git := gitRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("original\n"), 0o644))
	git("add", "a.txt")
	git("commit", "-qm", "x")
	s := newStore(t, dir)
	_, err := s.Take(ctx, "cmd", "")
	require.NoError(t, err)
	head, err := s.readListing()
	require.NoError(t, err)
	require.NotEmpty(t, head.Entries[0].Blob)
	// Point the listing's entry at another blob of the repository, as a
	// damaged or swapped repository would answer.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("other bytes\n"), 0o644))
	other := strings.TrimSpace(git("hash-object", "-w", "b.txt"))
	require.NoError(t, os.Remove(filepath.Join(dir, "b.txt")))
	head.Entries[0].Blob = other
	require.NoError(t, s.writeFile("listing", encodeListing(head)))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644))
	_, err = s.Undo(ctx, 0)
	require.ErrorIs(t, err, ErrDamaged)
	data, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "changed\n", string(data))
}

// TestUndoRestoresTreeGit is TestUndoRestoresTree in a repository whose
// files were committed first: the first checkpoint keeps them as blobs.
func TestUndoRestoresTreeGit(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 2626))
			dir, git := gitRepo(t)
			fileOps(t, r, dir, 10)
			git("add", "-A")
			git("commit", "-qm", "x", "--allow-empty")
			fileOps(t, r, dir, r.IntN(3)) // some changes not committed
			s := newStore(t, dir)
			want := tree(t, dir)
			_, err := s.Take(ctx, "ops", "")
			require.NoError(t, err)
			fileOps(t, r, dir, 1+r.IntN(12))
			_, err = s.Undo(ctx, 0)
			require.NoError(t, err)
			require.Equal(t, want, tree(t, dir))
		})
	}
}

// TestPartialCloneNeverFetches: in a partial clone, git asked for a
// missing object fetches it through the transport the repository's
// configuration names (here ext::, a program). execgate then never asks:
// the first checkpoint copies the files, and an undo needing a blob
// refuses instead of letting git fetch it.
func TestPartialCloneNeverFetches(t *testing.T) {
	ctx := context.Background()
	dir, git := gitRepo(t)
	canary := filepath.Join(t.TempDir(), "fetched")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("committed\n"), 0o644))
	git("add", "a.txt")
	git("commit", "-qm", "x")
	oid := strings.TrimSpace(git("rev-parse", "HEAD:a.txt"))
	s := newStore(t, dir)
	_, err := s.Take(ctx, "cmd", "")
	require.NoError(t, err)
	require.Equal(t, 0, storedObjects(t, s), "a.txt is kept as its blob")

	// The repository becomes a partial clone whose remote runs a program,
	// and loses the blob.
	for _, kv := range [][2]string{
		{"core.repositoryFormatVersion", "1"}, {"extensions.partialClone", "origin"},
		{"remote.origin.url", "ext::sh -c touch% " + canary}, {"remote.origin.promisor", "true"},
		{"protocol.ext.allow", "always"},
	} {
		git("config", kv[0], kv[1])
	}
	require.NoError(t, os.Remove(filepath.Join(dir, ".git", "objects", oid[:2], oid[2:])))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644))
	_, err = s.Undo(ctx, 0)
	require.ErrorContains(t, err, "partial clone")
	require.NoFileExists(t, canary, "git fetched")
	data, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "changed\n", string(data))

	fresh := newStore(t, dir)
	_, err = fresh.Take(ctx, "cmd", "")
	require.NoError(t, err)
	require.Equal(t, 1, storedObjects(t, fresh), "copied, not kept as a blob")
	require.NoFileExists(t, canary, "git fetched")
}
