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
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setupEnv runs the real execgate binary in a home of its own.
type setupEnv struct {
	t                    *testing.T
	exe, shims, home, st string
	env                  []string
}

func newSetupEnv(t *testing.T) *setupEnv {
	t.Helper()
	dir := shimDir(t)
	exe, err := filepath.EvalSymlinks(filepath.Join(dir, "execgate"))
	require.NoError(t, err)
	root := t.TempDir()
	e := &setupEnv{t: t, exe: exe, shims: filepath.Join(dir, "shims"),
		home: filepath.Join(root, "home"), st: filepath.Join(root, "state")}
	require.NoError(t, os.MkdirAll(e.home, 0o700))
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "EXECGATE_"), strings.HasPrefix(name, "XDG_"), name == "HOME",
			name == "CLAUDE_CONFIG_DIR", name == "CODEX_HOME", name == "SHELL":
			continue
		}
		e.env = append(e.env, kv)
	}
	// A bash login shell, whatever the tester's: setup claude picks the
	// zsh shim for a zsh one (TestSetupClaudeZshLoginShell).
	e.env = append(e.env, "HOME="+e.home, "XDG_STATE_HOME="+e.st, "SHELL=/bin/bash")
	return e
}

// run runs `execgate setup ARGS...`.
func (e *setupEnv) run(args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.exe, append([]string{"setup"}, args...)...)
	cmd.Env = e.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	}
	require.NoError(e.t, err)
	return 0, out.String(), errb.String()
}

// TestSetupShowCLI: what the binary shows is the package's golden output,
// with this machine's paths in it.
func TestSetupShowCLI(t *testing.T) {
	e := newSetupEnv(t)
	for _, c := range []struct{ golden, agent, hook string }{
		{"claude", "claude", ""}, {"claude-hook", "claude", "--hook"}, {"codex", "codex", ""},
		{"gemini", "gemini", ""}, {"aider", "aider", ""}, {"shell", "shell", ""},
	} {
		args := []string{c.agent, "--shims", e.shims}
		if c.hook != "" {
			args = append(args, c.hook)
		}
		code, out, errOut := e.run(args...)
		require.Equal(t, 0, code, errOut)
		assert.Empty(t, errOut, "the shims are installed: no note")
		want, err := os.ReadFile("../../testdata/setup/show/" + c.golden + ".txt")
		require.NoError(t, err)
		got := strings.NewReplacer(e.exe, "/opt/execgate/bin/execgate", e.shims, "/opt/execgate/lib/execgate/shims").Replace(out)
		assert.Equal(t, string(want), got, c.golden)
	}

	// Without the shims beside the binary: a note, still exit 0.
	code, out, errOut := e.run("claude")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "CLAUDE_CODE_SHELL")
	assert.Regexp(t, `^execgate: note: \S+/lib/execgate/shims has no bash link to execgate; run ./install.sh to create it \(or pass --shims DIR\)\n$`, errOut)
}

// TestSetupApplyUndoCLI goes through the commands a person types, checking
// every line they print.
func TestSetupApplyUndoCLI(t *testing.T) {
	e := newSetupEnv(t)
	sample, err := os.ReadFile("../../testdata/setup/in/claude-settings.json")
	require.NoError(t, err)
	path := filepath.Join(e.home, ".claude", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, sample, 0o600))

	code, out, errOut := e.run("claude", "--apply", "--shims", e.shims)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "execgate: updated ~/.claude/settings.json (backup: ~/.claude/settings.json.execgate-backup)\n", out)
	assert.Empty(t, errOut)
	var settings struct{ Env map[string]string }
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &settings))
	assert.Equal(t, filepath.Join(e.shims, "bash"), settings.Env["CLAUDE_CODE_SHELL"])
	assert.FileExists(t, filepath.Join(e.st, "execgate", "setup", "claude.json"))

	code, out, _ = e.run("claude", "--apply", "--shims", e.shims)
	assert.Equal(t, 0, code)
	assert.Equal(t, "execgate: ~/.claude/settings.json is already set up for claude\n", out)

	code, out, _ = e.run("claude", "--undo")
	assert.Equal(t, 0, code)
	assert.Equal(t, "execgate: restored ~/.claude/settings.json as it was before setup\n", out)
	raw, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(sample), string(raw))

	code, out, _ = e.run("claude", "--undo")
	assert.Equal(t, 0, code)
	assert.Equal(t, "execgate: nothing to undo for claude in ~/.claude/settings.json\n", out)

	// Codex: a new file, the note about trusting hooks, and undo removes it.
	code, out, _ = e.run("codex", "--apply")
	assert.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "execgate: created ~/.codex/hooks.json\nexecgate: note: Codex runs a new or changed hook only once you trust it"), out)
	code, out, _ = e.run("codex", "--undo")
	assert.Equal(t, 0, code)
	assert.Equal(t, "execgate: removed ~/.codex/hooks.json (setup had created it)\n", out)
	assert.NoFileExists(t, filepath.Join(e.home, ".codex", "hooks.json"))

	// --settings names another file; the user edits it; undo keeps the edit.
	other := filepath.Join(e.home, "project", ".gemini", "settings.json")
	code, _, errOut = e.run("gemini", "--apply", "--settings", other)
	require.Equal(t, 0, code, errOut)
	raw, err = os.ReadFile(other)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(other, bytes.Replace(raw, []byte("{"), []byte("{\n  \"ui\": {\"theme\": \"GitHub\"},"), 1), 0o600))
	code, out, _ = e.run("gemini", "--undo", "--settings", other)
	assert.Equal(t, 0, code)
	assert.Regexp(t, `^execgate: took execgate's entries out of ~/project/.gemini/settings.json and kept your later edits \(backup: ~/project/.gemini/settings.json.execgate-backup\)\n$`, out)
	raw, err = os.ReadFile(other)
	require.NoError(t, err)
	assert.JSONEq(t, `{"ui": {"theme": "GitHub"}}`, string(raw))
}

