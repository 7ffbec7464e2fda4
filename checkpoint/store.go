package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/execgate/execgate/internal/state"
)

// Store holds the checkpoints of one workspace.
type Store struct {
	// Root is the workspace: the top of the git working tree holding the
	// directory Open was given, else that directory.
	Root string
	// Git is set for a git working tree: its ignore rules decide what is
	// left out.
	Git    bool
	dir    string
	limits Limits
	obj    objects
	// Now is the clock (tests move it).
	Now func() time.Time
}

// Info describes one checkpoint: the state of the workspace before the
// command it names ran.
type Info struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Root    string    `json:"root"`
	Command string    `json:"command,omitempty"`
	// Event is the audit log event of the command, if any.
	Event string `json:"event,omitempty"`
	// Entries is how many paths the listing holds; Copied the bytes of
	// content this checkpoint copied.
	Entries int   `json:"entries"`
	Copied  int64 `json:"copied"`
	// NotKept counts the files whose content could not be kept (too
	// large, unreadable, over the copy budget): a command that changed
	// one cannot be undone.
	NotKept int `json:"not_kept,omitempty"`
	// LeftOut names directories left out (ignored, or a tool's), at most
	// 20.
	LeftOut []string `json:"left_out,omitempty"`
	// Changes is how many paths changed from this checkpoint to the next,
	// -1 for the newest (its command's changes are not recorded yet).
	Changes int `json:"-"`
}

// ID is the checkpoint's name for `execgate undo`.
func (i *Info) ID() string { return strconv.FormatUint(i.Seq, 10) }

// Workspace finds the workspace of dir: the nearest directory at or above
// it holding .git, else dir itself.
func Workspace(dir string) (root string, git bool) {
	dir = filepath.Clean(dir)
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		up := filepath.Dir(d)
		if up == d {
			return dir, false
		}
		d = up
	}
}

// Open opens the checkpoints of the workspace holding dir, kept below
// stateDir (execgate's state directory, see internal/state).
func Open(stateDir, dir string, limits Limits) (*Store, error) {
	if !filepath.IsAbs(dir) || !filepath.IsAbs(stateDir) {
		return nil, fmt.Errorf("checkpoint: %q or %q is not absolute", dir, stateDir)
	}
	root, git := Workspace(dir)
	s := &Store{
		Root: root, Git: git, limits: limits.orDefault(), Now: time.Now,
		dir: filepath.Join(stateDir, "checkpoints", storeName(root)),
	}
	s.obj = objects{dir: filepath.Join(s.dir, "objects")}
	return s, nil
}

// Dir is where the workspace's checkpoints are kept.
func (s *Store) Dir() string { return s.dir }

func (s *Store) mkdirs() error {
	if err := state.MkdirPrivate(filepath.Dir(s.dir)); err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	if err := state.MkdirPrivate(s.obj.dir); err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	return nil
}

