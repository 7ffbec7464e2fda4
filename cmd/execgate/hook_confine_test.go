package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/sandbox"
)

// The rewritten command, run by the real bash, hands the shim the
// original command's bytes exactly, and the agent and configuration as
// given: for random commands of every byte but NUL, quotes, backslashes,
// newlines, $, ` and invalid UTF-8 among them.
func TestThroughShimQuoting(t *testing.T) {
	dir := t.TempDir()
	// A stand-in for execgate with a quote and a space in its path: it
	// writes what it was given, NUL-separated.
	exe := filepath.Join(dir, "exec 'gate")
	out := filepath.Join(dir, "got")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/bash\nprintf '%s\\0' \"$EXECGATE_AGENT\" \"$EXECGATE_CONFIG\" \"$@\" > \"$OUT\"\n"), 0o700))
	rng := rand.New(rand.NewPCG(24, 2))
	alphabet := []byte("'\"\\$`!*?[]{}()<>|&;# \t\r\n~=%^a-z0\x01\x7f\xff\xc3")
	n := 300
	if testing.Short() {
		n = 50
	}
	for i := 0; i < n; i++ {
		b := make([]byte, 1+rng.IntN(40))
		for j := range b {
			if rng.IntN(4) == 0 {
				b[j] = byte(1 + rng.IntN(255))
			} else {
				b[j] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		command, agent, config := string(b), "a'g $x", "/c'f/$(x)"
		cmd := exec.Command("bash", "-c", throughShim(exe, command, agent, config))
		cmd.Env = []string{"OUT=" + out, "PATH=/usr/bin:/bin"}
		msg, err := cmd.CombinedOutput()
		require.NoError(t, err, "%q: %s", command, msg)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		want := strings.Join([]string{agent, config, "sh", "-c", command}, "\x00") + "\x00"
		require.Equal(t, want, string(got), "command %q", command)
	}
}

func TestRewritable(t *testing.T) {
	path := "/usr/bin:/bin"
	for command, want := range map[string]bool{
		"ls -la":                     true,
		"python3 repro.py > out.txt": true,
		"X=1 make test":              true,
		"./run.sh a b":               true,
		"echo hi && pwd":             true,
		"(cd sub && ls)":             false, // bash's own rule would keep the cwd; judged as any cd
		"cd sub && make":             false,
		"pushd sub":                  false,
		"source env.sh && make":      false,
		". ./env.sh":                 false,
		"eval \"$X\"":                false,
		"f() { ls; }; f":             false,
		"ll":                         false, // an alias of the user's, perhaps
		"no-such-program-here x":     false,
		"$CMD x":                     false,
		"echo 'unterminated":         false,
		"a\x00b":                     false,
	} {
		assert.Equal(t, want, rewritable(command, path), "%q", command)
	}
}

// hookAnswer is the parts of a PreToolUse answer the rewrite sets.
type hookAnswer struct {
	HookSpecificOutput struct {
		PermissionDecision string `json:"permissionDecision"`
		UpdatedInput       *struct {
			Command     string `json:"command"`
			Description string `json:"description"`
		} `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

// Claude Code's (and Codex's) hook allows a command that fits the sandbox
// with the command rewritten; the rewritten command, run by bash as Claude Code
// would, runs the original through the shim, confined: it writes the
// workspace and cannot read the key outside it. What needs more still
// asks, unrewritten; Gemini CLI gets no rewrite.
func TestHookConfines(t *testing.T) {
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("cannot confine here: %s", st.Reason)
	}
	e := newHookEnv(t, `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny"}}`)
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "id_rsa"), []byte("CANARY\n"), 0o600))
	key := filepath.Join(home, "id_rsa")
	command := `python3 -c '
try:
    open("` + key + `").read()
    open("stolen.txt", "w").write("read it")
except OSError:
    pass
open("made.txt", "w").write("ok")'`
	answer := func(agent, command string) (string, hookAnswer) {
		o := e.hook(t, withCommand(t, agent, e.work, command), "hook", agent)
		var a hookAnswer
		if o.stdout != "" {
			require.NoError(t, json.Unmarshal([]byte(o.stdout), &a), o.stdout)
		}
		return answerOf(t, agent, o), a
	}

	got, a := answer("claude", command)
	require.Equal(t, "allow", got)
	require.NotNil(t, a.HookSpecificOutput.UpdatedInput)
	in := a.HookSpecificOutput.UpdatedInput
	assert.Equal(t, "Run it", in.Description, "the other fields as sent")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	o := runOutcome(t, e.command(ctx, "/bin/bash", "bash", "-c", in.Command), "")
	assert.Equal(t, 0, o.status, o.stderr)
	b, err := os.ReadFile(filepath.Join(e.work, "made.txt"))
	require.NoError(t, err, o.stderr)
	assert.Equal(t, "ok", string(b))
	assert.NoFileExists(t, filepath.Join(e.work, "stolen.txt"), "it read the key")
	audit, err := os.ReadFile(filepath.Join(e.state, "execgate", "audit.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(audit), `"decidedBy":"confined"`)

	// The neighbours: what needs more than the sandbox, and what would
	// not run the same in the shim's shell, ask as before.
	for _, c := range []string{"curl -fsS https://example.invalid", "echo x > .envrc", "cd sub && python3 x.py"} {
		got, a := answer("claude", c)
		assert.Equal(t, "ask", got, c)
		assert.Nil(t, a.HookSpecificOutput.UpdatedInput, c)
	}
	// Work git does not hold: asked about, saying so first.
	repo := filepath.Join(e.work, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "mine"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "mine", "notes.md"), []byte("x"), 0o600))
	git := exec.Command("git", "init", "-q", repo)
	git.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	require.NoError(t, git.Run())
	o = e.hook(t, withCommand(t, "claude", repo, "rm -rf mine"), "hook", "claude")
	assert.Equal(t, "ask", answerOf(t, "claude", o))
	assert.Contains(t, o.stdout, "which git does not hold in a commit")
	assert.NotContains(t, o.stdout, "updatedInput")
	// Codex 0.171 takes updatedInput too (its parser rejects allow
	// without it); Gemini CLI has no rewrite.
	o = e.hook(t, withCommand(t, "codex", e.work, command), "hook", "codex")
	assert.Equal(t, "allow", answerOf(t, "codex", o))
	assert.Contains(t, o.stdout, `"updatedInput":{"command":"EXECGATE_AGENT=`)
	o = e.hook(t, withCommand(t, "gemini", e.work, command), "hook", "gemini")
	assert.NotContains(t, o.stdout, "updatedInput")
	assert.NotEqual(t, "allow", answerOf(t, "gemini", o))
}

