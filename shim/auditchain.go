package shim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/execgate/execgate/internal/state"
)

// The audit log is a hash chain. Each line carries its sequence number
// ("seq"), the hash of the line before it ("prev") and its own ("hash": the
// SHA-256 of the line as written up to "prev", closed with "}"). A line
// edited, deleted or moved no longer fits its neighbours. What the lines
// alone cannot show, lines removed from the end or the start, the head file
// beside the log shows: it holds the last line's seq and hash and where the
// oldest kept file starts, rewritten in place (like the failures file) under
// the lock every writer takes on it.
//
// Someone with the user's rights can rewrite the whole chain and the head
// together; the chain makes that a deliberate forgery, not an edit, and the
// copy sent to a collector (the hashes with it) keeps what was there.

// genesis is the prev of the first line ever chained.
const genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// headRecordSize is the head file's fixed size.
const headRecordSize = 192

// chainLockWait bounds how long an append waits for the writers' lock. A
// shim stopped (SIGSTOP) while holding it must not stop every other: past
// it the event is written unchained, which --verify reports, rather than
// lost.
const chainLockWait = 2 * time.Second

// chainHead is what the head file says.
type chainHead struct {
	// Seq and Hash are the last chained line's.
	Seq  int64
	Hash string
	// FirstSeq and FirstPrev are the oldest kept line's: seq 1 and genesis
	// until rotation drops a file.
	FirstSeq  int64
	FirstPrev string
	// Rebuilt is the seq the head was rebuilt at from the log, because it
	// was missing or damaged while the log held chained lines; 0 when it
	// never was. Lines removed from the end before then cannot be told.
	Rebuilt int64
}

func (l *AuditLog) headPath() string { return l.Path + ".head" }

// encodeHead lays h out in buf, the head file's bytes: fields apart,
// padded with spaces to the fixed size, ending in a newline.
func encodeHead(buf *[headRecordSize]byte, h chainHead) []byte {
	b := append(buf[:0], "v1 "...)
	b = strconv.AppendInt(b, h.Seq, 10)
	b = append(append(append(b, ' '), h.Hash...), ' ')
	b = strconv.AppendInt(b, h.FirstSeq, 10)
	b = append(append(append(b, ' '), h.FirstPrev...), ' ')
	b = strconv.AppendInt(b, h.Rebuilt, 10)
	for i := len(b); i < headRecordSize; i++ {
		buf[i] = ' '
	}
	buf[headRecordSize-1] = '\n'
	return buf[:]
}

// decodeHead reads what encodeHead wrote.
func decodeHead(raw []byte) (chainHead, error) {
	var f [6][]byte
	n := 0
	for field := range bytes.FieldsSeq(raw) {
		if n == len(f) {
			return chainHead{}, errors.New("not a chain head")
		}
		f[n] = field
		n++
	}
	if n != len(f) || string(f[0]) != "v1" || !isHash(string(f[2])) || !isHash(string(f[4])) {
		return chainHead{}, errors.New("not a chain head")
	}
	seq, err1 := strconv.ParseInt(string(f[1]), 10, 64)
	first, err2 := strconv.ParseInt(string(f[3]), 10, 64)
	rebuilt, err3 := strconv.ParseInt(string(f[5]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || seq < 0 || first < 1 || rebuilt < 0 {
		return chainHead{}, errors.New("not a chain head")
	}
	return chainHead{Seq: seq, Hash: string(f[2]), FirstSeq: first, FirstPrev: string(f[4]), Rebuilt: rebuilt}, nil
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// lockHead opens the head file and takes the writers' lock on it, waiting
// at most chainLockWait.
func (l *AuditLog) lockHead() (*os.File, error) {
	f, err := state.OpenFile(l.headPath(), os.O_RDWR|os.O_CREATE, state.FileMode)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(chainLockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock: %w", err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock: held by another writer for over %s", chainLockWait)
		}
		time.Sleep(time.Millisecond)
	}
}

// readHead reads the head under the lock. A head file just made (empty)
// or damaged is rebuilt from the log, so that the chain goes on from what
// the log holds; the head then says so, for --verify.
func (l *AuditLog) readHead(f *os.File) chainHead {
	var buf [headRecordSize]byte
	n, _ := f.ReadAt(buf[:], 0)
	if h, err := decodeHead(buf[:n]); err == nil {
		return h
	}
	h := chainHead{Hash: genesis, FirstSeq: 1, FirstPrev: genesis}
	for _, p := range []string{l.Path, l.rotated(1)} {
		if ev, ok := lastChained(p); ok {
			h.Seq, h.Hash, h.Rebuilt = ev.Seq, ev.Hash, ev.Seq
			break
		}
	}
	if h.Rebuilt > 0 {
		for i := l.keep(); i >= 0; i-- {
			if ev, ok := firstChained(l.file(i)); ok {
				h.FirstSeq, h.FirstPrev = ev.Seq, ev.Prev
				break
			}
		}
	}
	return h
}

// file is the log file i rotations old: the live one for 0.
func (l *AuditLog) file(i int) string {
	if i == 0 {
		return l.Path
	}
	return l.rotated(i)
}

// logTailSize is how much of the log's end an append reads: enough for the
// chain fields a line ends with.
const logTailSize = 256

// readTail reads into buf the last bytes of f (of size size), at most
// logTailSize.
func readTail(buf *[logTailSize]byte, f *os.File, size int64) []byte {
	if size <= 0 {
		return nil
	}
	off := max(0, size-logTailSize)
	n, _ := f.ReadAt(buf[:size-off], off)
	return buf[:n]
}

// caughtUp returns h moved on to the log's last line when that line is the
// one after h: a writer that died between writing its line and the head
// (a window of one system call) left the head one behind.
func (h chainHead) caughtUp(tail []byte) chainHead {
	last, ok := bytes.CutSuffix(tail, []byte("\n"))
	if !ok {
		return h
	}
	if i := bytes.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	seq, prev, hash, ok := chainSuffix(last)
	if ok && seq == h.Seq+1 && prev == h.Hash {
		h.Seq, h.Hash = seq, hash
	}
	return h
}

// chainSuffix reads the chain fields a chained line ends with,
// `,"seq":N,"prev":"…","hash":"…"}`, without decoding the line.
func chainSuffix(line []byte) (seq int64, prev, hash string, ok bool) {
	const tail = `","hash":"` // between prev's value and hash's
	n := len(line)
	if n < hashSuffixLen+len(`,"seq":1,"prev":"`)+64 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return 0, "", "", false
	}
	hash = string(line[n-2-64 : n-2])
	rest := line[:n-2-64]
	if !bytes.HasSuffix(rest, []byte(tail)) {
		return 0, "", "", false
	}
	rest = rest[:len(rest)-len(tail)]
	prev = string(rest[len(rest)-64:])
	rest, ok = bytes.CutSuffix(rest[:len(rest)-64], []byte(`,"prev":"`))
	if !ok || !isHash(prev) || !isHash(hash) {
		return 0, "", "", false
	}
	i := bytes.LastIndex(rest, []byte(`,"seq":`))
	if i < 0 {
		return 0, "", "", false
	}
	seq, err := strconv.ParseInt(string(rest[i+len(`,"seq":`):]), 10, 64)
	if err != nil || seq <= 0 {
		return 0, "", "", false
	}
	return seq, prev, hash, true
}

