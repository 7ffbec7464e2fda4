package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replayEnv pins what replay reads from the environment: no hub, a home
// that does not exist (under /home, not /tmp, where deletions are judged
// more leniently), the built-in policy.
func replayEnv(t *testing.T) {
	t.Helper()
	cfgEnv(t)
	t.Setenv("HOME", "/home/agent")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")
}

func replayRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	cfg := filepath.Join(t.TempDir(), "exec-approvals.json")
	code = run(append([]string{"execgate", "--config", cfg, "replay"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestReplayGolden pins the report (text and JSON) on the transcripts
// the real agent CLIs wrote and the hand-written trajectories: what a
// person and a script read is the product. The fixtures' directories do
// not exist here, so every command is judged in an unknown one.
func TestReplayGolden(t *testing.T) {
	replayEnv(t)
	fixtureAbsent(t)
	code, text, stderr := replayRun(t, "../../testdata/replay")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	compareGolden(t, "../../testdata/replay/report.golden", []byte(text))

	code, js, stderr := replayRun(t, "--json", "../../testdata/replay")
	require.Equal(t, 0, code, stderr)
	compareGolden(t, "../../testdata/replay/report.golden.json", []byte(js))
	var report map[string]any
	require.NoError(t, json.Unmarshal([]byte(js), &report))
	assert.EqualValues(t, 1, report["schema"])
}

// TestReplayJSONL: one object per command, in order, with where it was
// read and what would have become of it.
func TestReplayJSONL(t *testing.T) {
	replayEnv(t)
	fixtureAbsent(t)
	code, out, stderr := replayRun(t, "--jsonl", "../../testdata/replay/captured/claude")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 8)
	var first, sixth replayCommandJSON
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.NoError(t, json.Unmarshal([]byte(lines[5]), &sixth))
	assert.Equal(t, "git status", first.Command)
	assert.Equal(t, "claude-code", first.Agent)
	// The recorded directory is gone: what git's configuration there
	// would run cannot be proven, so it asks.
	assert.Equal(t, "ask", first.Decision)
	assert.Equal(t, "/tmp/execgate-replay-fixture/work", first.Cwd)
	assert.Equal(t, "rm -rf ~/precious", sixth.Command)
	assert.Equal(t, "ask", sixth.Decision)
	assert.Equal(t, "dangerous", sixth.Risk)
	assert.Contains(t, sixth.Rules, "rm-recursive-catastrophic")
	assert.Regexp(t, `captured/claude/projects/.*\.jsonl:\d+$`, sixth.Where)

	// --agent judges everything under one agent's policy.
	var out2, errb bytes.Buffer
	code = run([]string{"execgate", "--config", filepath.Join(t.TempDir(), "c.json"), "--agent", "ci", "replay", "--jsonl",
		"../../testdata/replay/captured/claude", "../../testdata/replay/swe-agent"}, strings.NewReader(""), &out2, &errb)
	require.Equal(t, 0, code, errb.String())
	for _, line := range strings.Split(strings.TrimSpace(out2.String()), "\n") {
		var c replayCommandJSON
		require.NoError(t, json.Unmarshal([]byte(line), &c))
		assert.Equal(t, "ci", c.Agent, c.Command)
	}

	code, _, stderr = replayRun(t, "--json", "--jsonl", ".")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "cannot be used together")
}

// TestReplayDefaultPaths: without a path, the agents' own directories
// are read; with none there, one line says what to do.
func TestReplayDefaultPaths(t *testing.T) {
	replayEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	code, out, stderr := replayRun(t)
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "no transcripts in ~/.claude/projects")

	src := "../../testdata/replay/captured/codex/sessions"
	dst := filepath.Join(home, ".codex", "sessions")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	code, out, stderr = replayRun(t, "--jsonl")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 7, strings.Count(out, "\n"), "Codex's seven commands (its apply_patch is Codex's own)")
}

