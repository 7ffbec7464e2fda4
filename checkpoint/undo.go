package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// Report says what an undo changed.
type Report struct {
	// Seq is the checkpoint undone; Saved the checkpoint taken of the
	// workspace just before the undo (so that the undo can be undone).
	Seq, Saved uint64
	// Restored were changed by the command and are put back; Recreated
	// were deleted; Removed were created by it.
	Restored, Recreated, Removed []string
	// Kept counts the paths later commands changed, left as they are
	// (the undo merged: they are not the command's changes).
	Kept int
	// Left are paths removal left in place: directories that hold files
	// the checkpoint does not cover (ignored ones).
	Left []string
	// Preview is set for a report of what an undo would change (Store.Preview):
	// nothing was changed, and Saved is 0.
	Preview bool
}

// Changed is how many paths the undo changed.
func (r *Report) Changed() int { return len(r.Restored) + len(r.Recreated) + len(r.Removed) }

// ConflictError refuses an undo whose command's changes were changed
// again since: undoing it would lose the later work.
type ConflictError struct {
	Seq   uint64
	Paths []string
}

func (e *ConflictError) Error() string {
	shown := e.Paths
	more := ""
	if len(shown) > 3 {
		shown, more = shown[:3], fmt.Sprintf(" and %d more", len(e.Paths)-3)
	}
	return fmt.Sprintf("refused to undo checkpoint %d: later changes touch the same paths (%s%s); undo the later checkpoints first", e.Seq, strings.Join(shown, ", "), more)
}

// ErrNoCheckpoint is returned when there is nothing to undo.
var ErrNoCheckpoint = errors.New("no checkpoint to undo in this workspace")

// Undo takes back the changes the command of checkpoint seq made (0: the
// newest): the paths it changed, up to the next checkpoint, go back to
// what they were before it. Changes made later are kept when they touch
// other paths (a merge, counted in Report.Kept); when they touch the same
// ones, Undo refuses with a *ConflictError and changes nothing.
func (s *Store) Undo(ctx context.Context, seq uint64) (*Report, error) {
	return s.undo(ctx, seq, false)
}

// Preview says what Undo(ctx, seq) would change now, or why it would
// refuse, changing nothing: the confirmation an approver shows first.
func (s *Store) Preview(ctx context.Context, seq uint64) (*Report, error) {
	return s.undo(ctx, seq, true)
}

func (s *Store) undo(ctx context.Context, seq uint64, preview bool) (*Report, error) {
	if err := s.mkdirs(); err != nil {
		return nil, err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	head, err := s.readListing()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoCheckpoint
	} else if err != nil {
		return nil, fmt.Errorf("checkpoints of %s: %w", s.Root, err)
	}
	if seq == 0 {
		seq = head.Seq
	}
	if seq > head.Seq {
		return nil, fmt.Errorf("no checkpoint %d in %s (the newest is %d)", seq, s.Root, head.Seq)
	}
	if _, err := os.Lstat(s.dir + "/" + metaName(seq)); err != nil {
		return nil, fmt.Errorf("no checkpoint %d in %s (pruned or never taken; see execgate undo --list)", seq, s.Root)
	}
	// The workspace now, which the undo starts from and keeps as a
	// checkpoint of its own.
	p, err := s.scan(ctx, fmt.Sprintf("execgate undo %d", seq), "")
	if err != nil {
		return nil, err
	}
	cur := p.next.Entries
	var changes []Change
	if seq == head.Seq {
		changes = diff(head.Entries, cur)
	} else {
		rec, err := s.readRecord(seq)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %d: %w", seq, err)
		}
		changes = rec.Changes
	}
	pl, err := plan(seq, changes, cur)
	if err != nil {
		return nil, err
	}
	if err := s.contentAvailable(ctx, seq, pl); err != nil {
		return nil, err
	}
	if seq < head.Seq {
		pl.report.Kept = s.laterPaths(seq, head, cur)
	}
	if preview {
		pl.report.Preview = true
		for _, c := range pl.changes {
			switch {
			case c.Before == nil:
				pl.report.Removed = append(pl.report.Removed, c.Path)
			case c.Before.Kind == KindOther:
			case c.After == nil:
				pl.report.Recreated = append(pl.report.Recreated, c.Path)
			default:
				pl.report.Restored = append(pl.report.Restored, c.Path)
			}
		}
		return &pl.report, nil
	}
	if err := s.commit(p); err != nil {
		return nil, err
	}
	pl.report.Saved = p.info.Seq
	if err := s.apply(ctx, pl); err != nil {
		return &pl.report, fmt.Errorf("undo %d stopped part way (undo %d puts back the state before it): %w", seq, pl.report.Saved, err)
	}
	s.prune(p.info.Seq)
	return &pl.report, nil
}

