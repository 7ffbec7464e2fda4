package checkpoint

import (
	"path/filepath"
	"slices"
	"strings"
)

// unkept lists the files of need (absolute paths) whose content the
// listing entries of the workspace root does not hold: outside root, not
// listed (left out by the ignore rules the walk reads, which may leave
// out what git itself lists: a .gitignore behind a link, which git does
// not follow, a core.excludesFile, a line past maxIgnoreFile), listed as
// anything but a regular file, or whose content could not be kept. The
// count of files not kept (Info.NotKept) cannot say it: a file left out
// is not counted.
func unkept(root string, entries []Entry, need []string) []string {
	var out []string
	for _, abs := range need {
		if !keeps(root, entries, abs) {
			out = append(out, abs)
		}
	}
	return out
}

// keeps reports whether entries hold the content of the file abs, found
// below root as written or as it resolves on disk (the caller's paths
// may be either).
func keeps(root string, entries []Entry, abs string) bool {
	roots := []string{filepath.Clean(root)}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != roots[0] {
		roots = append(roots, real)
	}
	for _, r := range roots {
		rel, ok := strings.CutPrefix(filepath.Clean(abs), r+string(filepath.Separator))
		if !ok {
			continue
		}
		rel = filepath.ToSlash(rel)
		i, found := slices.BinarySearchFunc(entries, rel, func(e Entry, p string) int { return comparePaths(e.Path, p) })
		if found {
			e := &entries[i]
			return e.Kind == KindFile && e.Missing == Kept
		}
	}
	return false
}
