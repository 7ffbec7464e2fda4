package checkpoint

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/execgate/execgate/internal/state"
	"time"
)

// Limits bound what one checkpoint reads and keeps.
type Limits struct {
	// Entries is the most paths a workspace may hold: a larger one is not
	// checkpointed at all (Take fails), since a listing that stops part
	// way could not tell a deleted file from one it never saw.
	Entries int
	// FileBytes is the largest file whose content is kept.
	FileBytes int64
	// TakeBytes is the most content one checkpoint copies.
	TakeBytes int64
	// Count, Age and StoreBytes bound the checkpoints kept for a
	// workspace: the oldest go first.
	Count      int
	Age        time.Duration
	StoreBytes int64
}

// DefaultLimits are the limits used when a field of Limits is zero: a
// workspace of up to 200,000 paths, files up to 64 MiB, 1 GiB copied by
// one checkpoint, and 100 checkpoints, a week or 2 GiB kept.
func DefaultLimits() Limits {
	return Limits{
		Entries:    200_000,
		FileBytes:  64 << 20,
		TakeBytes:  1 << 30,
		Count:      100,
		Age:        7 * 24 * time.Hour,
		StoreBytes: 2 << 30,
	}
}

func (l Limits) orDefault() Limits {
	d := DefaultLimits()
	if l.Entries > 0 {
		d.Entries = l.Entries
	}
	if l.FileBytes > 0 {
		d.FileBytes = l.FileBytes
	}
	if l.TakeBytes > 0 {
		d.TakeBytes = l.TakeBytes
	}
	if l.Count > 0 {
		d.Count = l.Count
	}
	if l.Age > 0 {
		d.Age = l.Age
	}
	if l.StoreBytes > 0 {
		d.StoreBytes = l.StoreBytes
	}
	return d
}

// ErrTooLarge is returned for a workspace with more paths than
// Limits.Entries.
var ErrTooLarge = errors.New("too many files to checkpoint")

// toolDirs are directories that only hold what a tool downloads or
// builds; outside git (where .gitignore decides) they are left out.
func toolDir(name string) bool {
	switch name {
	case "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
		".pytest_cache", ".ruff_cache", ".gradle", ".next", ".cache", ".terraform":
		return true
	}
	return false
}

// racyWindow is how close to the scan a change must be for its stat to be
// distrusted next time: file systems keep times at a granularity of a few
// milliseconds at worst, and a write within it could leave them unchanged.
const racyWindow = 50 * time.Millisecond

// scanner walks a workspace into a listing, copying the content of what
// changed since prev into the store.
type scanner struct {
	ctx    context.Context
	root   string
	git    bool
	prev   map[string]*Entry
	store  *objects
	limits Limits
	start  int64 // the scan's start, in Unix nanoseconds
	// blobs are the index's blob ids by path, for a first checkpoint of
	// a git workspace (gitblob.go); nil otherwise.
	blobs map[string]string

	// Directories are read in parallel, by at most cap(sem) goroutines
	// besides the first; a directory finding no free one is read inline.
	sem   chan struct{}
	wg    sync.WaitGroup
	count atomic.Int64 // entries so far

	mu      sync.Mutex // guards what follows
	err     error      // the first error of a goroutine
	copied  int64
	leftOut []string // directories left out, relative
	notKept int
}

// maxLeftOut bounds the left-out directories a checkpoint names.
const maxLeftOut = 20

// dirNode is one directory's entries, in order, and the nodes of those
// that are directories read (subs[i] for entries[i]).
type dirNode struct {
	entries []Entry
	subs    []*dirNode
}

// flatten lists the tree depth first: each directory's entries right
// after it, the order of comparePaths.
func (n *dirNode) flatten(out []Entry) []Entry {
	for i := range n.entries {
		out = append(out, n.entries[i])
		if n.subs[i] != nil {
			out = n.subs[i].flatten(out)
		}
	}
	return out
}

