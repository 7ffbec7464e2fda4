package gitconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadIndexAgainstGit: the entries read from real indexes (versions
// 2, 3 with skip-worktree, 4 with prefix compression, SHA-256 object
// names) are the ones git ls-files lists; a split index is refused.
func TestReadIndexAgainstGit(t *testing.T) {
	env := newTestEnv(t)
	for _, tc := range []struct {
		name   string
		init   []string
		prep   [][]string
		hash   int
		refuse bool
	}{
		{name: "v2", hash: 20},
		{name: "v3 skip-worktree", prep: [][]string{{"update-index", "--skip-worktree", "d/.gitattributes"}}, hash: 20},
		{name: "v4", prep: [][]string{{"update-index", "--index-version", "4"}}, hash: 20},
		{name: "sha256", init: []string{"--object-format=sha256"}, hash: 32},
		{name: "split", prep: [][]string{{"update-index", "--split-index"}}, hash: 20, refuse: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := t.TempDir()
			env.mustGit(t, repo, append([]string{"init", "-q"}, tc.init...)...)
			for _, f := range []string{"a.txt", "d/.gitattributes", "d/e/long-name-" + strings.Repeat("x", 80) + ".txt", "d/e/f.txt", "z"} {
				p := filepath.Join(repo, f)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(f), 0o644))
			}
			env.mustGit(t, repo, "add", ".")
			for _, p := range tc.prep {
				env.mustGit(t, repo, p...)
			}
			b, err := os.ReadFile(filepath.Join(repo, ".git", "index"))
			require.NoError(t, err)
			entries, err := ReadIndex(b, tc.hash)
			if tc.refuse {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name)
				if e.Name == "d/.gitattributes" {
					assert.Equal(t, tc.name == "v3 skip-worktree", e.SkipWorktree)
					assert.Equal(t, uint32(len("d/.gitattributes")), e.Size)
				}
			}
			want := strings.Split(strings.TrimSpace(env.mustGit(t, repo, "ls-files")), "\n")
			assert.Equal(t, want, names)
		})
	}
}

// FuzzReadIndex: no input panics, whatever the hash size.
func FuzzReadIndex(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00" + strings.Repeat("\x00", 20)))
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x01" + strings.Repeat("\x00", 62) + "\x05x\x00" + strings.Repeat("\x00", 20)))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ReadIndex(b, 20)
		_, _ = ReadIndex(b, 32)
	})
}
