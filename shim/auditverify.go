package shim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
)

// ChainProblem is one place where the audit log's chain does not hold, or
// (as a note) something about the log that is not a break.
type ChainProblem struct {
	// File and Line (1-based, every line counted as sed counts them) say
	// where; Line is 0 for the log as a whole (its head file).
	File string
	Line int
	Text string
}

func (p ChainProblem) String() string {
	if p.Line == 0 {
		return p.File + ": " + p.Text
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Text)
}

// ChainReport is what Verify found.
type ChainReport struct {
	Files   int // log files read, rotated ones included
	Chained int // lines that carry the chain
	// Unchained counts the lines before the chain's first one: written by
	// an execgate that did not chain the log yet. Nothing vouches for them.
	Unchained         int
	FirstSeq, LastSeq int64
	// Problems are the breaks: the log was edited, truncated or
	// reordered there. Notes are not breaks.
	Problems, Notes []ChainProblem

	started bool // a chained line was read
}

// Intact reports whether the chain holds from its first line to the
// head.
func (r *ChainReport) Intact() bool { return len(r.Problems) == 0 }

// chainEntry is one chained line as Verify read it.
type chainEntry struct {
	file       string
	line       int
	seq        int64
	prev, hash string
	hashOK     bool
}

func (e chainEntry) at() string { return fmt.Sprintf("%s:%d", e.file, e.line) }

// Verify reads the whole log, rotated files included, and checks its
// chain: each line's hash against its text, each line's prev against the
// line before it, the first line against where the head says the log
// starts and the last against the last line the head recorded. It holds
// the writers' lock only to read the head and open the files, and reads
// each file only as far as it went then: shims go on appending meanwhile.
func (l *AuditLog) Verify() (*ChainReport, error) {
	r := &ChainReport{}
	head, headErr, files, err := l.snapshot()
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range files {
			if f.f != nil {
				f.f.Close()
			}
		}
	}()
	var entries []chainEntry
	for _, f := range files {
		if f.f == nil {
			continue
		}
		r.Files++
		es, err := scanChain(f.path, io.LimitReader(f.f, f.size), r)
		if err != nil {
			return nil, err
		}
		entries = append(entries, es...)
	}
	r.Chained = len(entries)
	headAt := ChainProblem{File: l.headPath()}
	switch {
	case errors.Is(headErr, fs.ErrNotExist) && len(entries) > 0:
		headAt.Text = "the head file is missing: lines removed from the end of the log cannot be told"
		r.Problems = append(r.Problems, headAt)
	case headErr != nil && !errors.Is(headErr, fs.ErrNotExist):
		headAt.Text = "the head file is damaged (" + headErr.Error() + "): lines removed from the end of the log cannot be told"
		r.Problems = append(r.Problems, headAt)
	case head.Rebuilt > 0:
		headAt.Text = fmt.Sprintf("the head was rebuilt from the log at seq %d, having been missing or damaged: lines removed from the end before then cannot be told", head.Rebuilt)
		r.Problems = append(r.Problems, headAt)
	}
	if len(entries) == 0 {
		if headErr == nil && head.Seq > 0 {
			r.Problems = append(r.Problems, ChainProblem{File: l.Path,
				Text: fmt.Sprintf("no chained line left, but the head records seq %d: the log was emptied", head.Seq)})
		}
		return r, nil
	}
	checkLinks(r, entries, head, headErr == nil)
	return r, nil
}

// verifyFile is one log file Verify reads: open, and its size when the
// lock was held.
type verifyFile struct {
	path string
	f    *os.File
	size int64
}

// snapshot reads the head and opens every log file, oldest first, under a
// shared hold of the writers' lock, so that no append or rotation is
// half done.
func (l *AuditLog) snapshot() (head chainHead, headErr error, files []verifyFile, err error) {
	hf, herr := os.Open(l.headPath())
	switch {
	case herr == nil:
		defer hf.Close()
		if err := lockShared(hf); err != nil {
			return head, nil, nil, fmt.Errorf("audit log: %w", err)
		}
		buf := make([]byte, headRecordSize+1)
		n, _ := hf.ReadAt(buf, 0)
		head, headErr = decodeHead(buf[:n])
		if n > headRecordSize {
			headErr = errors.New("longer than a head")
		}
	case errors.Is(herr, fs.ErrNotExist):
		headErr = herr
	default:
		return head, nil, nil, fmt.Errorf("audit log: %w", herr)
	}
	for i := l.keep(); i >= 0; i-- {
		path := l.file(i)
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return head, nil, files, fmt.Errorf("audit log: %w", err)
		}
		files = append(files, verifyFile{path: path, f: f, size: fileSize(f)})
	}
	return head, headErr, files, nil
}

// lockShared takes a shared hold of the writers' lock on f, waiting at
// most chainLockWait.
func lockShared(f *os.File) error {
	deadline := time.Now().Add(chainLockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("lock: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lock: held by a writer for over %s", chainLockWait)
		}
		time.Sleep(time.Millisecond)
	}
}

