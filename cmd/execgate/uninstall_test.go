package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// installWorld is a user of install.sh: a home, XDG directories and a
// prefix of their own, and the binary the tests built standing in for the
// one install.sh would build (EXECGATE_BINARY).
type installWorld struct {
	t                                   *testing.T
	script, home, prefix, config, state string
	env                                 []string
}

func newInstallWorld(t *testing.T) *installWorld {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("install.sh needs bash, which is not installed")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "install.sh"))
	require.NoError(t, err)
	bin := wiredBinary(t)
	root := t.TempDir()
	// The socket's path must stay short: t.TempDir() may be too long.
	run, err := os.MkdirTemp("", "eg")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(run) })
	require.NoError(t, os.Chmod(run, 0o700))
	w := &installWorld{t: t, script: script, home: filepath.Join(root, "home"), prefix: filepath.Join(root, "prefix"),
		config: filepath.Join(root, "xdg-config", "execgate", "exec-approvals.json"), state: filepath.Join(root, "xdg-state", "execgate")}
	require.NoError(t, os.MkdirAll(w.home, 0o700))
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "EXECGATE_"), strings.HasPrefix(name, "XDG_"), name == "HOME", name == "PREFIX",
			name == "CLAUDE_CONFIG_DIR", name == "CODEX_HOME", strings.EqualFold(name, "NPM_CONFIG_USERCONFIG"),
			name == "CLAUDECODE", name == "GEMINI_CLI":
			continue
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env, "HOME="+w.home, "PREFIX="+w.prefix, "EXECGATE_BINARY="+bin,
		"EXECGATE_SHELL_BINARY="+filepath.Join(filepath.Dir(bin), "execgate-shell"),
		"XDG_CONFIG_HOME="+filepath.Join(root, "xdg-config"), "XDG_STATE_HOME="+filepath.Join(root, "xdg-state"),
		"XDG_RUNTIME_DIR="+run)
	return w
}

// exe is the installed binary.
func (w *installWorld) exe() string { return filepath.Join(w.prefix, "bin", "execgate") }

// shims is the installed shim directory.
func (w *installWorld) shims() string { return filepath.Join(w.prefix, "lib", "execgate", "shims") }

// run runs program with args in the world and returns its exit status and
// its output, stdout and stderr together as a user sees them.
func (w *installWorld) run(program string, args ...string) (int, string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = w.env
	cmd.Dir = w.home
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String()
	}
	require.NoError(w.t, err, out.String())
	return 0, out.String()
}

// must runs program and requires it to succeed.
func (w *installWorld) must(program string, args ...string) string {
	w.t.Helper()
	code, out := w.run(program, args...)
	require.Equal(w.t, 0, code, "%s %v: %s", program, args, out)
	return out
}

