package shim

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Concurrent shims counting lost events lose no count, and the file keeps
// its size (counting must not need new room on a full disk).
func TestCountFailureConcurrent(t *testing.T) {
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl")}
	require.NoError(t, l.Append(Event{Event: EventStarted, Command: "x"}))
	fi, err := os.Stat(l.failuresPath())
	require.NoError(t, err, "a new log starts its failures file")
	require.EqualValues(t, failureRecordSize, fi.Size())

	var wg sync.WaitGroup
	t0 := time.UnixMilli(1_700_000_000_000)
	for i := range 40 {
		wg.Go(func() { assert.NoError(t, l.CountFailure(t0.Add(time.Duration(i)*time.Second))) })
	}
	wg.Wait()
	c, err := l.Failures()
	require.NoError(t, err)
	assert.EqualValues(t, 40, c.Count)
	fi, err = os.Stat(l.failuresPath())
	require.NoError(t, err)
	assert.EqualValues(t, failureRecordSize, fi.Size())
}

func TestFailuresDamaged(t *testing.T) {
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl")}
	c, err := l.Failures()
	require.NoError(t, err)
	assert.Zero(t, c.Count, "no file: nothing lost")
	require.NoError(t, os.WriteFile(l.failuresPath(), []byte("garbage"), 0o600))
	_, err = l.Failures()
	assert.ErrorContains(t, err, "not a failure count")
	// Counting starts over on a damaged file rather than failing.
	require.NoError(t, l.CountFailure(time.Now()))
	c, err = l.Failures()
	require.NoError(t, err)
	assert.EqualValues(t, 1, c.Count)
}
