package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/internal/vectors"
)

// capturedAgents maps the fixtures' agent names to policy ids.
var capturedAgents = map[string]string{"claude": AgentClaudeCode, "gemini": AgentGeminiCLI, "codex": AgentCodex}

// splitArgv takes a captured shim argv apart: the -c program and its
// parameters ($0 …), after the options bash reads before it.
func splitArgv(t testing.TB, argv []string) (program string, params []string) {
	t.Helper()
	i := 1
	for i < len(argv) && strings.HasPrefix(argv[i], "-") {
		i++
	}
	require.Less(t, i, len(argv), "no program in %q", argv)
	return argv[i], argv[i+1:]
}

// The values the captures' {{PATH}} and {{CLAUDE_EXE}} stand for.
const (
	capturedPath = "/usr/local/bin:/usr/bin:/bin"
	capturedExe  = "/opt/claude-code/bin/claude.exe"
)

// capturedWorld fills the captured shapes' placeholders for one test.
type capturedWorld struct {
	home, tmp string
	env       map[string]string
}

func newCapturedWorld(t testing.TB) *capturedWorld {
	// A home with a plain name: t.TempDir's has characters no home has.
	home, err := os.MkdirTemp("", "home")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	// The PATH and executable Claude Code had: its snapshot records the
	// one and runs the other (the captures' {{PATH}} and {{CLAUDE_EXE}}).
	return &capturedWorld{home: home, tmp: "/tmp", env: map[string]string{
		"PATH": capturedPath, "CLAUDE_CODE_EXECPATH": capturedExe}}
}

func (w *capturedWorld) trust() Trust {
	return NewTrust(nil, w.home, func(k string) string { return w.env[k] })
}

// fill replaces the placeholders; an environment script before Claude
// Code's prologue is written to a file that CLAUDE_ENV_FILE names, as
// Claude Code had it.
func (w *capturedWorld) fill(t testing.TB, s string, payload string) string {
	s = strings.NewReplacer("{{ID}}", "k3v9x2", "{{PATH}}", capturedPath, "{{CLAUDE_EXE}}", capturedExe).Replace(s)
	s = vectors.Fill([]string{s}, w.home, w.tmp, payload, strings.Contains(payload, "<<"))[0]
	if script, _, ok := strings.Cut(s, "\n: && "); ok && !strings.HasPrefix(s, "SNAPSHOT_FILE=") {
		f := filepath.Join(w.home, "agent-env.sh")
		require.NoError(t, os.WriteFile(f, []byte(script+"\n"), 0o644))
		w.env["CLAUDE_ENV_FILE"] = f
	}
	return s
}

// TestCapturedShapes checks every argv the real CLIs handed the shim in
// the end-to-end tests: a model command's envelope unwraps to exactly the
// payload, and Claude Code's start-up commands are its harness.
func TestCapturedShapes(t *testing.T) {
	all, err := vectors.ReadAllCaptured()
	require.NoError(t, err)
	require.NotEmpty(t, all, "no captured shapes in testdata/envelopes/captured")
	env, err := vectors.ReadEnvelopes()
	require.NoError(t, err)
	for _, c := range all {
		agent := capturedAgents[c.Agent]
		for _, shape := range c.Shapes {
			t.Run(c.Agent+"@"+c.Version+"/"+shape.Seen, func(t *testing.T) {
				raw, params := splitArgv(t, shape.Argv)
				if !strings.Contains(raw, "{{CLAUDE}}") && !strings.Contains(raw, "{{PAYLOAD}}") {
					w := newCapturedWorld(t)
					program := w.fill(t, raw, "")
					h, ok := w.trust().Harness(program, params, agent)
					require.True(t, ok, "start-up command not recognised: %.300q", program)
					assert.Equal(t, agent, h.Agent)
					assert.NotEmpty(t, h.Harness)
					assert.Empty(t, h.Payload)
					// Only from the agent's own process.
					_, ok = w.trust().Harness(program, params, "")
					assert.False(t, ok, "a start-up command recognised without the agent's environment")
					return
				}
				for _, p := range env.Payloads {
					w := newCapturedWorld(t)
					program := w.fill(t, raw, p.Command)
					e, ok := w.trust().Unwrap(program, params)
					require.True(t, ok, "payload %q: envelope not recognised: %q", p.Name, program)
					assert.Equal(t, agent, e.Agent)
					assert.Equal(t, p.Command, e.Payload)
					_, harness := w.trust().Harness(program, params, agent)
					assert.False(t, harness, "a model command taken for a start-up command")
				}
			})
		}
	}
}