// put writes a file under the home directory.
func (w *installWorld) put(rel, text string) string {
	w.t.Helper()
	path := filepath.Join(w.home, rel)
	require.NoError(w.t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(w.t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// startHub starts a detached hub with the installed binary and returns its
// pid; the test kills it in the end if the uninstall did not.
func (w *installWorld) startHub() int {
	w.t.Helper()
	out := w.must(w.exe(), "hub", "--detach")
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(w.t, err, "hub --detach said %q", out)
	w.t.Cleanup(func() { unix.Kill(pid, unix.SIGKILL) })
	return pid
}

func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestUninstall installs with install.sh, sets up the agents, starts a
// detached hub and uninstalls: the first try stops, removing nothing, at a
// hand-made ~/.npmrc line that runs the shim; once that is fixed, the
// uninstall leaves every settings file as it was before setup, the hub
// stopped, the binary and shims gone, and the configuration and audit log
// in place, saying where they are. A second uninstall is harmless.
func TestUninstall(t *testing.T) {
	w := newInstallWorld(t)
	w.must(w.script)
	require.FileExists(t, w.exe())
	require.FileExists(t, w.config)

	claude := w.put(".claude/settings.json", "{\n  \"model\": \"opus\",\n  \"env\": {\"EDITOR\": \"vi\"}\n}\n")
	gemini := w.put(".gemini/settings.json", "// mine\n{\"theme\": \"GitHub\"}\n")
	codex := filepath.Join(w.home, ".codex", "hooks.json")
	before := map[string]string{claude: readFileString(t, claude), gemini: readFileString(t, gemini)}
	w.must(w.exe(), "setup", "claude", "--apply")
	w.must(w.exe(), "setup", "codex", "--apply")
	w.must(w.exe(), "setup", "gemini", "--apply")
	w.must(w.exe(), "setup", "claude", "--hook", "--apply")
	for file := range before {
		require.NotEqual(t, before[file], readFileString(t, file), "setup changed %s", file)
	}
	require.FileExists(t, codex)
	npmrc := w.put(".npmrc", "fund=false\nscript-shell="+filepath.Join(w.shims(), "bash")+"\n")
	pid := w.startHub()
	w.must(filepath.Join(w.shims(), "bash"), "-c", "true") // an audit log to keep

	code, out := w.run(w.script, "--uninstall")
	require.Equal(t, 1, code, out)
	assert.Contains(t, out, "~/.npmrc:2: script-shell=")
	assert.Contains(t, out, "fix: run npm config delete script-shell")
	assert.Contains(t, out, "stopped before removing execgate")
	assert.FileExists(t, w.exe(), "nothing is removed while something still runs it")
	assert.False(t, processGone(pid), "nor is the hub stopped")

	require.NoError(t, os.WriteFile(npmrc, []byte("fund=false\n"), 0o600))
	out = w.must(w.script, "--uninstall")
	for file, want := range before {
		assert.Equal(t, want, readFileString(t, file), "%s is as it was before setup", file)
	}
	assert.NoFileExists(t, codex, "setup created it, so uninstall removes it")
	for _, dir := range []string{".claude", ".gemini", ".codex"} {
		litter, err := filepath.Glob(filepath.Join(w.home, dir, "*execgate*"))
		require.NoError(t, err)
		assert.Empty(t, litter, "no backup or lock file is left in ~/%s", dir)
	}
	assert.True(t, processGone(pid), "the hub is stopped")
	assert.Contains(t, out, "hub stopped (pid "+strconv.Itoa(pid)+")")
	assert.NoFileExists(t, w.exe())
	assert.NoDirExists(t, w.shims())
	assert.FileExists(t, w.config, "the configuration is the user's")
	assert.FileExists(t, filepath.Join(w.state, "audit.jsonl"), "and so is the audit log")
	assert.Contains(t, out, "left in place")
	assert.Contains(t, out, w.config)
	assert.Contains(t, out, w.state)

	out = w.must(w.script, "--uninstall")
	assert.Contains(t, out, "nothing to remove")
	assert.FileExists(t, w.config)
}

// TestUninstallBinaryGone: when the binary was removed by hand while
// settings still run it, uninstall cannot undo them, so it lists them from
// setup's records and says how to restore them; --force removes the rest.
func TestUninstallBinaryGone(t *testing.T) {
	w := newInstallWorld(t)
	w.must(w.script)
	claude := w.put(".claude/settings.json", "{}\n")
	w.must(w.exe(), "setup", "claude", "--apply")
	require.NoError(t, os.Remove(w.exe()))

	code, out := w.run(w.script, "--uninstall")
	require.Equal(t, 1, code, out)
	assert.Contains(t, out, "already gone")
	assert.Contains(t, out, "  "+claude+"\n", "the file setup changed is listed")
	assert.Contains(t, out, "./install.sh && ./install.sh --uninstall")
	assert.DirExists(t, w.shims(), "nothing is removed without --force")

	out = w.must(w.script, "--uninstall", "--force")
	assert.NoDirExists(t, w.shims())
	assert.Contains(t, out, "removed")

	// The way out it names works: install again, uninstall again.
	w.must(w.script)
	w.must(w.script, "--uninstall")
	assert.Equal(t, "{}\n", readFileString(t, claude))
}
