package interp

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/execgate/execgate/internal/redact"
	"github.com/execgate/execgate/internal/state"
)

// Spill file naming. The timestamp is fixed-width UTC so that names sort in
// creation order; os.CreateTemp appends a random part in place of "*".
const (
	spillPrefix     = "output-"
	spillSuffix     = ".log"
	spillTimeLayout = "20060102T150405.000000000Z"
)

// eagerSpill is how much output is held in memory, waiting to learn whether
// the output will be cut, before the spill file is created anyway. Most
// commands print far less than the cap, and for them no file is ever
// created; past this size memory matters more than one file operation.
const eagerSpill = 1 << 20

// spill writes the full combined output to a file so that the marker line can
// point at it. The file is created lazily (see eagerSpill), kept only if the
// output was cut, and bounded by max bytes. A nil *spill does nothing, which
// is how spilling is turned off.
type spill struct {
	dir      string
	max      int64
	keepN    int
	maxAge   time.Duration
	maxTotal int64
	now      func() time.Time
	log      *slog.Logger

	// red removes known secrets from what goes into the file: the file
	// outlives the command (see redact). It writes to held, or to f once
	// that exists.
	red    *redact.Writer
	held   []byte   // output not yet written because no file exists yet
	f      *os.File // nil until created
	n      int64    // bytes accepted (held or written), at most max
	short  bool     // output went past max and was not all accepted
	failed bool     // the file could not be created or written; give up
}

func newSpill(o *Options, log *slog.Logger) *spill {
	if o.SpillDir == "" || o.SpillMaxBytes == 0 {
		return nil
	}
	s := &spill{dir: o.SpillDir, max: o.SpillMaxBytes, keepN: o.SpillKeep,
		maxAge: o.SpillMaxAge, maxTotal: o.SpillMaxTotal, now: o.Now, log: log}
	s.red = redact.NewWriter(spillSink{s})
	if s.keepN <= 0 {
		s.keepN = DefaultSpillKeep
	}
	if s.maxAge <= 0 {
		s.maxAge = DefaultSpillMaxAge
	}
	if s.maxTotal <= 0 {
		s.maxTotal = DefaultSpillMaxTotal
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// write takes the next chunk of output; cut says the output is already known
// to exceed the cap, so the file is needed.
func (s *spill) write(p []byte, cut bool) {
	if s == nil || s.failed {
		return
	}
	if room := s.max - s.n; int64(len(p)) > room {
		p, s.short = p[:room], true
	}
	if s.f == nil && (cut || len(s.held)+len(p) > eagerSpill) {
		s.create()
		if s.failed {
			return
		}
	}
	s.n += int64(len(p))
	if _, err := s.red.Write(p); err != nil {
		s.fail("write spill file", err)
	}
}

// spillSink is where the redacted output goes: held in memory until the
// file exists, then the file.
type spillSink struct{ s *spill }

func (k spillSink) Write(p []byte) (int, error) {
	if k.s.f == nil {
		k.s.held = append(k.s.held, p...)
		return len(p), nil
	}
	return k.s.f.Write(p)
}

// create opens the spill file and writes what was held.
func (s *spill) create() {
	if err := state.MkdirPrivate(s.dir); err != nil {
		s.fail("create spill directory", err)
		return
	}
	pattern := spillPrefix + s.now().UTC().Format(spillTimeLayout) + "-*" + spillSuffix
	f, err := os.CreateTemp(s.dir, pattern) // mode 0600
	if err != nil {
		s.fail("create spill file", err)
		return
	}
	s.f = f
	held := s.held
	s.held = nil
	if _, err := f.Write(held); err != nil {
		s.fail("write spill file", err)
	}
}

// fail abandons spilling: the marker will say the output was not saved.
func (s *spill) fail(what string, err error) {
	s.log.Warn(what, "dir", s.dir, "err", err)
	s.failed = true
	s.held = nil
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
		s.f = nil
	}
}

// keep closes the file and prunes old spills. It returns the file's path
// ("" if there is none) and whether it holds the whole output.
func (s *spill) keep() (path string, complete bool) {
	if s == nil {
		return "", false
	}
	if s.f == nil && !s.failed {
		s.create() // cut at the very end: only possible when write never saw cut
	}
	if s.failed || s.f == nil {
		return "", false
	}
	if err := s.red.Close(); err != nil { // what it held back for a token cut by a read
		s.fail("write spill file", err)
		return "", false
	}
	path = s.f.Name()
	if err := s.f.Close(); err != nil {
		s.fail("close spill file", err)
		return "", false
	}
	s.f = nil
	s.prune(filepath.Base(path))
	return path, !s.short
}

// size is how many bytes the spill file holds.
func (s *spill) size() int64 {
	if s == nil {
		return 0
	}
	return s.n
}

// discard removes the file, if any: the caller received the whole output.
func (s *spill) discard() {
	if s == nil {
		return
	}
	s.held = nil
	if s.f != nil {
		s.f.Close()
		if err := os.Remove(s.f.Name()); err != nil {
			s.log.Warn("remove spill file", "err", err)
		}
		s.f = nil
	}
}

// prune keeps the spill directory bounded: of the spill files other than
// own, newest first, it removes every one past the newest keepN, older
// than maxAge, or from the first that would bring the total past
// maxTotal on. It runs only
// when a spill is kept, so commands whose output fits pay nothing.
// Another shim's spill still being written can be removed when several
// commands overflow at once; it then simply has no file to point at.
func (s *spill) prune(own string) {
	entries, err := os.ReadDir(s.dir) // sorted by name, hence by age
	if err != nil {
		s.log.Warn("prune spill files", "err", err)
		return
	}
	kept, total, full := 1, int64(0), false
	if fi, err := os.Stat(filepath.Join(s.dir, own)); err == nil {
		total = fi.Size()
	}
	now := time.Now() // not s.now, which only names files
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		n := e.Name()
		if n == own || !e.Type().IsRegular() || !strings.HasPrefix(n, spillPrefix) || !strings.HasSuffix(n, spillSuffix) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		full = full || total+fi.Size() > s.maxTotal // and so for every older one
		if !full && kept < s.keepN && now.Sub(fi.ModTime()) <= s.maxAge {
			kept++
			total += fi.Size()
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("prune spill file", "file", n, "err", err)
		}
	}
}
