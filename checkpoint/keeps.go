package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
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

// HeldAt lists those of paths (absolute, below the workspace) that the
// workspace held, as anything, at its newest checkpoint taken at or
// before t: the newest listing, taken back through the records to that
// checkpoint. None when no checkpoint is that old and none was pruned
// (the oldest kept stands in for a pruned one). A record, or a
// checkpoint's description, that cannot be read leaves the path counted
// as held (the caller then asks). It is the evidence that a file is older
// than its birth time says: an editor's save by rename, or git stash -u
// and pop, makes the file anew.
func (s *Store) HeldAt(paths []string, t time.Time) []string {
	if len(paths) == 0 {
		return nil
	}
	seqs := s.seqs()
	infos, err := s.List()
	if err != nil {
		return nil
	}
	if s.undated(seqs, infos) {
		// A checkpoint of no known time may be the one that old.
		return slices.Clone(paths)
	}
	var at uint64
	for _, i := range infos { // newest first
		if !i.Time.After(t) {
			at = i.Seq
			break
		}
	}
	if at == 0 && len(infos) > 0 && infos[len(infos)-1].Seq > 1 {
		// None that old is kept, but older ones were pruned (100 writing
		// commands within ScratchAge): the oldest kept stands in, a file
		// it held being older than the task's last hundred commands. With
		// only the newest kept, nothing is known.
		if oldest := infos[len(infos)-1]; oldest.Seq != infos[0].Seq {
			at = oldest.Seq
		} else {
			return slices.Clone(paths)
		}
	}
	if at == 0 {
		return nil
	}
	head, err := s.readListing()
	if err != nil {
		return slices.Clone(paths)
	}
	rels := make([]string, len(paths))
	held := make([]bool, len(paths))
	for i, abs := range paths {
		if rels[i] = s.relative(abs); rels[i] == "" {
			held[i] = true // not the workspace's: nothing says it is new
			continue
		}
		_, held[i] = slices.BinarySearchFunc(head.Entries, rels[i], func(e Entry, p string) int { return comparePaths(e.Path, p) })
	}
	for seq := head.Seq - 1; seq >= at && seq > 0; seq-- {
		rec, err := s.readRecord(seq)
		if err != nil {
			return slices.Clone(paths)
		}
		for _, c := range rec.Changes {
			for i, rel := range rels {
				if rel != "" && c.Path == rel {
					held[i] = c.Before != nil
				}
			}
		}
	}
	var out []string
	for i, h := range held {
		if h {
			out = append(out, paths[i])
		}
	}
	return out
}

// undated reports whether a checkpoint of seqs has a description List
// could not read (infos leaves it out) though it is still there: its time
// is unknown. One gone since was pruned.
func (s *Store) undated(seqs []uint64, infos []Info) bool {
	for _, seq := range seqs {
		if slices.ContainsFunc(infos, func(i Info) bool { return i.Seq == seq }) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(s.dir, metaName(seq))); err == nil {
			return true
		}
	}
	return false
}

// relative is abs as the listing names it, below the workspace as written
// or as it resolves on disk; "" when it is below neither.
func (s *Store) relative(abs string) string {
	roots := []string{filepath.Clean(s.Root)}
	if real, err := filepath.EvalSymlinks(s.Root); err == nil && real != roots[0] {
		roots = append(roots, real)
	}
	for _, r := range roots {
		if rel, ok := strings.CutPrefix(filepath.Clean(abs), r+string(filepath.Separator)); ok {
			return filepath.ToSlash(rel)
		}
	}
	return ""
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
