package shim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/adrg/xdg"
	"github.com/gofrs/flock"
)

// Audit event names.
const (
	EventDenied   = "exec.denied"
	EventStarted  = "exec.started"
	EventFinished = "exec.finished"
)

// Who decided, for Event.DecidedBy.
const (
	ByPolicy   = "policy"
	ByTTY      = "tty"
	ByHub      = "hub"
	ByFallback = "fallback"
)

// Audit log limits.
const (
	// DefaultAuditMaxBytes is the size at which the log is rotated.
	DefaultAuditMaxBytes = 10 << 20
	// DefaultAuditKeep is how many rotated logs are kept (audit.jsonl.1 …).
	DefaultAuditKeep = 3
	// maxLoggedCommand bounds the command text in one event: a script read
	// from stdin can be megabytes, and one event must stay one sane line.
	maxLoggedCommand = 64 << 10
	// maxLoggedTail bounds the output tail in one event.
	maxLoggedTail = 20000
)

// Event is one line of the audit log.
type Event struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"`
	// ID ties the events of one run together; it is also the approval id
	// shown to (and, later, answered by) the hub.
	ID      string `json:"id"`
	Pid     int    `json:"pid,omitempty"`
	Agent   string `json:"agent"`
	Cwd     string `json:"cwd"`
	Command string `json:"command"`
	// Via names the agent program whose envelope or hook carried Command.
	Via string `json:"via,omitempty"`
	// Envelope is the whole program when Command is the payload of an
	// agent's envelope.
	Envelope string `json:"envelope,omitempty"`
	// Source is where the program came from: "string", "file", "stdin",
	// "interactive" or "none".
	Source    string   `json:"source,omitempty"`
	Risk      string   `json:"risk,omitempty"`
	Reasons   []string `json:"reasons,omitempty"`
	Decision  string   `json:"decision,omitempty"`
	DecidedBy string   `json:"decidedBy,omitempty"`
	// ApprovalID is set when a human (or the fallback) was asked.
	ApprovalID string `json:"approvalId,omitempty"`
	// Allowlisted lists the patterns added by "allow always".
	Allowlisted []string `json:"allowlisted,omitempty"`
	// Message is the line shown to the agent on a denial.
	Message    string `json:"message,omitempty"`
	ExitStatus *int   `json:"exitStatus,omitempty"`
	Signal     string `json:"signal,omitempty"`
	DurationMs *int64 `json:"durationMs,omitempty"`
	OutputSize int64  `json:"outputBytes,omitempty"`
	Omitted    int64  `json:"omittedBytes,omitempty"`
	SpillPath  string `json:"spillPath,omitempty"`
	OutputTail string `json:"outputTail,omitempty"`
	Exec       bool   `json:"exec,omitempty"` // the shim became the shell: no exec.finished follows
	// Direct is set when the shim ran a lone simple command itself, as
	// bash would have, without starting bash.
	Direct   bool     `json:"direct,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// AuditLog appends events to a JSON-lines file shared by every shim, rotating
// it by size.
type AuditLog struct {
	// Path is the log file (see DefaultAuditPath).
	Path string
	// MaxBytes is the size past which the file is rotated; 0 means
	// DefaultAuditMaxBytes.
	MaxBytes int64
	// Keep is how many rotated files are kept; 0 means DefaultAuditKeep.
	Keep int
}

// StateDir returns $XDG_STATE_HOME/execgate, reading the variable through
// getenv (the xdg package caches the environment at start-up, which tests
// cannot redirect).
func StateDir(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	base := getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		base = xdg.StateHome
	}
	return filepath.Join(base, "execgate")
}

// DefaultAuditPath returns $XDG_STATE_HOME/execgate/audit.jsonl.
func DefaultAuditPath(getenv func(string) string) string {
	return filepath.Join(StateDir(getenv), "audit.jsonl")
}

// Append writes ev as one line. Concurrent shims may append at once: each
// event is a single write to a file opened with O_APPEND, so lines never
// interleave, and rotation happens under a lock.
func (l *AuditLog) Append(ev Event) error {
	if len(ev.Command) > maxLoggedCommand {
		ev.Command = truncateUTF8(ev.Command, maxLoggedCommand) + "…"
		ev.Warnings = append(ev.Warnings, "command truncated in the log")
	}
	if len(ev.OutputTail) > maxLoggedTail {
		ev.OutputTail = ev.OutputTail[len(ev.OutputTail)-maxLoggedTail:]
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("audit log: encode: %w", err)
	}
	line = append(line, '\n')
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	_, werr := f.Write(line)
	fi, serr := f.Stat()
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("audit log %s: %w", l.Path, werr)
	}
	if serr == nil && fi.Size() > l.maxBytes() {
		return l.rotate()
	}
	return nil
}

func (l *AuditLog) maxBytes() int64 {
	if l.MaxBytes > 0 {
		return l.MaxBytes
	}
	return DefaultAuditMaxBytes
}

func (l *AuditLog) keep() int {
	if l.Keep > 0 {
		return l.Keep
	}
	return DefaultAuditKeep
}

// rotate shifts audit.jsonl → .1 → .2 …, dropping the oldest. The lock
// and the size check under it make sure that two shims crossing the limit
// together rotate once.
func (l *AuditLog) rotate() error {
	lock := flock.New(l.Path+".lock", flock.SetPermissions(0o600))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ok, err := lock.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil || !ok {
		return fmt.Errorf("audit log: rotate: lock: %v", err)
	}
	defer lock.Unlock()
	fi, err := os.Stat(l.Path)
	if err != nil || fi.Size() <= l.maxBytes() {
		return nil // someone else rotated it
	}
	for i := l.keep() - 1; i >= 1; i-- {
		err := os.Rename(l.rotated(i), l.rotated(i+1))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("audit log: rotate: %w", err)
		}
	}
	if err := os.Rename(l.Path, l.rotated(1)); err != nil {
		return fmt.Errorf("audit log: rotate: %w", err)
	}
	return nil
}

func (l *AuditLog) rotated(i int) string { return l.Path + "." + strconv.Itoa(i) }

// Read calls fn with every event at or after since, oldest first, rotated
// files included. Lines that are not events are skipped: a log cut short by
// a crash must not hide the rest.
func (l *AuditLog) Read(since time.Time, fn func(Event, []byte) error) error {
	for i := l.keep(); i >= 0; i-- {
		path := l.Path
		if i > 0 {
			path = l.rotated(i)
		}
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		_, err = readEvents(f, since, fn)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Follow calls fn with every event at or after since, then with each new
// event as it is appended, until ctx is done. It notices rotation.
func (l *AuditLog) Follow(ctx context.Context, since time.Time, poll time.Duration, fn func(Event, []byte) error) error {
	var f *os.File
	var offset int64
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	// Read the rotated files once, then tail the live one.
	for i := l.keep(); i >= 1; i-- {
		rf, err := os.Open(l.rotated(i))
		if err != nil {
			continue
		}
		_, err = readEvents(rf, since, fn)
		rf.Close()
		if err != nil {
			return err
		}
	}
	for {
		if f == nil {
			var err error
			if f, err = os.Open(l.Path); err == nil {
				offset = 0
			} else if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("audit log: %w", err)
			}
		}
		if f != nil {
			if _, err := f.Seek(offset, io.SeekStart); err != nil {
				return fmt.Errorf("audit log: %w", err)
			}
			n, err := readEvents(f, since, fn)
			if err != nil {
				return err
			}
			offset += n
			// Rotated away: the old file is finished (read above); read
			// the files rotated since, then switch to the live one.
			if cur, err := os.Stat(l.Path); err != nil || !sameFile(f, cur) {
				if err := l.readRotatedAfter(f, since, fn); err != nil {
					return err
				}
				f.Close()
				f = nil
				continue
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}

// readRotatedAfter reads, oldest first, the rotated files newer than old:
// those rotated while a follower slept. If old is no longer among them,
// every rotated file is newer.
func (l *AuditLog) readRotatedAfter(old *os.File, since time.Time, fn func(Event, []byte) error) error {
	newest := l.keep()
	for i := 1; i <= l.keep(); i++ {
		if fi, err := os.Stat(l.rotated(i)); err == nil && sameFile(old, fi) {
			newest = i - 1
			break
		}
	}
	for i := newest; i >= 1; i-- {
		f, err := os.Open(l.rotated(i))
		if err != nil {
			continue
		}
		_, err = readEvents(f, since, fn)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func sameFile(f *os.File, fi fs.FileInfo) bool {
	own, err := f.Stat()
	return err == nil && os.SameFile(own, fi)
}

// readEvents reads whole lines from r, returning how many bytes they held; a
// final line without its newline is left for the next read.
func readEvents(r io.Reader, since time.Time, fn func(Event, []byte) error) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var n int64
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, fmt.Errorf("audit log: %w", err)
		}
		n += int64(len(line))
		line = bytes.TrimSuffix(line, []byte("\n"))
		var ev Event
		if json.Unmarshal(line, &ev) != nil || ev.Event == "" {
			continue
		}
		if !since.IsZero() && ev.Time.Before(since) {
			continue
		}
		if err := fn(ev, line); err != nil {
			return n, err
		}
	}
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
