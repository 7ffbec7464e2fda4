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

	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/internal/redact"
	"github.com/execgate/execgate/internal/state"
	"github.com/execgate/execgate/prompt"
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
	// ByConfined: the command's needs fit the sandbox, so it ran
	// confined without asking.
	ByConfined = "confined"
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
	// Approver is the person who answered (uid, user, tui/web/cli/tty,
	// host), when one did; Scope is "once" or "always" for their allow.
	Approver *prompt.Approver `json:"approver,omitempty"`
	Scope    string           `json:"scope,omitempty"`
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
	Direct bool `json:"direct,omitempty"`
	// Confined says what the kernel's sandbox let the command do, when
	// it ran confined ("" when it ran unconfined).
	Confined string `json:"confined,omitempty"`
	// Hosts are the allowed hosts (host:port) the command reached
	// through the proxy; HostsRefused the ones it asked for and was
	// refused (agents.NAME.sandbox.hosts).
	Hosts        []string `json:"hosts,omitempty"`
	HostsRefused []string `json:"hostsRefused,omitempty"`
	// LeftRunning names ("PID NAME") the processes a confined command
	// left running when it ended, inside its sandbox and cgroup; Paused
	// the ones confined commands left running that were paused while
	// this command ran unconfined (see leftovers.go).
	LeftRunning []string `json:"leftRunning,omitempty"`
	Paused      []string `json:"paused,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	// Seq, Prev and Hash chain the line to the one before it, in the
	// order written (auditchain.go); Append sets them.
	Seq  int64  `json:"seq,omitempty"`
	Prev string `json:"prev,omitempty"`
	Hash string `json:"hash,omitempty"`
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

// DefaultAuditPath returns audit.jsonl in the state directory (see
// state.Dir).
func DefaultAuditPath(getenv func(string) string) (string, error) {
	return state.Path(getenv, "audit.jsonl")
}

// Append writes ev as one line, chained to the line before it (see
// auditchain.go). Concurrent shims may append at once: they take turns
// under the lock on the head file, each event is a single write to a file
// opened with O_APPEND, so lines never interleave, and rotation happens
// under the same lock. When the lock cannot be had in time the event is
// still written, unchained, for --verify to report: the local record is
// never the price.
func (l *AuditLog) Append(ev Event) error {
	ev = ev.redacted()
	if len(ev.Command) > maxLoggedCommand {
		ev.Command = display.Cut(ev.Command, maxLoggedCommand) + "…"
		ev.Warnings = append(ev.Warnings, "command truncated in the log")
	}
	if len(ev.OutputTail) > maxLoggedTail {
		ev.OutputTail = ev.OutputTail[len(ev.OutputTail)-maxLoggedTail:]
	}
	ev.Seq, ev.Prev, ev.Hash = 0, "", ""
	if l.Path == "" {
		return errors.New("audit log: no path (no state directory)")
	}
	if err := state.MkdirPrivate(filepath.Dir(l.Path)); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	head, herr := l.lockHead()
	if head != nil {
		defer head.Close() // and the lock with it
	}
	f, err := state.OpenFile(l.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE, state.FileMode)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	if err := state.TightenFile(f); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	size := fileSize(f)
	var tailBuf [logTailSize]byte
	tail := readTail(&tailBuf, f, size)
	var h chainHead
	if herr == nil {
		h = l.readHead(head).caughtUp(tail)
		ev.Seq, ev.Prev = h.Seq+1, h.Hash
	} else {
		ev.Warnings = append(ev.Warnings, "not chained: "+herr.Error())
	}
	line, err := marshalEvent(&ev)
	if err != nil {
		return fmt.Errorf("audit log: encode: %w", err)
	}
	var hash string
	if herr == nil {
		line, hash = chainLine(line)
	}
	line = append(line, '\n')
	// A write cut short (a full disk) left a line without its newline:
	// end it first, in the same write, so that this event is not glued to
	// it. (Unchained writers do not take the lock: two of them repairing
	// at once leave an empty line, which readers ignore.)
	switch {
	case size == 0:
		l.startFailures() // a new log: room to count what it may lose
	case len(tail) > 0 && tail[len(tail)-1] != '\n':
		line = append([]byte{'\n'}, line...)
	}
	_, werr := f.Write(line)
	fi, serr := f.Stat()
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("audit log %s: %w", l.Path, werr)
	}
	if herr != nil {
		return nil // rotation waits for a writer that holds the lock
	}
	h.Seq, h.Hash = ev.Seq, hash
	var headBuf [headRecordSize]byte
	if _, err := head.WriteAt(encodeHead(&headBuf, h), 0); err != nil {
		return fmt.Errorf("audit log: head: %w", err)
	}
	if serr == nil && fi.Size() > l.maxBytes() {
		return l.rotate(head, h)
	}
	return nil
}

// redacted returns ev with known secret shapes replaced in every field
// that holds text from the command or its output: the log outlives the
// command, and is read by whoever can read the user's files.
func (ev Event) redacted() Event {
	for _, f := range []*string{&ev.Command, &ev.Envelope, &ev.Message, &ev.OutputTail} {
		*f = redact.String(*f)
	}
	for _, list := range []*[]string{&ev.Reasons, &ev.Allowlisted, &ev.Warnings} {
		if len(*list) == 0 {
			continue
		}
		out := make([]string, len(*list))
		for i, v := range *list {
			out[i] = redact.String(v)
		}
		*list = out
	}
	return ev
}

// fileSize is f's size, or -1 when it cannot be told.
func fileSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil {
		return -1
	}
	return fi.Size()
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

// rotate shifts audit.jsonl → .1 → .2 …, dropping the oldest. The
// caller holds the writers' lock (on head), so two shims crossing the
// limit together rotate once: the second sees the new, small file.
func (l *AuditLog) rotate(head *os.File, h chainHead) error {
	fi, err := os.Stat(l.Path)
	if err != nil || fi.Size() <= l.maxBytes() {
		return nil // someone else rotated it
	}
	_, serr := os.Stat(l.rotated(l.keep()))
	dropping := serr == nil
	for i := l.keep() - 1; i >= 1; i-- {
		err := os.Rename(l.rotated(i), l.rotated(i+1))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("audit log: rotate: %w", err)
		}
	}
	if err := os.Rename(l.Path, l.rotated(1)); err != nil {
		return fmt.Errorf("audit log: rotate: %w", err)
	}
	if dropping {
		return l.noteRotation(head, h)
	}
	return nil
}

func (l *AuditLog) rotated(i int) string { return l.Path + "." + strconv.Itoa(i) }

// ReadStats counts the lines a reader went through: every line that is not
// empty is either read (an event, shown or older than since) or skipped.
type ReadStats struct {
	Read    int
	Skipped int // not an event: cut short by a crash or a full disk, or not JSON
}

func (st *ReadStats) add(o ReadStats) {
	st.Read += o.Read
	st.Skipped += o.Skipped
}

// Read calls fn with every event at or after since, oldest first, rotated
// files included. Lines that are not events are skipped: a log cut short by
// a crash must not hide the rest.
func (l *AuditLog) Read(since time.Time, fn func(Event, []byte) error) error {
	_, err := l.Scan(since, fn)
	return err
}

// Scan is Read that also counts the lines read and skipped.
func (l *AuditLog) Scan(since time.Time, fn func(Event, []byte) error) (ReadStats, error) {
	var st ReadStats
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
			return st, fmt.Errorf("audit log: %w", err)
		}
		// A last line without its newline is read too: the file is read
		// whole, and no writer finishes a line it left short.
		_, fst, err := readEvents(f, since, true, fn)
		f.Close()
		st.add(fst)
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// Follow calls fn with every event at or after since, then with each new
// event as it is appended, until ctx is done. It notices rotation. The
// stats count the lines read and skipped.
func (l *AuditLog) Follow(ctx context.Context, since time.Time, poll time.Duration, fn func(Event, []byte) error) (st ReadStats, err error) {
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
		_, fst, err := readEvents(rf, since, true, fn)
		rf.Close()
		st.add(fst)
		if err != nil {
			return st, err
		}
	}
	for {
		if f == nil {
			var err error
			if f, err = os.Open(l.Path); err == nil {
				offset = 0
			} else if !errors.Is(err, fs.ErrNotExist) {
				return st, fmt.Errorf("audit log: %w", err)
			}
		}
		if f != nil {
			if _, err := f.Seek(offset, io.SeekStart); err != nil {
				return st, fmt.Errorf("audit log: %w", err)
			}
			// A last line without its newline may still be being
			// written: it is read once the file has moved on.
			n, fst, err := readEvents(f, since, false, fn)
			st.add(fst)
			if err != nil {
				return st, err
			}
			offset += n
			// Rotated away: the old file is finished (read above); read
			// the files rotated since, then switch to the live one.
			if cur, err := os.Stat(l.Path); err != nil || !sameFile(f, cur) {
				// The rotated file is finished: its short last line too.
				if _, err := f.Seek(offset, io.SeekStart); err != nil {
					return st, fmt.Errorf("audit log: %w", err)
				}
				_, fst, err := readEvents(f, since, true, fn)
				st.add(fst)
				if err != nil {
					return st, err
				}
				if err := l.readRotatedAfter(f, since, &st, fn); err != nil {
					return st, err
				}
				f.Close()
				f = nil
				continue
			}
		}
		select {
		case <-ctx.Done():
			return st, nil
		case <-time.After(poll):
		}
	}
}

// readRotatedAfter reads, oldest first, the rotated files newer than old:
// those rotated while a follower slept. If old is no longer among them,
// every rotated file is newer.
func (l *AuditLog) readRotatedAfter(old *os.File, since time.Time, st *ReadStats, fn func(Event, []byte) error) error {
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
		_, fst, err := readEvents(f, since, true, fn)
		f.Close()
		st.add(fst)
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

// readEvents reads whole lines from r, returning how many bytes they held
// and how many lines were read and skipped. A final line without its newline
// is read when final is set, else left for the next read. Empty lines (what
// two writers repairing a short line at once leave) are not lines.
func readEvents(r io.Reader, since time.Time, final bool, fn func(Event, []byte) error) (int64, ReadStats, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var n int64
	var st ReadStats
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return n, st, fmt.Errorf("audit log: %w", err)
			}
			if !final || len(line) == 0 {
				return n, st, nil
			}
		}
		n += int64(len(line))
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(line) > 0 {
			if ferr := readEvent(line, since, &st, fn); ferr != nil {
				return n, st, ferr
			}
		}
		if err != nil {
			return n, st, nil
		}
	}
}

// readEvent counts and, if it is an event at or after since, passes on one
// line.
func readEvent(line []byte, since time.Time, st *ReadStats, fn func(Event, []byte) error) error {
	var ev Event
	if json.Unmarshal(line, &ev) != nil || ev.Event == "" {
		st.Skipped++
		return nil
	}
	st.Read++
	if !since.IsZero() && ev.Time.Before(since) {
		return nil
	}
	return fn(ev, line)
}

// Who names who decided ev for a person: the approver ("ada (web)") when
// a person did, else DecidedBy ("policy", "fallback" …).
func (ev Event) Who() string {
	if ev.Approver != nil {
		return ev.Approver.Label()
	}
	return ev.DecidedBy
}
