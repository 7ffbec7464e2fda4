package shim

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/internal/redact"
)

func readAll(t *testing.T, l *AuditLog, since time.Time) []Event {
	t.Helper()
	var evs []Event
	require.NoError(t, l.Read(since, func(ev Event, _ []byte) error {
		evs = append(evs, ev)
		return nil
	}))
	return evs
}

func TestAuditRotation(t *testing.T) {
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "state", "audit.jsonl"), MaxBytes: 2000, Keep: 2}
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 40 {
		require.NoError(t, l.Append(Event{Time: base.Add(time.Duration(i) * time.Second), Event: EventStarted, ID: string(rune('a' + i%26)), Command: strings.Repeat("x", 100)}))
	}
	for _, p := range []string{l.Path, l.Path + ".1", l.Path + ".2"} {
		fi, err := os.Stat(p)
		require.NoError(t, err, p)
		assert.LessOrEqual(t, fi.Size(), int64(2000+300), p)
	}
	assert.NoFileExists(t, l.Path+".3")
	evs := readAll(t, l, time.Time{})
	require.NotEmpty(t, evs)
	assert.Less(t, len(evs), 40, "the oldest were rotated away")
	for i := 1; i < len(evs); i++ {
		assert.True(t, evs[i-1].Time.Before(evs[i].Time), "events come oldest first")
	}
	assert.Equal(t, base.Add(39*time.Second), evs[len(evs)-1].Time)
	recent := readAll(t, l, base.Add(37*time.Second))
	assert.Len(t, recent, 3)
}

func TestAuditConcurrentAppends(t *testing.T) {
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl")}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				assert.NoError(t, l.Append(Event{Event: EventFinished, Agent: strings.Repeat(string(rune('a'+i)), 500)}))
			}
		})
	}
	wg.Wait()
	assert.Len(t, readAll(t, l, time.Time{}), 400, "no line lost or torn")
}

func TestAuditLimitsAndBadLines(t *testing.T) {
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl")}
	require.NoError(t, os.WriteFile(l.Path, []byte("not json\n{\"event\":\"\"}\n"), 0o600))
	require.NoError(t, l.Append(Event{Event: EventFinished, Command: strings.Repeat("é", maxLoggedCommand), OutputTail: strings.Repeat("t", 3*maxLoggedTail)}))
	evs := readAll(t, l, time.Time{})
	require.Len(t, evs, 1)
	assert.LessOrEqual(t, len(evs[0].Command), maxLoggedCommand+len("…"))
	assert.True(t, strings.HasSuffix(evs[0].Command, "é…"), "cut on a character boundary")
	assert.Len(t, evs[0].OutputTail, maxLoggedTail)
	assert.Contains(t, evs[0].Warnings, "command truncated in the log")
}

func TestAuditFollow(t *testing.T) {
	// Two or three lines a file (a line is ≈ 350 bytes with its chain).
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl"), MaxBytes: 800, Keep: 1}
	require.NoError(t, l.Append(Event{Event: EventStarted, ID: "first"}))
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		_, err := l.Follow(ctx, time.Time{}, 5*time.Millisecond, func(ev Event, _ []byte) error {
			got <- ev.ID
			return nil
		})
		done <- err
	}()
	assert.Equal(t, "first", <-got)
	// Enough events to rotate the file under the follower.
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		require.NoError(t, l.Append(Event{Event: EventStarted, ID: id, Command: strings.Repeat("x", 100)}))
	}
	var ids []string
	for len(ids) < 6 {
		select {
		case id := <-got:
			ids = append(ids, id)
		case <-time.After(5 * time.Second):
			t.Fatalf("follow stalled after %v", ids)
		}
	}
	assert.Equal(t, []string{"a", "b", "c", "d", "e", "f"}, ids)
	cancel()
	require.NoError(t, <-done)
}

