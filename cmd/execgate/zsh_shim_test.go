package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/internal/vectors"
	"github.com/execgate/execgate/shim"
)

// realZsh is the zsh the zsh shim runs; tests of the zsh shim skip, saying
// so, without one (.ci/run installs it).
func realZsh(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/bin/zsh", "/usr/bin/zsh", "/usr/local/bin/zsh", "/opt/homebrew/bin/zsh"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("zsh is not installed: the zsh shim has no shell to run (apt-get install zsh)")
	return ""
}

// runZsh runs the zsh shim with argv (argv[0] included) in e.
func runZsh(t *testing.T, e *shimEnv, stdin string, argv ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return runOutcome(t, e.command(ctx, e.shim("zsh"), argv...), stdin)
}

// TestZshShimTransparent: what the zsh shim allows runs in the real zsh,
// with zsh's meaning, argv, output, stdin program and exit status.
func TestZshShimTransparent(t *testing.T) {
	realZsh(t)
	e := newShimEnv(t, `{"version": 1, "defaults": {"security": "full"}}`)
	for _, c := range []struct {
		name           string
		argv           []string
		stdin          string
		stdout, stderr string
		status         int
	}{
		// Only zsh sets ZSH_NAME, and only zsh does not split an
		// unquoted $x.
		{name: "the real zsh", argv: []string{"zsh", "-c", `echo $ZSH_NAME; x="a b"; for w in $x; do echo "[$w]"; done`}, stdout: "zsh\n[a b]\n"},
		{name: "exit status", argv: []string{"zsh", "-c", "exit 7"}, status: 7},
		{name: "stderr and false", argv: []string{"zsh", "-c", "echo oops >&2; false"}, stderr: "oops\n", status: 1},
		{name: "$0 and $1", argv: []string{"zsh", "-c", `echo "$0:$1:$#"`, "name", "one"}, stdout: "name:one:1\n"},
		{name: "login", argv: []string{"-zsh", "-c", `[[ -o login ]] && echo login`}, stdout: "login\n"},
		{name: "-c -l as Claude Code passes them", argv: []string{"zsh", "-c", "-l", `[[ -o login ]] && echo login`}, stdout: "login\n"},
		{name: "program on stdin", argv: []string{"zsh", "-s"}, stdin: "echo from-stdin\n", stdout: "from-stdin\n"},
		{name: "version", argv: []string{"zsh", "--version"}, stdout: "zsh "},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runZsh(t, e, c.stdin, c.argv...)
			assert.Equal(t, c.status, o.status, "stderr %q", o.stderr)
			if c.name == "version" {
				assert.True(t, strings.HasPrefix(o.stdout, c.stdout), "stdout %q", o.stdout)
				return
			}
			assert.Equal(t, c.stdout, o.stdout)
			assert.Equal(t, c.stderr, o.stderr)
		})
	}
}

// TestZshShimSignal: a command the zsh shim runs dies of the signal sent to
// the shim's process, and the caller sees that signal.
func TestZshShimSignal(t *testing.T) {
	realZsh(t)
	e := newShimEnv(t, `{"version": 1, "defaults": {"security": "full"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ready := filepath.Join(e.work, "ready")
	cmd := e.command(ctx, e.shim("zsh"), "zsh", "-c", ": > ready; sleep 30")
	require.NoError(t, cmd.Start())
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		require.NoError(t, ctx.Err(), "the command never started")
		time.Sleep(10 * time.Millisecond) // polling the file the command makes, not a stand-in for it
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws := ee.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled(), "exit %d, not a signal", ws.ExitStatus())
	assert.Equal(t, syscall.SIGTERM, ws.Signal())
}

// TestZshShimRefusesWhatZshRuns: a glob qualifier that runs code is refused
// by the zsh shim, nothing runs, and the real zsh shows the same text does
// run code (so the refusal is not of something harmless).
func TestZshShimRefusesWhatZshRuns(t *testing.T) {
	zsh := realZsh(t)
	e := newShimEnv(t, `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny", "autoAllowSafe": true}}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "a"), nil, 0o600))
	const program = `echo *(e:'touch pwned':)`

	o := runZsh(t, e, "", "zsh", "-c", program)
	assert.Equal(t, shim.ExitDenied, o.status, "stdout %q", o.stdout)
	assert.True(t, strings.HasPrefix(o.stderr, "execgate: denied"), "stderr %q", o.stderr)
	assert.NoFileExists(t, filepath.Join(e.work, "pwned"))

	control := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(control, "a"), nil, 0o600))
	cmd := exec.Command(zsh, "-f", "-c", program)
	cmd.Dir = control
	require.NoError(t, cmd.Run())
	assert.FileExists(t, filepath.Join(control, "pwned"), "the real zsh runs the qualifier's code")

	// The same policy runs a plain command through the zsh shim, and
	// refuses options execgate does not judge under.
	o = runZsh(t, e, "", "zsh", "-c", "echo hi")
	assert.Equal(t, 0, o.status, "stderr %q", o.stderr)
	assert.Equal(t, "hi\n", o.stdout)
	o = runZsh(t, e, "", "zsh", "-o", "shwordsplit", "-c", "echo hi")
	assert.Equal(t, shim.ExitDenied, o.status)
	assert.Contains(t, o.stderr, "execgate: denied")
}

