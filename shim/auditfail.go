package shim

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/execgate/execgate/internal/state"
)

// A write to the audit log that fails (a full disk, a read-only file) loses
// that event. The loss must not be silent, yet the place to record it is the
// disk that just refused a write. So the count lives in a small file of a
// fixed size, made beside the log when the log is started: counting then
// rewrites bytes already allocated, which a full disk still allows.

// failureRecordSize is the size of the failures file: "COUNT FIRST LAST"
// (Unix milliseconds), padded with spaces, ending in a newline.
const failureRecordSize = 64

// FailureCount is what the failures file says.
type FailureCount struct {
	Count       int64
	First, Last time.Time
}

func (l *AuditLog) failuresPath() string { return l.Path + ".failures" }

// startFailures makes the failures file, all zero, unless it exists.
func (l *AuditLog) startFailures() {
	f, err := state.OpenFile(l.failuresPath(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, state.FileMode)
	if err != nil {
		return // exists already, or cannot: counting then tries its best
	}
	f.Write(encodeFailures(FailureCount{}))
	f.Close()
}

// CountFailure adds one lost event at now to the failures file, in place.
// Concurrent shims take turns under a lock on the file.
func (l *AuditLog) CountFailure(now time.Time) error {
	if l.Path == "" {
		return errors.New("audit log: no path")
	}
	f, err := state.OpenFile(l.failuresPath(), os.O_RDWR|os.O_CREATE, state.FileMode)
	if err != nil {
		return fmt.Errorf("audit failures: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("audit failures: lock: %w", err)
	}
	buf := make([]byte, failureRecordSize)
	n, _ := f.ReadAt(buf, 0)
	c, _ := decodeFailures(buf[:n]) // a damaged count starts over
	c.Count++
	if c.First.IsZero() {
		c.First = now
	}
	c.Last = now
	if _, err := f.WriteAt(encodeFailures(c), 0); err != nil {
		return fmt.Errorf("audit failures: %w", err)
	}
	return nil
}

// Failures reads the count of events that could not be written; zero when
// none was ever lost.
func (l *AuditLog) Failures() (FailureCount, error) {
	raw, err := os.ReadFile(l.failuresPath())
	if errors.Is(err, fs.ErrNotExist) {
		return FailureCount{}, nil
	}
	if err != nil {
		return FailureCount{}, fmt.Errorf("audit failures: %w", err)
	}
	c, err := decodeFailures(raw)
	if err != nil {
		return FailureCount{}, fmt.Errorf("audit failures %s: %w", l.failuresPath(), err)
	}
	return c, nil
}

func encodeFailures(c FailureCount) []byte {
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.UnixMilli()
	}
	s := fmt.Sprintf("%d %d %d", c.Count, ms(c.First), ms(c.Last))
	b := bytes.Repeat([]byte{' '}, failureRecordSize)
	copy(b, s)
	b[failureRecordSize-1] = '\n'
	return b
}

func decodeFailures(raw []byte) (FailureCount, error) {
	fields := strings.Fields(string(raw))
	if len(fields) != 3 {
		return FailureCount{}, errors.New("not a failure count")
	}
	var v [3]int64
	for i, f := range fields {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 {
			return FailureCount{}, errors.New("not a failure count")
		}
		v[i] = n
	}
	c := FailureCount{Count: v[0]}
	if v[1] > 0 {
		c.First = time.UnixMilli(v[1])
	}
	if v[2] > 0 {
		c.Last = time.UnixMilli(v[2])
	}
	return c, nil
}