// laterPaths counts the paths changed after checkpoint seq's command: by
// the commands of later checkpoints, and since the newest.
func (s *Store) laterPaths(seq uint64, head *listing, cur []Entry) int {
	paths := map[string]bool{}
	for k := seq + 1; k < head.Seq; k++ {
		if rec, err := s.readRecord(k); err == nil {
			for _, c := range rec.Changes {
				paths[c.Path] = true
			}
		}
	}
	for _, c := range diff(head.Entries, cur) {
		paths[c.Path] = true
	}
	return len(paths)
}

// undoPlan is the changes an undo makes, checked.
type undoPlan struct {
	changes []Change // Before: the state to restore; After: the state now
	report  Report
}

// plan checks that the command's changes are still what the workspace
// holds at their paths, and that their content is kept.
func plan(seq uint64, changes []Change, cur []Entry) (*undoPlan, error) {
	now := make(map[string]*Entry, len(cur))
	for i := range cur {
		now[cur[i].Path] = &cur[i]
	}
	touched := make(map[string]*Change, len(changes))
	for i := range changes {
		touched[changes[i].Path] = &changes[i]
	}
	// target is a path's state once undone.
	target := func(p string) *Entry {
		if c, ok := touched[p]; ok {
			return c.Before
		}
		return now[p]
	}
	pl := &undoPlan{report: Report{Seq: seq}}
	var conflicts, lost []string
	for _, c := range changes {
		if !unchanged(now[c.Path], c.After) {
			conflicts = append(conflicts, c.Path)
			continue
		}
		if b := c.Before; b != nil {
			if b.Kind == KindFile && b.Missing != Kept {
				lost = append(lost, c.Path+" ("+b.Missing.String()+")")
			}
			if dir := path.Dir(c.Path); dir != "." {
				if t := target(dir); t == nil || t.Kind != KindDir {
					conflicts = append(conflicts, dir)
				}
			}
		}
		pl.changes = append(pl.changes, Change{Path: c.Path, Before: c.Before, After: now[c.Path]})
	}
	// A directory the undo removes or replaces must not hold what came
	// later.
	for _, c := range changes {
		if n := now[c.Path]; n == nil || n.Kind != KindDir || (c.Before != nil && c.Before.Kind == KindDir) {
			continue
		}
		for p := range now {
			if strings.HasPrefix(p, c.Path+"/") && touched[p] == nil {
				conflicts = append(conflicts, p)
			}
		}
	}
	if len(conflicts) > 0 {
		slices.Sort(conflicts)
		return nil, &ConflictError{Seq: seq, Paths: slices.Compact(conflicts)}
	}
	if len(lost) > 0 {
		return nil, fmt.Errorf("cannot undo checkpoint %d: the content of %s was not kept", seq, strings.Join(lost, ", "))
	}
	return pl, nil
}