// lock takes the store's lock, waiting for another process's as long as
// ctx allows.
func (s *Store) lock(ctx context.Context) (func(), error) {
	f, err := state.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDWR|os.O_CREATE, state.FileMode)
	if err != nil {
		return nil, fmt.Errorf("checkpoint lock: %w", err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("checkpoint lock: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("checkpoint lock: another execgate holds it: %w", ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// Take records the workspace as it is now, before command runs; event is
// its audit log event ID.
func (s *Store) Take(ctx context.Context, command, event string) (*Info, error) {
	info, _, err := s.TakeKeeping(ctx, command, event, nil)
	return info, err
}

// TakeKeeping is Take for a command that deletes or replaces the files
// need (absolute paths) unasked only because the checkpoint keeps them:
// it also returns those of need it did not keep (see unkept).
func (s *Store) TakeKeeping(ctx context.Context, command, event string, need []string) (*Info, []string, error) {
	if err := s.mkdirs(); err != nil {
		return nil, nil, err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	p, err := s.scan(ctx, command, event)
	if err != nil {
		return nil, nil, err
	}
	if err := s.commit(p); err != nil {
		return nil, nil, err
	}
	s.prune(p.info.Seq)
	return &p.info, unkept(s.Root, p.next.Entries, need), nil
}

// pending is a scan not yet committed to the chain.
type pending struct {
	prev *listing // nil for the first
	next *listing
	info Info
}

func (s *Store) scan(ctx context.Context, command, event string) (*pending, error) {
	prev, err := s.readListing()
	if err != nil {
		// A damaged head breaks the chain: its records no longer lead
		// anywhere. Start again rather than restore from a guess.
		if !errors.Is(err, fs.ErrNotExist) {
			s.dropAll()
		}
		prev = nil
	}
	now := s.Now()
	sc := &scanner{ctx: ctx, root: s.Root, git: s.Git, store: &s.obj, limits: s.limits, start: now.UnixNano()}
	if prev == nil && s.Git {
		// The first checkpoint: what the index already holds is not
		// copied. Without git's answer, everything is (as before).
		if blobs, err := indexBlobs(ctx, s.Root); err == nil {
			sc.blobs = blobs
		} else {
			slog.Debug("checkpoint: index blobs", "root", s.Root, "err", err)
		}
	}
	if prev != nil {
		sc.prev = make(map[string]*Entry, len(prev.Entries))
		for i := range prev.Entries {
			sc.prev[prev.Entries[i].Path] = &prev.Entries[i]
		}
	}
	entries, err := sc.scan()
	if err != nil {
		return nil, fmt.Errorf("checkpoint of %s: %w", s.Root, err)
	}
	next := &listing{Seq: 1, Entries: entries}
	if prev != nil {
		next.Seq = prev.Seq + 1
	}
	return &pending{prev: prev, next: next, info: Info{
		Seq: next.Seq, Time: now.UTC(), Root: s.Root, Command: command, Event: event,
		Entries: len(entries), Copied: sc.copied, NotKept: sc.notKept, LeftOut: sc.leftOut, Changes: -1,
	}}, nil
}

// commit writes the record from the previous head, the new head and its
// description, in that order: a crash between leaves a chain that still
// reads (the new record is then only unused).
func (s *Store) commit(p *pending) error {
	if p.prev != nil {
		rec := &record{Seq: p.prev.Seq, Changes: diff(p.prev.Entries, p.next.Entries)}
		if err := s.writeFile(recName(rec.Seq), encodeRecord(rec)); err != nil {
			return err
		}
	}
	if err := s.writeFile("listing", encodeListing(p.next)); err != nil {
		return err
	}
	meta, err := json.Marshal(&p.info)
	if err != nil {
		return err
	}
	return s.writeFile(metaName(p.info.Seq), meta)
}

func recName(seq uint64) string  { return "rec-" + strconv.FormatUint(seq, 10) }
func metaName(seq uint64) string { return "meta-" + strconv.FormatUint(seq, 10) + ".json" }

// writeFile replaces name in the store whole (a reader sees the old file
// or the new one), with mode 0600.
func (s *Store) writeFile(name string, data []byte) error {
	f, err := os.CreateTemp(s.dir, "tmp-*")
	if err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(s.dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("checkpoint store: %w", err)
	}
	return nil
}

// maxStateFile bounds a chain file read back: a listing of Entries paths
// with their longest names is far below it.
const maxStateFile = 1 << 30

func (s *Store) readListing() (*listing, error) {
	data, err := readSmall(filepath.Join(s.dir, "listing"), maxStateFile)
	if err != nil {
		return nil, err
	}
	return decodeListing(data)
}

func (s *Store) readRecord(seq uint64) (*record, error) {
	data, err := readSmall(filepath.Join(s.dir, recName(seq)), maxStateFile)
	if err != nil {
		return nil, err
	}
	rec, err := decodeRecord(data)
	if err == nil && rec.Seq != seq {
		err = fmt.Errorf("%w: record %d holds %d", ErrDamaged, seq, rec.Seq)
	}
	return rec, err
}

// decodeInfo reads a checkpoint's description.
func decodeInfo(data []byte) (*Info, error) {
	var i Info
	if err := json.Unmarshal(data, &i); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	if i.Seq == 0 || !filepath.IsAbs(i.Root) {
		return nil, fmt.Errorf("%w: seq %d, root %q", ErrDamaged, i.Seq, i.Root)
	}
	i.Changes = -1
	return &i, nil
}

// seqs lists the checkpoints described in the store, oldest first.
func (s *Store) seqs() []uint64 {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil
	}
	var out []uint64
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), "meta-")
		if !ok {
			continue
		}
		n, ok = strings.CutSuffix(n, ".json")
		if seq, err := strconv.ParseUint(n, 10, 64); ok && err == nil && seq > 0 {
			out = append(out, seq)
		}
	}
	slices.Sort(out)
	return out
}

// List describes the workspace's checkpoints, newest first.
func (s *Store) List() ([]Info, error) {
	var out []Info
	for _, seq := range slices.Backward(s.seqs()) {
		data, err := readSmall(filepath.Join(s.dir, metaName(seq)), 1<<20)
		if err != nil {
			continue
		}
		i, err := decodeInfo(data)
		if err != nil || i.Seq != seq {
			continue
		}
		if rec, err := s.readRecord(seq); err == nil {
			i.Changes = len(rec.Changes)
		}
		out = append(out, *i)
	}
	return out, nil
}

// dropAll forgets every checkpoint of the workspace.
func (s *Store) dropAll() {
	for _, seq := range s.seqs() {
		s.drop(seq)
	}
	os.Remove(filepath.Join(s.dir, "listing"))
}

func (s *Store) drop(seq uint64) {
	os.Remove(filepath.Join(s.dir, metaName(seq)))
	os.Remove(filepath.Join(s.dir, recName(seq)))
}