// TestReplayUnusableConfig: a configuration that exists but cannot be
// used refuses every command, as the shim would, and says why once.
func TestReplayUnusableConfig(t *testing.T) {
	replayEnv(t)
	cfg := filepath.Join(t.TempDir(), "exec-approvals.json")
	require.NoError(t, os.WriteFile(cfg, []byte("{not json"), 0o600))
	var out, errb bytes.Buffer
	code := run([]string{"execgate", "--config", cfg, "replay", "--json", "../../testdata/replay/captured/gemini"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	assert.Equal(t, 1, strings.Count(errb.String(), "\n"), errb.String())
	var report struct {
		Commands int
		Outcomes struct{ Allow, Ask, Deny int }
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &report))
	assert.Equal(t, 8, report.Commands)
	assert.Equal(t, 8, report.Outcomes.Deny)
}

// TestReplayProblems: a truncated transcript and a file that cannot be
// read are one stderr line each, and everything else is reported.
func TestReplayProblems(t *testing.T) {
	replayEnv(t)
	dir := t.TempDir()
	raw, err := os.ReadFile(firstFile(t, "../../testdata/replay/captured/claude"))
	require.NoError(t, err)
	cut := bytes.LastIndex(raw[:len(raw)-1], []byte("\n")) + 10
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cut.jsonl"), raw[:cut], 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "locked.jsonl"), raw, 0o000))
	code, out, stderr := replayRun(t, dir, filepath.Join(dir, "missing.jsonl"))
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, l := range lines {
		assert.Regexp(t, `^execgate: replay: \S+(:\d+)?: .+`, l)
	}
	assert.Contains(t, stderr, "cut.jsonl:")
	assert.Contains(t, stderr, "ends in the middle of a record")
	assert.Contains(t, stderr, "missing.jsonl: cannot be read")
	if os.Geteuid() != 0 { // root reads a file of mode 0
		assert.Contains(t, stderr, "locked.jsonl: cannot be read")
	}
	assert.Regexp(t, `^(8|16) commands in 1 session`, out)
	assert.Contains(t, out, "could not be read and were skipped")
}

// TestReplayProgress: on a terminal, stderr gets a progress line that is
// cleared at the end; anywhere else, nothing.
func TestReplayProgress(t *testing.T) {
	replayEnv(t)
	dir := t.TempDir()
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, `{"type":"assistant","cwd":"/nowhere","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"ls dir%d"}}]}}`+"\n", i, i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(b.String()), 0o644))

	code, _, stderr := replayRun(t, dir)
	require.Equal(t, 0, code)
	assert.Empty(t, stderr, "no terminal, no progress")

	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close()
	got := make(chan string)
	go func() {
		all, _ := io.ReadAll(ptmx)
		got <- string(all)
	}()
	var out bytes.Buffer
	code = run([]string{"execgate", "--config", filepath.Join(t.TempDir(), "c.json"), "replay", dir}, strings.NewReader(""), &out, tty)
	tty.Close()
	require.Equal(t, 0, code)
	seen := <-got
	assert.True(t, strings.HasSuffix(seen, "\r\x1b[K"), "the progress line is not cleared: %q", seen)
	if strings.Contains(seen, "commands from") {
		assert.Regexp(t, `execgate: replay: \d+ commands from \d+ transcripts, \d+ would ask`, seen)
	}
	assert.Contains(t, out.String(), "20,000 commands")
}

func firstFile(t *testing.T, dir string) string {
	t.Helper()
	var found string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && found == "" {
			found = p
		}
		return nil
	})
	require.NotEmpty(t, found)
	return found
}

// fixtureAbsent skips a test that needs the kept transcripts' directories
// to be missing, as on a fresh machine.
func fixtureAbsent(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/tmp/execgate-replay-fixture"); err == nil {
		t.Skip("/tmp/execgate-replay-fixture exists on this machine: the kept transcripts' directories must be missing")
	}
}
