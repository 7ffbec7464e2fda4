package checkpoint

import (
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// diff lists the paths that differ between two listings, both ordered by
// comparePaths.
func diff(a, b []Entry) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var c int
		switch {
		case i == len(a):
			c = 1
		case j == len(b):
			c = -1
		default:
			c = comparePaths(a[i].Path, b[j].Path)
		}
		switch {
		case c < 0:
			out = append(out, Change{Path: a[i].Path, Before: stripStat(a[i])})
			i++
		case c > 0:
			out = append(out, Change{Path: b[j].Path, After: stripStat(b[j])})
			j++
		default:
			if !unchanged(&a[i], &b[j]) {
				out = append(out, Change{Path: a[i].Path, Before: stripStat(a[i]), After: stripStat(b[j])})
			}
			i++
			j++
		}
	}
	return out
}

func stripStat(e Entry) *Entry {
	e.Mtime, e.Ctime, e.Ino, e.Dev, e.Racy = 0, 0, 0, 0, false
	return &e
}

// unchanged reports whether two states of a path are the same: equal
// kinds, permissions, content and targets; a file whose content was not
// kept in either is the same only if its stat is (nothing else can tell).
func unchanged(a, b *Entry) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.Mode != b.Mode {
		return false
	}
	switch a.Kind {
	case KindFile:
		if a.Missing == Kept && b.Missing == Kept {
			return a.Size == b.Size && a.Hash == b.Hash
		}
		return a.Size == b.Size && a.Mtime == b.Mtime && a.Ctime == b.Ctime && a.Ino == b.Ino && a.Mtime != 0
	case KindLink:
		return a.Link == b.Link
	case KindOther:
		return a.Ino == b.Ino && a.Dev == b.Dev && a.Ino != 0
	}
	return true
}

// gcEvery is how many checkpoints pass between two sweeps of the content
// store (a sweep reads every record and lists every object).
const gcEvery = 16

// prune drops the checkpoints past the limits, oldest first, never the
// newest (the head of the chain), then sweeps the content no checkpoint
// needs. Pruning is best effort: what fails is tried again next time.
func (s *Store) prune(newest uint64) {
	seqs := s.seqs()
	cut := s.Now().Add(-s.limits.Age)
	for len(seqs) > 1 {
		old := seqs[0]
		if len(seqs) <= s.limits.Count && !s.olderThan(old, cut) {
			break
		}
		s.drop(old)
		seqs = seqs[1:]
	}
	// Content the dropped checkpoints alone needed waits for the sweep.
	if newest%gcEvery != 0 {
		return
	}
	for {
		size := s.sweep(seqs)
		if size <= s.limits.StoreBytes || len(seqs) <= 1 {
			return
		}
		s.drop(seqs[0])
		seqs = seqs[1:]
	}
}

func (s *Store) olderThan(seq uint64, cut time.Time) bool {
	data, err := readSmall(filepath.Join(s.dir, metaName(seq)), 1<<20)
	if err != nil {
		return true
	}
	i, err := decodeInfo(data)
	return err != nil || i.Time.Before(cut)
}

// sweep removes the content no kept checkpoint needs (the head's files,
// and what each record's changes started from) and returns the size of
// what stays, as the listings give it (an object's size is its file's).
func (s *Store) sweep(seqs []uint64) int64 {
	need := make(map[[32]byte]int64)
	head, err := s.readListing()
	if err != nil {
		return 0 // nothing is swept without the head
	}
	for i := range head.Entries {
		if e := &head.Entries[i]; e.Kind == KindFile && e.Missing == Kept {
			need[e.Hash] = e.Size
		}
	}
	for _, seq := range seqs {
		rec, err := s.readRecord(seq)
		if err != nil {
			continue
		}
		for _, c := range rec.Changes {
			if e := c.Before; e != nil && e.Kind == KindFile && e.Missing == Kept {
				need[e.Hash] = e.Size
			}
		}
	}
	var size int64
	stale := s.Now().Add(-time.Hour)
	subs, _ := os.ReadDir(s.obj.dir)
	for _, sub := range subs {
		d := filepath.Join(s.obj.dir, sub.Name())
		if strings.HasPrefix(sub.Name(), "tmp-") {
			if fi, err := os.Lstat(d); err == nil && fi.ModTime().Before(stale) {
				os.Remove(d) // left by a process that died copying
			}
			continue
		}
		files, _ := os.ReadDir(d)
		for _, f := range files {
			var h [32]byte
			if b, err := hex.DecodeString(f.Name()); err == nil && len(b) == 32 {
				copy(h[:], b)
				if n, ok := need[h]; ok {
					size += n
					continue
				}
			}
			if err := os.Remove(filepath.Join(d, f.Name())); err != nil {
				slog.Debug("checkpoint sweep", "err", err)
			}
		}
	}
	return size
}