// FuzzThroughShim: for any command without NUL, the rewritten line parses
// as one simple command whose last word is the command itself (as
// mvdan.cc/sh reads bash), and rewritable never panics.
func FuzzThroughShim(f *testing.F) {
	for _, s := range []string{"ls", "echo 'a'\"b\"", "x\\\ny", "$(id)", "a'b'c", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, command string) {
		_ = rewritable(command, "/usr/bin:/bin")
		if strings.ContainsRune(command, 0) || !utf8.ValidString(command) || strings.Contains(command, "\r") {
			// The hook's input is UTF-8; mvdan.cc/sh reads CR LF as LF
			// where bash keeps the CR. TestThroughShimQuoting covers
			// every byte but NUL through the real bash.
			return
		}
		line := throughShim("/abs/exec'gate", command, "claude-code", "/c f.json")
		file, err := syntax.NewParser().Parse(strings.NewReader(line), "")
		require.NoError(t, err, line)
		require.Len(t, file.Stmts, 1)
		call, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
		require.True(t, ok)
		require.Len(t, call.Assigns, 2)
		require.Len(t, call.Args, 4)
		got, err := expand.Fields(&expand.Config{}, call.Args[3])
		require.NoError(t, err)
		require.Equal(t, []string{command}, got)
	})
}