// apply makes the plan's changes through an os.Root: nothing is written
// through a symbolic link, nor outside the workspace.
func (s *Store) apply(ctx context.Context, pl *undoPlan) error {
	root, err := os.OpenRoot(s.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	blobs := &blobReader{ctx: ctx, root: s.Root}
	defer blobs.Close()
	// Removals first, deepest first: what the command created, and what
	// changed kind.
	for _, c := range slices.Backward(pl.changes) {
		if c.After == nil || (c.Before != nil && c.Before.Kind == c.After.Kind && c.Before.Kind != KindLink) {
			continue
		}
		if err := root.Remove(c.Path); err != nil {
			if c.After.Kind == KindDir && c.Before == nil {
				pl.report.Left = append(pl.report.Left, c.Path)
				continue
			}
			return err
		}
		if c.Before == nil {
			pl.report.Removed = append(pl.report.Removed, c.Path)
		}
	}
	// Then what was there before, parents first; directories get their
	// permissions last, so that a read-only one can be filled.
	var dirs []*Entry
	for _, c := range pl.changes {
		b := c.Before
		if b == nil {
			continue
		}
		switch b.Kind {
		case KindDir:
			if c.After == nil || c.After.Kind != KindDir {
				if err := root.Mkdir(c.Path, 0o700); err != nil {
					return err
				}
			}
			dirs = append(dirs, b)
		case KindFile:
			if err := s.restoreFile(root, blobs, b); err != nil {
				return err
			}
		case KindLink:
			if err := root.Symlink(b.Link, c.Path); err != nil {
				return err
			}
		default:
			continue // a FIFO, socket or device is not recreated
		}
		if c.After == nil {
			pl.report.Recreated = append(pl.report.Recreated, c.Path)
		} else {
			pl.report.Restored = append(pl.report.Restored, c.Path)
		}
	}
	for _, d := range slices.Backward(dirs) {
		if err := root.Chmod(d.Path, fs.FileMode(d.Mode)&fs.ModePerm|modeBits(d.Mode)); err != nil {
			return err
		}
	}
	return nil
}

// modeBits turns setuid, setgid and sticky into os.FileMode's bits.
func modeBits(m uint32) fs.FileMode {
	var out fs.FileMode
	if m&0o4000 != 0 {
		out |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		out |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		out |= fs.ModeSticky
	}
	return out
}

// restoreFile writes a file's kept content beside it and renames it into
// place, so that the path holds the old or the new file, never half.
func (s *Store) restoreFile(root *os.Root, blobs *blobReader, e *Entry) error {
	var src io.Reader
	if f, err := s.obj.open(e.Hash); err == nil {
		defer f.Close()
		src = f
	} else if e.Blob != "" && errors.Is(err, fs.ErrNotExist) {
		if src, err = blobs.open(e.Blob); err != nil {
			return fmt.Errorf("content of %s: %w", e.Path, err)
		}
	} else {
		return fmt.Errorf("content of %s: %w", e.Path, err)
	}
	var err error
	var f *os.File
	var tmp string
	for i := 0; ; i++ {
		// A name of its own beside the file: never one the workspace has.
		tmp = fmt.Sprintf("%s.execgate-undo-%d", e.Path, i)
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i == 100 {
			return fmt.Errorf("restore %s: %w", e.Path, err)
		}
	}
	// The content is checked as it is copied: a store file damaged since
	// (by hand, by a crash) is never restored as if it were the file.
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), src)
	if err == nil && !bytes.Equal(h.Sum(nil), e.Hash[:]) {
		err = fmt.Errorf("%w: the stored content does not match its hash", ErrDamaged)
	}
	if err == nil {
		err = f.Chmod(fs.FileMode(e.Mode)&fs.ModePerm | modeBits(e.Mode))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, e.Path)
	}
	if err != nil {
		root.Remove(tmp)
		return fmt.Errorf("restore %s: %w", e.Path, err)
	}
	return nil
}

// contentAvailable checks, before anything is changed, that every file the
// undo would put back can be read: from the store, or for a file kept as
// a git blob, from the repository (which git gc may have emptied of it).
func (s *Store) contentAvailable(ctx context.Context, seq uint64, pl *undoPlan) error {
	var paths, oids []string
	for _, c := range pl.changes {
		b := c.Before
		if b == nil || b.Kind != KindFile || b.Blob == "" {
			continue
		}
		if _, err := os.Lstat(s.obj.path(b.Hash)); err == nil {
			continue
		}
		paths, oids = append(paths, c.Path), append(oids, b.Blob)
	}
	if len(oids) == 0 {
		return nil
	}
	have, err := gitHas(ctx, s.Root, oids)
	if err != nil {
		return fmt.Errorf("cannot undo checkpoint %d: files kept as git objects cannot be read: %w", seq, err)
	}
	var gone []string
	for i, oid := range oids {
		if !have[oid] {
			gone = append(gone, paths[i])
		}
	}
	if len(gone) == 0 {
		return nil
	}
	more := ""
	if len(gone) > 5 {
		gone, more = gone[:5], fmt.Sprintf(" and %d more", len(gone)-5)
	}
	return fmt.Errorf("cannot undo checkpoint %d, nothing was changed: %s%s cannot be restored: %w", seq, strings.Join(gone, ", "), more, ErrBlobGone)
}
