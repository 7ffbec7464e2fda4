// Package treetest describes a directory tree for tests that must show
// two trees equal byte for byte (every path's type, mode, content and
// link target), and makes the tree of links the path tests walk.
package treetest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Describe maps every path below root, relative to it, to its type, mode,
// content and link target (links are not followed). Directories named in
// skip are left out with all they hold (".git").
func Describe(root string, skip ...string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() && slices.Contains(skip, d.Name()) {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link -> " + target
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %v", fi.Mode())
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %v %q", fi.Mode(), data)
		}
		return nil
	})
	return out, err
}