func (s *scanner) scan() ([]Entry, error) {
	var rules *ignoreRules
	if s.git {
		rules = s.baseRules()
	}
	s.sem = make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	top := &dirNode{}
	err := s.dir("", rules, top)
	s.wg.Wait()
	if err == nil {
		err = s.err
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(s.leftOut)
	return top.flatten(make([]Entry, 0, s.count.Load())), nil
}

// noteLeftOut names a directory left out, up to maxLeftOut of them.
func (s *scanner) noteLeftOut(p string) {
	s.mu.Lock()
	if len(s.leftOut) < maxLeftOut {
		s.leftOut = append(s.leftOut, p)
	}
	s.mu.Unlock()
}

func (s *scanner) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// baseRules are git's ignore rules below the .gitignore files: the global
// excludes file (at its default place; core.excludesFile is not read) and
// the repository's info/exclude.
func (s *scanner) baseRules() *ignoreRules {
	r := &ignoreRules{}
	global := ""
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		global = filepath.Join(x, "git", "ignore")
	} else if h := os.Getenv("HOME"); filepath.IsAbs(h) {
		global = filepath.Join(h, ".config", "git", "ignore")
	}
	for _, f := range []string{global, filepath.Join(s.root, ".git", "info", "exclude")} {
		if f == "" {
			continue
		}
		if data, err := readSmall(f, maxIgnoreFile); err == nil {
			r = r.with("", data)
		}
	}
	return r
}

func readSmall(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

func (s *scanner) dir(rel string, rules *ignoreRules, node *dirNode) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	abs := filepath.Join(s.root, filepath.FromSlash(rel))
	f, err := os.Open(abs)
	if errors.Is(err, fs.ErrPermission) && rel != "" {
		// One directory this user cannot read (made by root, by a
		// container) does not stop every checkpoint: it is left out,
		// and said so.
		s.noteLeftOut(rel + " (unreadable)")
		return nil
	}
	if err != nil {
		return fmt.Errorf("read directory %s: %w", abs, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("read directory %s: %w", abs, err)
	}
	slices.Sort(names)
	if _, found := slices.BinarySearch(names, ".gitignore"); found && s.git {
		if data, err := readSmall(filepath.Join(abs, ".gitignore"), maxIgnoreFile); err == nil {
			rules = rules.with(rel, data)
		}
	}
	// Each name is looked up in the open directory, not from the root:
	// the kernel resolves one name instead of the whole path.
	dirfd := int(f.Fd())
	node.entries = make([]Entry, 0, len(names))
	node.subs = make([]*dirNode, 0, len(names))
	for _, name := range names {
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		if name == ".git" {
			continue // a repository's own files: never the workspace's to undo
		}
		var st unix.Stat_t
		if err := fstatat(dirfd, name, &st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // gone since the listing
			}
			return fmt.Errorf("stat %s: %w", filepath.Join(abs, name), err)
		}
		isDir := st.Mode&syscall.S_IFMT == syscall.S_IFDIR
		if (s.git && rules.ignored(p, isDir)) || (!s.git && isDir && toolDir(name)) {
			if isDir {
				s.noteLeftOut(p)
			}
			continue
		}
		if s.count.Add(1) > int64(s.limits.Entries) {
			return fmt.Errorf("%w: more than %d paths in %s", ErrTooLarge, s.limits.Entries, s.root)
		}
		e := Entry{
			Path: p, Mode: uint32(st.Mode) & 0o7777, // uint16 on darwin
			Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
			Ino: st.Ino, Dev: uint64(st.Dev), // int32 on darwin
		}
		e.Racy = s.start-e.Mtime < int64(racyWindow) || s.start-e.Ctime < int64(racyWindow)
		var sub *dirNode
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			e.Kind = KindDir
			sub = &dirNode{}
			if err := s.descend(p, rules, sub); err != nil {
				return err
			}
		case syscall.S_IFLNK:
			e.Kind = KindLink
			target, err := os.Readlink(filepath.Join(abs, name))
			if err != nil {
				return fmt.Errorf("read link %s: %w", filepath.Join(abs, name), err)
			}
			e.Link = target
		case syscall.S_IFREG:
			e.Kind = KindFile
			e.Size = st.Size
			s.content(&e, abs, name)
		default:
			e.Kind = KindOther
		}
		node.entries = append(node.entries, e)
		node.subs = append(node.subs, sub)
	}
	return nil
}

// descend reads the directory rel into node, in a goroutine of its own if
// one is free.
func (s *scanner) descend(rel string, rules *ignoreRules, node *dirNode) error {
	select {
	case s.sem <- struct{}{}:
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.sem }()
			if err := s.dir(rel, rules, node); err != nil {
				s.fail(err)
			}
		}()
		return nil
	default:
		return s.dir(rel, rules, node)
	}
}