// lastChained is the last chained line of the file at path, read from its
// end. Only a head being rebuilt asks.
func lastChained(path string) (Event, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Event{}, false
	}
	defer f.Close()
	size := fileSize(f)
	const window = 256 << 10 // longer than any line (maxLoggedCommand and a tail)
	off := max(0, size-window)
	buf := make([]byte, size-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return Event{}, false
	}
	lines := bytes.Split(bytes.TrimRight(buf, "\n"), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if ev, ok := parseChained(lines[i]); ok {
			return ev, true
		}
	}
	return Event{}, false
}

// chainLine closes body (an event marshalled with its seq and prev) with
// its hash, in place: body is spent.
func chainLine(body []byte) (line []byte, hash string) {
	sum := sha256.Sum256(body)
	line = append(body[:len(body)-1], `,"hash":"`...)
	line = hex.AppendEncode(line, sum[:])
	hash = string(line[len(line)-64:])
	return append(line, `"}`...), hash
}

// hashSuffixLen is the length of `,"hash":"<64 hex>"}`.
const hashSuffixLen = len(`,"hash":"`) + 64 + len(`"}`)

// parseChained reads a chained line: ok when it is an event with a seq and
// a hash field at its end (whether the hash is right is checkHash's
// question).
func parseChained(line []byte) (Event, bool) {
	if len(line) < hashSuffixLen || !bytes.HasSuffix(line, []byte(`"}`)) ||
		!bytes.HasPrefix(line[len(line)-hashSuffixLen:], []byte(`,"hash":"`)) {
		return Event{}, false
	}
	ev, ok := decodeEvent(line)
	if !ok || ev.Seq <= 0 || !isHash(ev.Hash) || !isHash(ev.Prev) {
		return Event{}, false
	}
	return ev, true
}

// checkHash reports whether a chained line's hash is the hash of the rest
// of it.
func checkHash(line []byte, hash string) bool {
	body := append(bytes.Clone(line[:len(line)-hashSuffixLen]), '}')
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:]) == hash
}

// noteRotation records in the head, after a rotation that dropped the
// oldest file, where the oldest kept one now starts.
func (l *AuditLog) noteRotation(f *os.File, h chainHead) error {
	for i := l.keep(); i >= 1; i-- {
		if ev, ok := firstChained(l.rotated(i)); ok {
			h.FirstSeq, h.FirstPrev = ev.Seq, ev.Prev
			break
		}
	}
	var buf [headRecordSize]byte
	if _, err := f.WriteAt(encodeHead(&buf, h), 0); err != nil {
		return fmt.Errorf("audit log: head: %w", err)
	}
	return nil
}

// firstChained is the first chained line of the file at path.
func firstChained(path string) (Event, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Event{}, false
	}
	defer f.Close()
	var found Event
	var ok bool
	errStop := errors.New("stop")
	readEvents(f, time.Time{}, true, func(ev Event, raw []byte) error {
		if ev, ok = parseChained(raw); ok {
			found = ev
			return errStop
		}
		return nil
	})
	return found, ok
}

// decodeEvent reads one line as an event.
func decodeEvent(line []byte) (Event, bool) {
	var ev Event
	if json.Unmarshal(line, &ev) != nil || ev.Event == "" {
		return Event{}, false
	}
	return ev, true
}
