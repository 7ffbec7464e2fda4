package treetest

import (
	"os"
	"path/filepath"
	"testing"
)

// Links makes a tree full of symbolic links in a temporary directory and
// returns its root, resolved: links into the tree, out of it (to a key
// under home/.ssh), to nothing, in loops, through "..", and absolute.
// The path resolver's tests and the glob expansion's fuzzing walk the
// same tree.
func Links(t testing.TB) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b/c", "home/.ssh", "x"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/b/c/f", "home/.ssh/id_rsa", "x/y"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"a/up":       "..",
		"a/b/key":    "../../home/.ssh/id_rsa",
		"a/b/dir":    "../../home/.ssh",
		"a/abs":      root + "/x",
		"a/nothing":  "missing/deeper",
		"loop1":      "loop2",
		"loop2":      "loop1",
		"a/b/c/self": ".",
		"a/chain":    "b/dir",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