// TestZshShimClaudeCode runs what Claude Code 2.1.328 handed a zsh
// (testdata/envelopes/captured, the zsh route) through the zsh shim with
// nobody to ask and askFallback=deny: the start-up commands and a git
// status in the zsh envelope run unasked, the payload alone is judged (an
// rm -rf of the home is refused), and the bash forms are not taken for an
// envelope by a zsh.
func TestZshShimClaudeCode(t *testing.T) {
	realZsh(t)
	c, err := vectors.ReadCaptured(filepath.Join("..", "..", "testdata", "envelopes", "captured", "claude@2.1.328.json"))
	require.NoError(t, err)
	e, home, tmp := envelopeEnv(t, `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny"}}`)
	// The snapshot's functions run Claude Code's own executable, which the
	// shim knows from CLAUDE_CODE_EXECPATH here (from its parent process
	// under the real CLI, e2e), and record the PATH it has, the shim's.
	const exe = "/opt/claude-code/bin/claude.exe"
	e.env = append(e.env, "CLAUDECODE=1", "EXECGATE_AGENT=claude-code", "CLAUDE_CODE_EXECPATH="+exe)
	path := ""
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	fill := func(s, payload string) string {
		s = strings.NewReplacer("{{ID}}", "k3v9x2", "{{PATH}}", path, "{{CLAUDE_EXE}}", exe).Replace(s)
		return vectors.Fill([]string{s}, home, tmp, payload, false)[0]
	}
	var startup, zshEnvelopes, bashEnvelopes []string
	seen := map[string]bool{} // the recording zsh and the zsh shim were handed the same
	for _, s := range c.Shapes {
		program := s.Argv[len(s.Argv)-1]
		key := filepath.Base(s.Argv[0]) + "\x00" + program
		if seen[key] {
			continue
		}
		seen[key] = true
		switch zsh := filepath.Base(s.Argv[0]) == "zsh"; {
		case strings.Contains(program, "{{CLAUDE}}") && zsh:
			zshEnvelopes = append(zshEnvelopes, program)
		case strings.Contains(program, "{{CLAUDE}}"):
			bashEnvelopes = append(bashEnvelopes, program)
		case zsh:
			startup = append(startup, program)
		}
	}
	require.NotEmpty(t, zshEnvelopes)
	require.NotEmpty(t, bashEnvelopes)
	require.Len(t, startup, 2, "want the env probe and the zsh snapshot writer")

	for _, program := range startup {
		o := runZsh(t, e, "", "zsh", "-c", "-l", fill(program, ""))
		require.Equal(t, 0, o.status, "%.80q: stderr %q", program, o.stderr)
		assert.NotContains(t, o.stderr, "execgate")
		assert.True(t, strings.HasPrefix(lastDecision(t, e).Command, "Claude Code start-up: "))
	}
	assert.FileExists(t, filepath.Join(home, ".claude", "shell-snapshots", "snapshot-zsh-k3v9x2.sh"), "the snapshot writer ran")

	precious := filepath.Join(home, "precious")
	require.NoError(t, os.MkdirAll(precious, 0o700))
	for _, program := range zshEnvelopes {
		o := runZsh(t, e, "", "zsh", "-c", fill(program, "echo hi from zsh $ZSH_NAME"))
		require.Equal(t, 0, o.status, "stderr %q", o.stderr)
		assert.Equal(t, "hi from zsh zsh\n", o.stdout)
		ev := lastDecision(t, e)
		assert.Equal(t, shim.EventStarted, ev.Event)
		assert.Equal(t, "echo hi from zsh $ZSH_NAME", ev.Command, "the payload is judged alone")
		assert.Equal(t, "Claude Code", ev.Via)

		o = runZsh(t, e, "", "zsh", "-c", fill(program, "rm -rf ~/precious"))
		assert.Equal(t, shim.ExitDenied, o.status)
		assert.DirExists(t, precious)
		assert.Equal(t, "rm -rf ~/precious", lastDecision(t, e).Command)
	}
	for _, program := range bashEnvelopes {
		o := runZsh(t, e, "", "zsh", "-c", fill(program, "echo hi"))
		assert.Equal(t, shim.ExitDenied, o.status, "a bash envelope is no envelope to a zsh: %.120q", program)
	}
}

// TestZshShimPlusS: zsh's +s turns SHIN_STDIN off again, so `zsh -s +s
// FILE` and `zsh +s FILE` run FILE as a script and leave stdin alone. The
// shim judged the harmless stdin and the real zsh ran the file, unjudged.
func TestZshShimPlusS(t *testing.T) {
	zsh := realZsh(t)
	e := newShimEnv(t, `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny", "autoAllowSafe": true}}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "evil.zsh"), []byte("touch pwned\n"), 0o600))
	for _, argv := range [][]string{{"zsh", "+s", "evil.zsh"}, {"zsh", "-s", "+s", "evil.zsh"}} {
		o := runZsh(t, e, "echo hi\n", argv...)
		assert.Equal(t, shim.ExitDenied, o.status, "%q: stdout %q stderr %q", argv, o.stdout, o.stderr)
		assert.NoFileExists(t, filepath.Join(e.work, "pwned"), "%q", argv)
	}

	// The real zsh does run the file, not stdin.
	control := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(control, "evil.zsh"), []byte("touch pwned\n"), 0o600))
	cmd := exec.Command(zsh, "-f", "-s", "+s", "evil.zsh")
	cmd.Dir, cmd.Stdin = control, strings.NewReader("echo hi\n")
	require.NoError(t, cmd.Run())
	assert.FileExists(t, filepath.Join(control, "pwned"), "the real zsh runs the file")
}