// TestSetupCLIErrors: usage errors exit 2, refused files 1, each with one
// line; recipes-only agents have nothing to apply.
func TestSetupCLIErrors(t *testing.T) {
	e := newSetupEnv(t)
	for _, c := range []struct {
		args []string
		code int
		line string
	}{
		{[]string{"cursor"}, exitUsage, "execgate: setup needs one agent: claude, codex, gemini, aider, shell\n"},
		{nil, exitUsage, "execgate: setup needs one agent: claude, codex, gemini, aider, shell\n"},
		{[]string{"claude", "--apply", "--undo"}, exitUsage, "execgate: setup: --apply and --undo cannot be used together\n"},
		{[]string{"aider", "--hook"}, exitUsage, "execgate: aider has no hooks; execgate setup aider shows how to use the shim with it\n"},
		{[]string{"claude", "--apply"}, exitError, ""}, // no shims beside the test binary
	} {
		code, out, errOut := e.run(c.args...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Empty(t, out)
		if c.line != "" {
			assert.Equal(t, c.line, errOut, "%v", c.args)
		} else {
			assert.Regexp(t, `^execgate: \S+ has no bash link to execgate; run ./install.sh to create it \(or pass --shims DIR\)\n$`, errOut)
		}
	}

	path := filepath.Join(e.home, ".gemini", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(`{"hooks": "off"}`), 0o600))
	code, out, errOut := e.run("gemini", "--apply")
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	assert.Equal(t, "execgate: ~/.gemini/settings.json has hooks as a string, not an object; left it unchanged\n", errOut)

	code, out, errOut = e.run("aider", "--apply")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "execgate: aider has no settings file for execgate to merge into; execgate setup aider shows what to run instead\n", out)
}

// TestSetupConcurrentApply runs applies of both Claude integrations at once,
// in separate processes, on one file: the lock serializes them, so both
// entries land exactly once, and one undo takes both out exactly.
func TestSetupConcurrentApply(t *testing.T) {
	e := newSetupEnv(t)
	sample, err := os.ReadFile("../../testdata/setup/in/claude-settings.json")
	require.NoError(t, err)
	path := filepath.Join(e.home, ".claude", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, sample, 0o600))

	var wg sync.WaitGroup
	codes := make([]int, 6)
	errs := make([]string, 6)
	for i := range codes {
		wg.Go(func() {
			args := []string{"claude", "--apply", "--shims", e.shims}
			if i%2 == 1 {
				args = append(args, "--hook")
			}
			codes[i], _, errs[i] = e.run(args...)
		})
	}
	wg.Wait()
	for i := range codes {
		require.Equal(t, 0, codes[i], errs[i])
	}
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, json.Valid(raw), "%s", raw)
	assert.Equal(t, 1, strings.Count(string(raw), `"CLAUDE_CODE_SHELL"`))
	assert.Equal(t, 1, strings.Count(string(raw), " hook claude"))

	code, out, errOut := e.run("--undo-all")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "restored ~/.claude/settings.json as it was before setup")
	raw, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(sample), string(raw))
	backups, _ := filepath.Glob(path + ".execgate-backup*")
	assert.Empty(t, backups)
}

// TestSetupClaudeZshLoginShell: with a zsh login shell ($SHELL) and a real
// zsh, `setup claude --apply` gives Claude Code the zsh shim, which runs
// the real zsh; --undo restores the file.
func TestSetupClaudeZshLoginShell(t *testing.T) {
	realZsh(t)
	e := newSetupEnv(t)
	e.env = append(e.env, "SHELL=/usr/bin/zsh") // the later entry wins
	path := filepath.Join(e.home, ".claude", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o600))

	code, _, errOut := e.run("claude", "--apply", "--shims", e.shims)
	require.Equal(t, 0, code, errOut)
	var settings struct{ Env map[string]string }
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &settings))
	shell := settings.Env["CLAUDE_CODE_SHELL"]
	assert.Equal(t, filepath.Join(e.shims, "zsh"), shell)

	// The shell Claude Code is given is a zsh that execgate gates.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, "-c", "echo $ZSH_NAME")
	cmd.Env = e.env
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "zsh\n", string(out))

	code, _, _ = e.run("claude", "--undo")
	assert.Equal(t, 0, code)
	raw, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(raw))
}