// TestAuditRepairsShortLine: a write cut short (simulated by truncating the
// log in the middle of its last line) is ended before the next event, which
// is not glued to it; the reader skips and counts the short line.
func TestAuditRepairsShortLine(t *testing.T) {
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl")}
	require.NoError(t, l.Append(Event{Event: EventStarted, ID: "one"}))
	require.NoError(t, l.Append(Event{Event: EventStarted, ID: "two", Command: "make test"}))
	fi, err := os.Stat(l.Path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(l.Path, fi.Size()-20))
	require.NoError(t, l.Append(Event{Event: EventStarted, ID: "three"}))

	var ids []string
	st, err := l.Scan(time.Time{}, func(ev Event, _ []byte) error {
		ids = append(ids, ev.ID)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "three"}, ids)
	assert.Equal(t, ReadStats{Read: 2, Skipped: 1}, st)
	raw, err := os.ReadFile(l.Path)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(raw), "\n"), "one line each")
}

// TestAuditLastLineWithoutNewline: an event whose newline alone was lost is
// read, and the next append ends it rather than joining it.
func TestAuditLastLineWithoutNewline(t *testing.T) {
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl")}
	require.NoError(t, l.Append(Event{Event: EventStarted, ID: "one"}))
	fi, err := os.Stat(l.Path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(l.Path, fi.Size()-1))
	assert.Len(t, readAll(t, l, time.Time{}), 1)
	require.NoError(t, l.Append(Event{Event: EventStarted, ID: "two"}))
	evs := readAll(t, l, time.Time{})
	require.Len(t, evs, 2)
	assert.Equal(t, "two", evs[1].ID)
}

// TestAuditModes: the log is 0600 in a 0700 directory, fresh or left too
// open by hand or by an older version; without a state directory nothing
// is written anywhere.
func TestAuditModes(t *testing.T) {
	fresh := &AuditLog{Path: filepath.Join(t.TempDir(), "state", "execgate", "audit.jsonl")}
	require.NoError(t, fresh.Append(Event{Event: EventStarted, ID: "a"}))
	assertMode(t, filepath.Dir(fresh.Path), 0o700)
	assertMode(t, fresh.Path, 0o600)

	dir := filepath.Join(t.TempDir(), "execgate")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.Chmod(dir, 0o755))
	open := &AuditLog{Path: filepath.Join(dir, "audit.jsonl")}
	require.NoError(t, os.WriteFile(open.Path, nil, 0o600))
	require.NoError(t, os.Chmod(open.Path, 0o644))
	require.NoError(t, open.Append(Event{Event: EventStarted, ID: "b"}))
	assertMode(t, dir, 0o700)
	assertMode(t, open.Path, 0o600)

	path, err := DefaultAuditPath(func(string) string { return "" })
	require.Error(t, err)
	assert.Error(t, (&AuditLog{Path: path}).Append(Event{Event: EventStarted, ID: "c"}))
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, want, fi.Mode().Perm(), path)
}

// TestAuditRedacts: every known token shape is replaced in each text
// field of an event before it is written.
func TestAuditRedacts(t *testing.T) {
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl")}
	for _, ex := range redact.Examples() {
		t.Run(ex.Name, func(t *testing.T) {
			in := "x " + ex.Text + "\ny"
			ev := Event{Event: EventFinished, ID: ex.Name, Command: in, Envelope: in, Message: in, OutputTail: in,
				Reasons: []string{in}, Allowlisted: []string{in}, Warnings: []string{in}}
			require.NoError(t, l.Append(ev))
			raw, err := os.ReadFile(l.Path)
			require.NoError(t, err)
			var line string
			for _, ln := range strings.Split(string(raw), "\n") {
				if strings.Contains(ln, `"id":"`+ex.Name+`"`) {
					line = ln
				}
			}
			require.NotEmpty(t, line)
			secretJSON, _ := json.Marshal(ex.Secret)
			assert.NotContains(t, line, strings.Trim(string(secretJSON), `"`))
			assert.Equal(t, 7, strings.Count(line, redact.Marker(ex.Name)), line)
		})
	}
}
