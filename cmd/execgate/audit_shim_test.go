package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/shim"
)

// mountTmpfs mounts a tmpfs of size bytes on dir for the test, or skips
// it, saying why.
func mountTmpfs(t *testing.T, dir string, size string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("needs a small tmpfs to fill (mount as root): mount -t tmpfs on %s: %v: %s", dir, err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
}

// fill writes a file in dir until the file system is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, 512)
	for {
		if _, err := f.Write(buf); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "filling %s: %v", dir, err)
			return path
		}
	}
}

// TestAuditFullDisk runs the shim with its audit log on a real, full tmpfs:
// the command behaves as without execgate (nothing on stderr unless
// EXECGATE_DEBUG asks, then once per run), the line cut short is repaired
// before the next event once there is room again, and execgate log says it
// skipped it.
func TestAuditFullDisk(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, fullConfig)
	mountTmpfs(t, e.state, "64k")
	logPath := filepath.Join(e.state, "execgate", "audit.jsonl")
	run := func(env []string, script string) outcome {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := e.command(ctx, e.shim("bash"), "bash", "-c", script)
		cmd.Env = append(cmd.Env, env...)
		return runOutcome(t, cmd, "")
	}

	// With room: two whole lines.
	assert.Equal(t, outcome{stdout: "before\n"}, run(nil, "echo before"))
	require.Len(t, e.readAudit(), 2)

	// Full, with room left only in the log's last page: the first event
	// (longer than a page) is cut short, the second not written at all.
	filler := fill(t, e.state)
	long := "echo full # " + strings.Repeat("x", 8000)
	assert.Equal(t, outcome{stdout: "full\n"}, run(nil, long), "nothing added to the command's output")
	raw, err := os.ReadFile(logPath)
	require.NoError(t, err)
	require.NotEqual(t, byte('\n'), raw[len(raw)-1], "the write was cut short (else the test proves nothing)")

	// In debug mode the failure is reported, once for the run's two events.
	o := run([]string{"EXECGATE_DEBUG=1"}, "echo debug")
	assert.Equal(t, "debug\n", o.stdout)
	assert.Equal(t, 0, o.status)
	assert.Equal(t, 1, strings.Count(o.stderr, "audit log write failed"), "stderr %q", o.stderr)
	assert.Contains(t, o.stderr, "no space left on device")

	// Room again: the short line is ended before the next event, which is
	// whole and readable.
	require.NoError(t, os.Remove(filler))
	assert.Equal(t, outcome{stdout: "after\n"}, run(nil, "echo after"))
	evs := e.readAudit()
	var cmds []string
	for _, ev := range evs {
		cmds = append(cmds, ev.Event+" "+ev.Command)
	}
	assert.Equal(t, []string{
		"exec.started echo before", "exec.finished echo before",
		"exec.started echo after", "exec.finished echo after",
	}, cmds)
	raw, err = os.ReadFile(logPath)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	require.Len(t, lines, 5, "four events and the short line, each on its own line")
	assert.False(t, json.Valid([]byte(lines[2])), "the short line")
	assert.True(t, strings.HasPrefix(lines[2], `{"time"`), "the short line starts an event")

	// execgate log shows the four and says it skipped one line.
	cmd := exec.Command(filepath.Join(e.dir, "execgate"), "log", "--json")
	cmd.Env = e.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	assert.Len(t, strings.Split(strings.TrimSpace(stdout.String()), "\n"), 4)
	assert.Contains(t, stderr.String(), "execgate: log: skipped 1 of 5 lines of "+logPath)
	// …and counts the events lost: the cut one and the three after it
	// (two runs of two events each on the full disk).
	assert.Contains(t, stderr.String(), "execgate: log: 4 events could not be written to the log")
	assert.Equal(t, 2, strings.Count(stderr.String(), "\n"), "two lines: %q", stderr.String())
	// So does execgate doctor.
	cmd = exec.Command(filepath.Join(e.dir, "execgate"), "doctor")
	cmd.Env = e.env
	out, _ := cmd.Output()
	assert.Contains(t, string(out), "4 events could not be written to ")
	var ev shim.Event
	require.NoError(t, json.Unmarshal([]byte(strings.Split(stdout.String(), "\n")[2]), &ev))
	assert.Equal(t, "echo after", ev.Command)
}