// nearMisses are edits of a recognised shape that must not be recognised:
// each adds a command, or changes one piece of plumbing.
var nearMisses = []struct {
	name string
	edit func(program string) string
}{
	{"a command appended", func(p string) string { return p + "; rm -rf ~/victim" }},
	{"a command appended with &&", func(p string) string { return p + " && rm -rf ~/victim" }},
	{"a command on a new last line", func(p string) string { return p + "\nrm -rf ~/victim" }},
	{"a command prepended", func(p string) string { return "rm -rf ~/victim; " + p }},
	{"a command on a new first line", func(p string) string { return "rm -rf ~/victim\n" + p }},
	{"run in the background", func(p string) string { return p + " &" }},
	{"a command before the payload's eval", func(p string) string {
		return strings.Replace(p, "eval '", "rm -rf ~/victim && eval '", 1)
	}},
	{"the trap replaced", func(p string) string {
		return strings.Replace(p, `trap 'jobs -p > "$_bgpids_file"' EXIT`, `trap 'rm -rf ~/victim' EXIT`, 1)
	}},
	{"the pids file outside a gemini-shell directory", func(p string) string {
		return strings.Replace(p, "/tmp/gemini-shell-k3v9x2/bgpids.tmp", "/home/victim/.bashrc", 1)
	}},
	{"a guard that runs something", func(p string) string {
		return strings.Replace(p, `\builtin unset -f -- 'which'`, `\builtin unset -f -- 'which'; rm -rf ~/victim`, 1)
	}},
	{"a guard for two names", func(p string) string {
		return strings.Replace(p, `\builtin unset -f -- 'which'`, `\builtin unset -f -- 'other'`, 1)
	}},
	{"the snapshot written elsewhere", func(p string) string {
		return strings.Replace(p, "SNAPSHOT_FILE=", "SNAPSHOT_FILE=/etc/profile.d/x.sh #", 1)
	}},
	{"a line added to the snapshot writer", func(p string) string {
		return strings.Replace(p, "# First, create/clear the snapshot file", "# First, create/clear the snapshot file\n      rm -rf ~/victim", 1)
	}},
	{"a command in the recorded PATH", func(p string) string {
		return strings.Replace(p, "export PATH=/usr/local/bin", "export PATH=$(rm -rf ~/victim)/usr/local/bin", 1)
	}},
	{"another rc file sourced", func(p string) string {
		return strings.Replace(p, `/.bashrc" < /dev/null`, `/work/evil.sh" < /dev/null`, 1)
	}},
	{"the env probe with an argument", func(p string) string {
		if p == "env" {
			return "env rm -rf ~/victim"
		}
		return p + " x"
	}},
}

// TestNearMissesAreNotHarness edits every captured shape; no edit may be
// recognised, as an envelope (unless the edit left it as it was) or as a
// start-up command.
func TestNearMissesAreNotHarness(t *testing.T) {
	all, err := vectors.ReadAllCaptured()
	require.NoError(t, err)
	for _, c := range all {
		agent := capturedAgents[c.Agent]
		for _, shape := range c.Shapes {
			for _, nm := range nearMisses {
				w := newCapturedWorld(t)
				raw, params := splitArgv(t, shape.Argv)
				orig := w.fill(t, raw, "ls -la")
				program := nm.edit(orig)
				if program == orig {
					continue
				}
				e, ok := w.trust().Unwrap(program, params)
				assert.False(t, ok && e.Payload != "ls -la" && !strings.Contains(e.Payload, "victim") && e.Agent != "",
					"%s %s: %s: unwrapped to %q", c.Agent, shape.Seen, nm.name, e.Payload)
				if ok {
					// Still an envelope only when the added command is in the
					// payload, which is judged.
					assert.Contains(t, e.Payload, "victim", "%s %s: %s: recognised, and the payload hides the edit", c.Agent, shape.Seen, nm.name)
				}
				_, ok = w.trust().Harness(program, params, agent)
				assert.False(t, ok, "%s %s: %s: taken for a start-up command: %.200q", c.Agent, shape.Seen, nm.name, program)
			}
		}
	}
}

