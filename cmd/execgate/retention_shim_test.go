package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/shim"
)

// awsSecret is in the test's ~/.aws/credentials: a shape redaction does
// not know, so only the output-tail setting keeps it out of the log.
const awsSecret = "plain-password-correct-horse"

// TestShimOutputTailSetting runs real commands through the shim with each
// audit.outputTail value: the tail of a command that reads credentials is
// absent unless "on"; other commands keep theirs unless "off". The caller
// always gets the output.
func TestShimOutputTailSetting(t *testing.T) {
	realBash(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		setting          string // "" leaves the default
		credTail, lsTail bool
	}{
		{"", false, true},
		{`"unless-credentials"`, false, true},
		{`"on"`, true, true},
		{`"off"`, false, false},
		{`"of"`, false, false}, // not understood: no tail
	} {
		t.Run(tc.setting, func(t *testing.T) {
			config := `{"version": 1, "defaults": {"security": "full", "ask": "off"}}`
			if tc.setting != "" {
				config = `{"version": 1, "defaults": {"security": "full", "ask": "off"}, "audit": {"outputTail": ` + tc.setting + `}}`
			}
			e := newShimEnv(t, config)
			home := homeOf(e)
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte("aws_password = "+awsSecret+"\n"), 0o600))

			o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "cat ~/.aws/credentials; echo done"), "")
			require.Equal(t, 0, o.status, o.stderr)
			assert.Contains(t, o.stdout, awsSecret, "the caller gets the output")
			o = runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "echo listing; echo done"), "")
			require.Equal(t, 0, o.status, o.stderr)

			fin := finishedEvents(t, e)
			require.Len(t, fin, 2)
			assert.Equal(t, tc.credTail, strings.Contains(fin[0].OutputTail, awsSecret), "credential tail: %q", fin[0].OutputTail)
			assert.Equal(t, tc.lsTail, strings.Contains(fin[1].OutputTail, "listing"), "plain tail: %q", fin[1].OutputTail)
			raw, err := os.ReadFile(filepath.Join(e.state, "execgate", "audit.jsonl"))
			require.NoError(t, err)
			assert.Equal(t, tc.credTail, strings.Contains(string(raw), awsSecret))
		})
	}
}

// TestShimRedactsStoredOutput: a token in the command line and in output
// past the cap reaches the caller whole, and the audit log and the spill
// file only as a marker.
func TestShimRedactsStoredOutput(t *testing.T) {
	realBash(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := newShimEnv(t, `{"version": 1, "defaults": {"security": "full", "ask": "off"}, "audit": {"outputTail": "on"}, "output": {"maxBytes": 2000, "tailBytes": 500}}`)
	const token = "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"
	cmd := "echo " + token + "; seq 1 3000; echo " + token
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", cmd), "")
	require.Equal(t, 0, o.status, o.stderr)
	assert.Equal(t, 2, strings.Count(o.stdout, token), "the caller sees the head and the tail as printed")

	fin := finishedEvents(t, e)
	require.Len(t, fin, 1)
	require.NotEmpty(t, fin[0].SpillPath)
	spill, err := os.ReadFile(fin[0].SpillPath)
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(e.state, "execgate", "audit.jsonl"))
	require.NoError(t, err)
	for what, stored := range map[string]string{"audit log": string(raw), "spill": string(spill)} {
		assert.NotContains(t, stored, token, what)
		assert.Contains(t, stored, "[REDACTED:github-token]", what)
	}
	assert.Contains(t, string(spill), "\n3000\n", "the rest of the output is kept")
	for _, p := range []string{filepath.Join(e.state, "execgate"), filepath.Dir(fin[0].SpillPath)} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), p)
	}
	for _, p := range []string{filepath.Join(e.state, "execgate", "audit.jsonl"), fin[0].SpillPath} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), p)
	}
}

// homeOf is the HOME e gives the shim.
func homeOf(e *shimEnv) string {
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			return v
		}
	}
	e.t.Fatal("no HOME")
	return ""
}

func finishedEvents(t *testing.T, e *shimEnv) []shim.Event {
	t.Helper()
	var out []shim.Event
	for _, ev := range e.readAudit() {
		if ev.Event == shim.EventFinished {
			out = append(out, ev)
		}
	}
	return out
}
