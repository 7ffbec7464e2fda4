package auditexport

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/rsyslogtest"
	"github.com/execgate/execgate/shim"
)

// exportLog is a log of n events (two agents, a refusal every third)
// whose commands carry a token the log redacts.
func exportLog(t *testing.T, n int) *shim.AuditLog {
	t.Helper()
	l := &shim.AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl")}
	appendEvents(t, l, 0, n)
	return l
}

func appendEvents(t *testing.T, l *shim.AuditLog, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		ev := shim.Event{Time: time.Now(), Event: shim.EventStarted, ID: fmt.Sprintf("id%d", i), Pid: 1000 + i,
			Agent: "claude-code", Command: fmt.Sprintf("echo %d ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", i)}
		if i%3 == 2 {
			ev.Event = shim.EventDenied
		}
		require.NoError(t, l.Append(ev))
	}
}

func syslogTarget(addr string) config.ExportTarget {
	return config.ExportTarget{Kind: config.ExportSyslog, Syslog: &config.SyslogExport{Address: addr}}
}

// TestSyslogExportRsyslog: over TCP (RFC 5424) and over a unix socket as
// a stock rsyslog reads /dev/log (the local form), every event reaches the
// real rsyslogd once, in order, parsed (facility authpriv, app name, pid,
// over TCP the event as MSGID), redacted as the local log is; a second run
// sends only what is new.
func TestSyslogExportRsyslog(t *testing.T) {
	for _, via := range []string{"tcp", "unix"} {
		t.Run(via, func(t *testing.T) {
			r := rsyslogtest.Start(t, rsyslogtest.FreePort(t))
			addr := "tcp://" + r.TCP
			if via == "unix" {
				addr = "unix://" + r.Sock
			}
			target := syslogTarget(addr)
			s, err := NewSyslogSender(target.Syslog)
			require.NoError(t, err)
			defer s.Close()
			l := exportLog(t, 5)
			dir := t.TempDir()
			res, err := Run(t.Context(), l, target, dir, s)
			require.NoError(t, err)
			assert.Equal(t, 5, res.Sent)
			got := r.Lines(t, 5)
			for i, line := range got {
				pri, app, pid, msgid, msg := splitLine(t, line)
				want := "exec.started"
				sev := "86" // authpriv.info
				if i%3 == 2 {
					want, sev = "exec.denied", "85" // authpriv.notice
				}
				assert.Equal(t, sev, pri)
				assert.Equal(t, "execgate", app)
				assert.Equal(t, fmt.Sprint(1000+i), pid)
				if via == "unix" {
					want = "-" // the local form has no MSGID; the line names the event
				}
				assert.Equal(t, want, msgid)
				assert.Contains(t, msg, fmt.Sprintf(`"command":"echo %d [REDACTED:github-token]"`, i))
				assert.NotContains(t, msg, "ghp_")
				assert.Contains(t, msg, fmt.Sprintf(`"seq":%d,`, i+1), "the chain goes along")
			}

			appendEvents(t, l, 5, 2)
			res, err = Run(t.Context(), l, target, dir, s)
			require.NoError(t, err)
			assert.Equal(t, 2, res.Sent)
			got = r.Lines(t, 7)
			assert.Contains(t, got[5], `"id":"id5"`)
			assert.Contains(t, got[6], `"id":"id6"`)
		})
	}
}

func splitLine(t *testing.T, line string) (pri, app, pid, msgid, msg string) {
	t.Helper()
	f := strings.SplitN(line, "|", 5)
	require.Len(t, f, 5, line)
	return f[0], f[1], f[2], f[3], strings.TrimSpace(f[4])
}

// TestSyslogExportCollectorDown: a collector that is not there fails the
// run at once, with one line naming it; the cursor stays, the local log
// is untouched, and once the collector is up the next run sends every
// event once.
func TestSyslogExportCollectorDown(t *testing.T) {
	port := rsyslogtest.FreePort(t)
	target := syslogTarget(fmt.Sprintf("tcp://127.0.0.1:%d", port))
	s, err := NewSyslogSender(target.Syslog)
	require.NoError(t, err)
	defer s.Close()
	l := exportLog(t, 4)
	before, err := os.ReadFile(l.Path)
	require.NoError(t, err)
	dir := t.TempDir()
	start := time.Now()
	_, err = Run(t.Context(), l, target, dir, s)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Contains(t, err.Error(), "syslog tcp://127.0.0.1:")
	assert.Contains(t, err.Error(), "connection refused")
	after, err := os.ReadFile(l.Path)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	assert.NoFileExists(t, cursorPath(dir, target))

	r := rsyslogtest.Start(t, port)
	res, err := Run(t.Context(), l, target, dir, s)
	require.NoError(t, err)
	assert.Equal(t, 4, res.Sent)
	r.Lines(t, 4)
}

// TestExportBatchesAndCursor: the cursor moves after each batch the
// collector took, so a collector that fails part way loses nothing and
// repeats at most the batch it failed; rotation does not move the place.
func TestExportBatchesAndCursor(t *testing.T) {
	l := &shim.AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl"), MaxBytes: 4000, Keep: 50}
	appendEvents(t, l, 0, BatchSize+40)
	target := syslogTarget("tcp://127.0.0.1:1")
	dir := t.TempDir()
	f := &flaky{failAfter: 1}
	res, err := Run(t.Context(), l, target, dir, f)
	require.Error(t, err)
	assert.Equal(t, BatchSize, res.Sent)
	assert.Equal(t, Position{Seq: BatchSize}, res.Cursor)

	appendEvents(t, l, BatchSize+40, 10) // rotating the log further
	f.failAfter = -1
	res, err = Run(t.Context(), l, target, dir, f)
	require.NoError(t, err)
	assert.Equal(t, 50, res.Sent)
	require.Len(t, f.ids, BatchSize+50)
	for i, id := range f.ids {
		require.Equal(t, fmt.Sprintf("id%d", i), id, "each event once, in order")
	}

	// A log begun again (deleted) is sent from its start.
	for _, p := range []string{l.Path, l.Path + ".head"} {
		require.NoError(t, os.Remove(p))
	}
	for i := 1; i <= 50; i++ {
		os.Remove(fmt.Sprintf("%s.%d", l.Path, i))
	}
	appendEvents(t, l, 0, 3)
	f.ids = nil
	res, err = Run(t.Context(), l, target, dir, f)
	require.NoError(t, err)
	assert.True(t, res.Restarted)
	assert.Equal(t, 3, res.Sent)

	require.NoError(t, os.WriteFile(cursorPath(dir, target), []byte("garbage"), 0o600))
	_, err = Run(t.Context(), l, target, dir, f)
	assert.ErrorContains(t, err, "is damaged: remove it to send the whole log again")
}

// flaky is a Sender that takes failAfter batches (-1: all), then fails.
type flaky struct {
	failAfter int
	ids       []string
}

func (f *flaky) Send(_ context.Context, recs []Record) error {
	if f.failAfter == 0 {
		return fmt.Errorf("collector gone")
	}
	if f.failAfter > 0 {
		f.failAfter--
	}
	for _, r := range recs {
		f.ids = append(f.ids, r.Event.ID)
	}
	return nil
}

func (f *flaky) Close() error { return nil }