// scanChain reads one file's lines: the chained ones are returned; the
// others are counted or reported in r.
func scanChain(path string, rd io.Reader, r *ChainReport) ([]chainEntry, error) {
	br := bufio.NewReaderSize(rd, 64<<10)
	var out []chainEntry
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(line) > 0 {
			at := ChainProblem{File: path, Line: n}
			ev, isEvent := decodeEvent(line)
			_, chained := parseChained(line)
			switch {
			case !isEvent:
				at.Text = "not an event: a write cut short (a full disk, a crash) or an edit; the chain around it says which"
				r.Notes = append(r.Notes, at)
			case chained:
				r.started = true
				out = append(out, chainEntry{file: path, line: n, seq: ev.Seq, prev: ev.Prev, hash: ev.Hash,
					hashOK: checkHash(line, ev.Hash)})
			case ev.Seq != 0 || ev.Hash != "" || ev.Prev != "":
				at.Text = "edited: its chain fields are damaged"
				r.Problems = append(r.Problems, at)
			case !r.started:
				r.Unchained++
			default:
				at.Text = "not chained, so nothing vouches for it: inserted, or written by a shim that could not take the writers' lock"
				for _, w := range ev.Warnings {
					if strings.HasPrefix(w, "not chained:") {
						at.Text = "not chained, so nothing vouches for it: it says its writer could not take the writers' lock (" + w + ")"
					}
				}
				r.Problems = append(r.Problems, at)
			}
		}
		if err != nil {
			return out, nil
		}
	}
}

// checkLinks checks entries, in the order read, against each other and
// against the head.
func checkLinks(r *ChainReport, entries []chainEntry, head chainHead, haveHead bool) {
	where := make(map[int64]int, len(entries)) // seq → first index
	for i, e := range entries {
		if _, ok := where[e.seq]; !ok {
			where[e.seq] = i
		}
	}
	problem := func(e chainEntry, format string, args ...any) {
		r.Problems = append(r.Problems, ChainProblem{File: e.file, Line: e.line, Text: fmt.Sprintf(format, args...)})
	}
	for _, e := range entries {
		if !e.hashOK {
			problem(e, "edited: its hash does not match its text")
		}
	}

	first := entries[0]
	r.FirstSeq = first.seq
	wantSeq, wantPrev := int64(1), genesis
	if haveHead {
		wantSeq, wantPrev = head.FirstSeq, head.FirstPrev
	}
	switch {
	case first.seq > wantSeq:
		problem(first, "%s before it (seq %s): removed from the start of the log", lineCount(first.seq-wantSeq), seqRange(wantSeq, first.seq-1))
	case first.seq == wantSeq && first.prev != wantPrev:
		problem(first, "it is not the line the log starts with (its prev differs from the one recorded): replaced")
	case first.seq < wantSeq:
		problem(first, "the log starts at seq %d, before seq %d where the head says it starts", first.seq, wantSeq)
	}

	last := first
	for i, e := range entries[1:] {
		i++
		if j := where[e.seq]; j != i {
			problem(e, "seq %d again (first at %s): a line copied", e.seq, entries[j].at())
			continue
		}
		switch {
		case e.seq == last.seq+1:
			if e.prev != last.hash {
				problem(e, "it does not follow the line before it (%s, seq %d): one of them was replaced", last.at(), last.seq)
			}
		case e.seq > last.seq+1:
			from, to := last.seq+1, e.seq-1
			if j, ok := where[from]; ok && j > i {
				problem(e, "it comes before seq %s (at %s): lines reordered", seqRange(from, to), entries[j].at())
			} else {
				problem(e, "%s before it (seq %s): deleted", lineCount(to-from+1), seqRange(from, to))
			}
		default:
			problem(e, "seq %d comes after seq %d (%s): lines reordered", e.seq, last.seq, last.at())
			continue
		}
		last = e
	}
	r.LastSeq = last.seq
	if !haveHead {
		return
	}
	switch {
	case last.seq < head.Seq:
		problem(last, "the log ends here at seq %d, but the head records seq %d: seq %s removed from the end", last.seq, head.Seq, seqRange(last.seq+1, head.Seq))
	case last.seq == head.Seq && last.hash != head.Hash:
		problem(last, "it is not the last line the head records (its hash differs): replaced")
	case last.seq == head.Seq+1 && last.prev == head.Hash:
		r.Notes = append(r.Notes, ChainProblem{File: last.file, Line: last.line,
			Text: "written by a shim that stopped before recording it in the head; the next one will"})
	case last.seq > head.Seq:
		problem(last, "the log ends at seq %d, past seq %d, the last the head records: lines added", last.seq, head.Seq)
	}
}

func lineCount(n int64) string {
	if n == 1 {
		return "1 line missing"
	}
	return fmt.Sprintf("%d lines missing", n)
}

func seqRange(from, to int64) string {
	if from == to {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d–%d", from, to)
}

// ReadConsistent calls fn with every event of the log, rotated files
// included, oldest first, as the log stood at one moment: the files are
// opened under the writers' lock, and each is read only as far as it went
// then, so that a rotation meanwhile neither skips nor repeats a line.
// Readers that keep a place in the log (audit export) need that.
func (l *AuditLog) ReadConsistent(fn func(Event, []byte) error) (ReadStats, error) {
	var st ReadStats
	_, _, files, err := l.snapshot()
	defer func() {
		for _, f := range files {
			f.f.Close()
		}
	}()
	if err != nil {
		return st, err
	}
	for _, f := range files {
		_, fst, err := readEvents(io.LimitReader(f.f, f.size), time.Time{}, true, fn)
		st.add(fst)
		if err != nil {
			return st, err
		}
	}
	return st, nil
}
