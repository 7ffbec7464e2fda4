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

	"github.com/execgate/execgate/internal/vectors"
	"github.com/execgate/execgate/shim"
)

// TestShimClaudeStartupCommands runs Claude Code's own start-up commands,
// as version 2.1.197 sent them (testdata/envelopes/captured), through the
// real shim with nobody to ask and askFallback=deny: from Claude Code's
// process they run (no refusal, no question, nothing learned); from
// anything else, or with one command added, they are judged and refused.
func TestShimClaudeStartupCommands(t *testing.T) {
	realBash(t)
	c, err := vectors.ReadCaptured(filepath.Join("..", "..", "testdata", "envelopes", "captured", "claude@2.1.197.json"))
	require.NoError(t, err)
	e, home, tmp := envelopeEnv(t, `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny"}}`)
	configBefore, err := os.ReadFile(e.config)
	require.NoError(t, err)
	// The snapshot records the PATH Claude Code has, which is the shim's.
	path := ""
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	fill := func(s string) string {
		s = strings.NewReplacer("{{ID}}", "k3v9x2", "{{PATH}}", path).Replace(s)
		return vectors.Fill([]string{s}, home, tmp, "", false)[0]
	}
	run := func(program string, env ...string) outcome {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := e.command(ctx, e.shim("bash"), "bash", "-c", "-l", program)
		cmd.Env = append(cmd.Env, env...)
		return runOutcome(t, cmd, "")
	}
	var startup []string
	for _, s := range c.Shapes {
		program := s.Argv[len(s.Argv)-1]
		if filepath.Base(s.Argv[0]) != "bash" {
			continue // the zsh forms, recorded without a shim
		}
		if program == "env" || strings.HasPrefix(program, "SNAPSHOT_FILE=") && !strings.Contains(program, `source "`) {
			startup = append(startup, fill(program))
		}
	}
	require.Equal(t, 2, len(startup), "want the env probe and the snapshot writer without an rc file")

	for _, program := range startup {
		name := strings.SplitN(program, "\n", 2)[0]
		t.Run(name, func(t *testing.T) {
			o := run(program, "CLAUDECODE=1", "EXECGATE_AGENT=claude-code")
			require.Equal(t, 0, o.status, "stderr %q", o.stderr)
			assert.NotContains(t, o.stderr, "execgate")
			ev := lastDecision(t, e)
			assert.Equal(t, shim.EventStarted, ev.Event)
			assert.True(t, strings.HasPrefix(ev.Command, "Claude Code start-up: "), "audit names it: %q", ev.Command)
			assert.Equal(t, program, ev.Envelope, "the audit log keeps the whole program")

			// On a CI machine too: what the writer prints goes into its
			// snapshot, and its error message is known text.
			o = run(program, "CLAUDECODE=1", "EXECGATE_AGENT=claude-code", "CI=true", "GITHUB_ACTIONS=true")
			require.Equal(t, 0, o.status, "in CI: stderr %q", o.stderr)
			assert.True(t, strings.HasPrefix(lastDecision(t, e).Command, "Claude Code start-up: "), "in CI")

			// BASH_ENV runs a file before the program, unseen: judged.
			marker := filepath.Join(home, "bash-env-ran")
			rc := filepath.Join(home, "bash-env.sh")
			require.NoError(t, os.WriteFile(rc, []byte("touch "+marker+"\n"), 0o644))
			o = run(program, "CLAUDECODE=1", "EXECGATE_AGENT=claude-code", "BASH_ENV="+rc)
			assert.Equal(t, 126, o.status, "with BASH_ENV: stdout %q", o.stdout)
			assert.NoFileExists(t, marker)

			o = run(program) // not Claude Code's process
			assert.Equal(t, 126, o.status, "stdout %q", o.stdout)
			o = run(program+"\nrm -rf "+filepath.Join(home, "victim"), "CLAUDECODE=1", "EXECGATE_AGENT=claude-code")
			assert.Equal(t, 126, o.status, "stdout %q", o.stdout)
		})
	}
	// The snapshot writer did write the snapshot.
	snaps, err := filepath.Glob(filepath.Join(home, ".claude", "shell-snapshots", "snapshot-bash-k3v9x2.sh"))
	require.NoError(t, err)
	assert.Len(t, snaps, 1)
	configAfter, err := os.ReadFile(e.config)
	require.NoError(t, err)
	assert.Equal(t, string(configBefore), string(configAfter), "nothing learned")
}