// content fills in a file's hash, from the last listing when its stat is
// unchanged (as git's index does), else by copying it into the store.
func (s *scanner) content(e *Entry, dir, name string) {
	if p := s.prev[e.Path]; p != nil && p.Kind == KindFile && p.Missing == Kept && !p.Racy &&
		p.Size == e.Size && p.Mtime == e.Mtime && p.Ctime == e.Ctime && p.Ino == e.Ino && p.Dev == e.Dev {
		e.Hash, e.Blob = p.Hash, p.Blob
		return
	}
	if oid := s.blobs[e.Path]; oid != "" && e.Size > 0 && e.Size <= s.limits.FileBytes {
		sum, id, n, err := hashAsBlob(filepath.Join(dir, name), oid)
		if err == nil && id == oid {
			e.Hash, e.Size, e.Blob = sum, n, oid
			return
		}
	}
	// The budget is taken before the copy (a file that grows while
	// copied is cut at FileBytes, and counted as read).
	s.mu.Lock()
	switch {
	case e.Size > s.limits.FileBytes:
		e.Missing = TooLarge
	case s.copied+e.Size > s.limits.TakeBytes:
		e.Missing = OverBudget
	default:
		s.copied += e.Size
	}
	s.mu.Unlock()
	if e.Missing == Kept {
		hash, n, err := s.store.add(filepath.Join(dir, name), s.limits.FileBytes)
		switch {
		case errors.Is(err, errGrew):
			e.Missing = TooLarge
		case err != nil:
			e.Missing = Unreadable
		default:
			e.Hash, e.Size = hash, n
		}
	}
	if e.Missing != Kept {
		s.mu.Lock()
		s.notKept++
		s.mu.Unlock()
	}
}

// fstatat is lstat of name in the directory dirfd.
func fstatat(dirfd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			return err
		}
	}
}

// errGrew is returned for a file that grew past the limit while read.
var errGrew = errors.New("grew past the size limit")

// objects is the content store: each file's content once, named by its
// SHA-256.
type objects struct {
	dir string
}

func (o *objects) path(h [32]byte) string {
	x := fmt.Sprintf("%x", h[:])
	return filepath.Join(o.dir, x[:2], x)
}

// smallFile is the size up to which a file is read whole before it is
// stored: its hash is then known first, and it is written under its own
// name in one step.
const smallFile = 256 << 10

// add copies the regular file abs into the store, never following a link
// put in its place.
func (o *objects) add(abs string, max int64) ([32]byte, int64, error) {
	var zero [32]byte
	f, err := state.OpenFile(abs, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return zero, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return zero, 0, fmt.Errorf("%s is no longer a regular file", abs)
	}
	if fi.Size() <= smallFile {
		data, err := io.ReadAll(io.LimitReader(f, smallFile+1))
		if err != nil {
			return zero, 0, err
		}
		if len(data) <= smallFile {
			sum := sha256.Sum256(data)
			return sum, int64(len(data)), o.put(sum, data)
		}
		// It grew while read: copy it as a large one, from the start.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return zero, 0, err
		}
	}
	return o.copyLarge(f, max)
}

// put stores data, whose hash is sum. A file of that name and size is
// taken to hold it (a crash while one was written leaves it shorter; a
// restore checks the hash anyway).
func (o *objects) put(sum [32]byte, data []byte) error {
	dst := o.path(sum)
	if fi, err := os.Lstat(dst); err == nil && fi.Size() == int64(len(data)) {
		return nil
	}
	if err := os.Mkdir(filepath.Dir(dst), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	out, err := state.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Cut short by a crash: replaced whole.
		return o.replace(dst, data)
	}
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

func (o *objects) replace(dst string, data []byte) error {
	tmp, err := os.CreateTemp(o.dir, "tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// copyLarge stores a file too large to read whole: copied and hashed at
// once into a temporary file, renamed to its hash.
func (o *objects) copyLarge(f *os.File, max int64) ([32]byte, int64, error) {
	var zero [32]byte
	tmp, err := os.CreateTemp(o.dir, "tmp-*")
	if err != nil {
		return zero, 0, err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(f, max+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return zero, 0, err
	}
	if n > max {
		return zero, 0, errGrew
	}
	var sum [32]byte
	h.Sum(sum[:0])
	dst := o.path(sum)
	if fi, err := os.Lstat(dst); err == nil && fi.Size() == n {
		return sum, n, nil
	}
	if err := os.Mkdir(filepath.Dir(dst), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return zero, 0, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return zero, 0, err
	}
	return sum, n, nil
}

// open opens the content h.
func (o *objects) open(h [32]byte) (*os.File, error) {
	return os.Open(o.path(h))
}
