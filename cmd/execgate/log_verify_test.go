package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogVerifyShims: real shims running at once leave a chain that
// `execgate log --verify` (a real process) calls intact; an edited, a
// deleted and a swapped line are each named by file and line, with exit
// status 1.
func TestLogVerifyShims(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, fullConfig)
	const shims, each = 6, 4
	var wg sync.WaitGroup
	for i := range shims {
		wg.Go(func() {
			for j := range each {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", fmt.Sprintf("echo %d-%d", i, j)), "")
				cancel()
				assert.Equal(t, 0, o.status, "stderr %q", o.stderr)
			}
		})
	}
	wg.Wait()
	log := filepath.Join(e.state, "execgate", "audit.jsonl")
	verify := func() outcome {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return runOutcome(t, e.command(ctx, filepath.Join(e.dir, "execgate"), "execgate", "log", "--verify"), "")
	}
	o := verify()
	require.Equal(t, 0, o.status, "stdout %q stderr %q", o.stdout, o.stderr)
	lines := len(e.readAudit())
	assert.GreaterOrEqual(t, lines, shims*each, "an event or more per command")
	assert.Equal(t, fmt.Sprintf("intact: %d lines (seq 1–%d) in 1 files of %s, each chained to the one before\n", lines, lines, log), o.stdout)

	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	original := strings.SplitAfter(string(raw), "\n")
	original = original[:len(original)-1] // the empty string after the last newline
	for _, tt := range []struct {
		name string
		edit func(ls []string) []string
		want string
	}{
		{"edited", func(ls []string) []string {
			ls[4] = strings.Replace(ls[4], `"agent":"test-agent"`, `"agent":"someone-else"`, 1)
			return ls
		}, log + ":5: edited: its hash does not match its text\n"},
		{"deleted", func(ls []string) []string { return append(ls[:7:7], ls[8:]...) },
			log + ":8: 1 line missing before it (seq 8): deleted\n"},
		{"swapped", func(ls []string) []string {
			ls[9], ls[10] = ls[10], ls[9]
			return ls
		}, log + ":10: it comes before seq 10 (at " + log + ":11): lines reordered\n" +
			log + ":11: seq 10 comes after seq 11 (" + log + ":10): lines reordered\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ls := tt.edit(append([]string(nil), original...))
			require.NoError(t, os.WriteFile(log, []byte(strings.Join(ls, "")), 0o600))
			o := verify()
			assert.Equal(t, 1, o.status)
			assert.Equal(t, tt.want+fmt.Sprintf("broken: the audit log %s was edited, truncated or reordered in %d places (above)\n",
				log, strings.Count(tt.want, "\n")), o.stdout)
		})
	}
	require.NoError(t, os.WriteFile(log, raw, 0o600))
	assert.Equal(t, 0, verify().status, "the log as written verifies again")
}