func TestClaudeEnvScriptMustMatchItsFiles(t *testing.T) {
	w := newCapturedWorld(t)
	prologue := "shopt -u extglob 2>/dev/null || true && eval 'git status' < /dev/null && pwd -P >| /tmp/claude-ab12-cwd"
	program := "export A=1\n: && " + prologue
	// No CLAUDE_ENV_FILE: the script is nobody's.
	_, ok := w.trust().Unwrap(program, nil)
	assert.False(t, ok)
	f := filepath.Join(w.home, "env.sh")
	w.env["CLAUDE_ENV_FILE"] = f
	require.NoError(t, os.WriteFile(f, []byte("export A=2\n"), 0o644))
	_, ok = w.trust().Unwrap(program, nil)
	assert.False(t, ok, "a script other than the file's")
	require.NoError(t, os.WriteFile(f, []byte("\n  export A=1  \n\n"), 0o644))
	e, ok := w.trust().Unwrap(program, nil)
	require.True(t, ok, "the file's script, trimmed as Claude Code trims it")
	assert.Equal(t, "git status", e.Payload)

	// The session's env hook scripts follow, in Claude Code's order.
	w.env["CLAUDE_CODE_SESSION_ID"] = "5252ad5f-a02d-4153-97d6-0f3d4c76a614"
	dir := filepath.Join(w.home, ".claude", "session-env", w.env["CLAUDE_CODE_SESSION_ID"])
	require.NoError(t, os.MkdirAll(dir, 0o700))
	for name, text := range map[string]string{
		"cwdchanged-hook-0.sh":    "export C=1",
		"sessionstart-hook-10.sh": "export B=10",
		"sessionstart-hook-2.sh":  "export B=2",
		"setup-hook-0.sh":         "",
		"notes.txt":               "rm -rf ~",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	program = "export A=1\nexport B=2\nexport B=10\nexport C=1\n: && " + prologue
	e, ok = w.trust().Unwrap(program, nil)
	require.True(t, ok)
	assert.Equal(t, "git status", e.Payload)
	// After the snapshot's piece, as Claude Code puts it once it has one.
	snapshot := "source " + filepath.Join(w.home, ".claude", "shell-snapshots", "snapshot-bash-1-ab.sh") + " 2>/dev/null || true && "
	e, ok = w.trust().Unwrap(snapshot+program, nil)
	require.True(t, ok)
	assert.Equal(t, "git status", e.Payload)
	_, ok = w.trust().Unwrap("rm -rf ~/victim; "+snapshot+program, nil)
	assert.False(t, ok)
	_, ok = w.trust().Unwrap(snapshot+"rm -rf ~/victim && "+program, nil)
	assert.False(t, ok)
	// A script that does not end where bash ends it is not taken apart.
	require.NoError(t, os.WriteFile(f, []byte("export A='1\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "sessionstart-hook-2.sh")))
	_, ok = w.trust().Unwrap("export A='1\nexport B=10\nexport C=1\n: && "+prologue+"'", nil)
	assert.False(t, ok)
	require.NoError(t, os.WriteFile(f, []byte("export A=1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sessionstart-hook-2.sh"), []byte("export B=2"), 0o644))
	for _, wrong := range []string{
		"export A=1\nexport B=10\nexport B=2\nexport C=1\n: && " + prologue, // out of order
		"export A=1\nexport B=2\nexport B=10\n: && " + prologue,             // one left out
		"export A=1\nexport B=2\nexport B=10\nexport C=1\nrm -rf ~\n: && " + prologue,
	} {
		_, ok = w.trust().Unwrap(wrong, nil)
		assert.False(t, ok, "%q", wrong)
	}
}

// BenchmarkHarnessShapes is the cost of recognising each captured shape,
// as the shim does for every command: Unwrap, then Harness when that fails.
func BenchmarkHarnessShapes(b *testing.B) {
	all, err := vectors.ReadAllCaptured()
	require.NoError(b, err)
	seen := map[string]bool{}
	for _, c := range all {
		agent := capturedAgents[c.Agent]
		for _, shape := range c.Shapes {
			raw, params := splitArgv(b, shape.Argv)
			name := c.Agent + "@" + c.Version + "/" + shapeKind(raw)
			if seen[name] {
				continue
			}
			seen[name] = true
			w := newCapturedWorld(b)
			program := w.fill(b, raw, "git status")
			trust := w.trust()
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					if _, ok := trust.Unwrap(program, params); !ok {
						if _, ok := trust.Harness(program, params, agent); !ok {
							b.Fatal("not recognised")
						}
					}
				}
			})
		}
	}
}

// shapeKind names a captured shape for the benchmark.
func shapeKind(raw string) string {
	switch {
	case raw == "env":
		return "env-probe"
	case strings.HasPrefix(raw, "SNAPSHOT_FILE="):
		if strings.Contains(raw, `source "`) {
			return "snapshot-writer-rc"
		}
		return "snapshot-writer"
	case strings.Contains(raw, "_bgpids_file"):
		return "gemini-subshell"
	case strings.Contains(raw, "\n: && "):
		return "prologue-env-script"
	case strings.Contains(raw, "source "):
		return "prologue-snapshot"
	default:
		return "prologue"
	}
}
