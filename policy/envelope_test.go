package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/vectors"
)

func loadEnvelopeVectors(t *testing.T) vectors.Envelopes {
	t.Helper()
	v, err := vectors.ReadEnvelopes()
	require.NoError(t, err)
	require.NotEmpty(t, v.Shapes)
	return v
}

// splitShellArgv finds the -c program and the words after it, for the
// argv shapes in the vectors (options, then the program).
func splitShellArgv(argv []string) (string, []string) {
	i := 1
	for i < len(argv) && strings.HasPrefix(argv[i], "-") {
		i++
	}
	return argv[i], argv[i+1:]
}

func TestUnwrapVectors(t *testing.T) {
	v := loadEnvelopeVectors(t)
	home, tmp := "/home/ada", "/tmp"
	trust := NewTrust(nil, home, func(string) string { return "" })
	for _, shape := range v.Shapes {
		for _, p := range v.Payloads {
			if p.Heredoc && shape.NoHeredoc {
				continue
			}
			t.Run(shape.Name+"/"+p.Name, func(t *testing.T) {
				program, params := splitShellArgv(vectors.Fill(shape.Argv, home, tmp, p.Command, p.Heredoc))
				env, ok := trust.Unwrap(program, params)
				if shape.Agent == "" {
					assert.False(t, ok, "not an envelope: %q", program)
					return
				}
				require.True(t, ok, "envelope not recognised: %q %q", program, params)
				assert.Equal(t, shape.Agent, env.Agent)
				assert.Equal(t, AgentLabel(shape.Agent), env.Via)
				assert.Equal(t, p.Command, env.Payload)
			})
		}
	}
	for _, tc := range v.Tampered {
		t.Run("tampered/"+tc.Name, func(t *testing.T) {
			program, params := splitShellArgv(vectors.Fill(tc.Argv, home, tmp, "", false))
			env, ok := trust.Unwrap(program, params)
			assert.False(t, ok, "tampered envelope unwrapped to %+v", env)
		})
	}
}

func TestTrustedSourcesFromConfig(t *testing.T) {
	cfg, warnings, err := config.ParseConfig([]byte(`{"version":1,"envelopes":{
		"claude-code":{"trustedSources":["~/snapshots/*.sh","relative/*.sh",7]},
		"codex":{"trustedSources":"nope"}}}`))
	require.NoError(t, err)
	assert.Len(t, warnings, 3, "%q", warnings)
	trust := NewTrust(cfg, "/home/ada", func(string) string { return "" })
	claude := `source /home/ada/snapshots/a.sh && eval 'ls' < /dev/null && pwd -P >| /tmp/claude-1-cwd`
	_, ok := trust.Unwrap(claude, nil)
	assert.True(t, ok, "configured glob trusted")
	_, ok = trust.Unwrap(strings.Replace(claude, "/home/ada/snapshots", "/home/ada/.claude/shell-snapshots/snapshot", 1), nil)
	assert.False(t, ok, "configured globs replace the default")
	codex := `. "$1" && shift && exec "$@"`
	_, ok = trust.Unwrap(codex, []string{"sh", "/home/ada/.codex/shell_snapshots/x.sh", "/bin/bash", "-lc", "ls"})
	assert.True(t, ok, "an invalid setting keeps the default")
}

func TestTrustFollowsAgentHomes(t *testing.T) {
	env := map[string]string{"CLAUDE_CONFIG_DIR": "/srv/claude", "CODEX_HOME": "/srv/codex", "TMPDIR": "/var/tmp/ada"}
	trust := NewTrust(nil, "/home/ada", func(k string) string { return env[k] })
	_, ok := trust.Unwrap(`source /srv/claude/shell-snapshots/snapshot-bash-1.sh && eval 'ls' && pwd -P >| /var/tmp/ada/claude-1f-cwd`, nil)
	assert.True(t, ok)
	_, ok = trust.Unwrap(`source /home/ada/.claude/shell-snapshots/snapshot-bash-1.sh && eval 'ls' && pwd -P >| /tmp/claude-1f-cwd`, nil)
	assert.False(t, ok, "CLAUDE_CONFIG_DIR moves the snapshots")
	_, ok = trust.Unwrap(`. "$1" && shift && exec "$@"`, []string{"sh", "/srv/codex/shell_snapshots/x.sh", "bash", "-lc", "ls"})
	assert.True(t, ok)
}

func FuzzUnwrap(f *testing.F) {
	f.Add(`source /h/.claude/shell-snapshots/snapshot-bash-1.sh 2>/dev/null || true && eval 'ls' < /dev/null && pwd -P >| /tmp/claude-1-cwd`, "")
	f.Add(`shopt -u promptvars nullglob extglob nocaseglob dotglob; { ls; }; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_a.tmp 2>&1; exit $__code;`, "")
	f.Add(`. "$1" && shift && exec "$@"`, "/h/.codex/shell_snapshots/x.sh")
	f.Add("shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/tmp/gemini-shell-aB1/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\nls\n)\n__code=$?\nexit $__code", "")
	f.Add(`{ \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && eval 'ls' < /dev/null && pwd -P >| /tmp/claude-1-cwd`, "")
	f.Add("SNAPSHOT_FILE=/h/.claude/shell-snapshots/snapshot-bash-1-a.sh\n      # No user config file to source\n", "")
	trust := NewTrust(nil, "/h", func(string) string { return "" })
	f.Fuzz(func(t *testing.T, program, param string) {
		// Start-up commands are whole programs of a fixed kind, never
		// anything with a payload in it.
		if h, ok := trust.Harness(program, nil, AgentClaudeCode); ok &&
			(h.Harness == "" || h.Payload != "" || program != "env" && !strings.HasPrefix(program, "SNAPSHOT_FILE=")) {
			t.Fatalf("taken for a start-up command: %+v for %q", h, program)
		}
		env, ok := trust.Unwrap(program, []string{"sh", param, "bash", "-lc", "ls"})
		if ok && (env.Payload == "" || env.Via == "") {
			t.Fatalf("unwrapped to an empty payload: %+v", env)
		}
		// Whatever the agent, the payload is the model's command as the
		// envelope holds it: a piece of the program's text, the value
		// of one of its words (eval 'PAYLOAD'), or a parameter (exec "$@").
		if ok && !payloadFrom(env.Payload, program, []string{"sh", param, "bash", "-lc", "ls"}) {
			t.Fatalf("payload %q (%s) is neither in the program %q nor a parameter", env.Payload, env.Agent, program)
		}
	})
}

// payloadFrom reports whether payload is a piece of program, the value of
// one of its words, or one of params.
func payloadFrom(payload, program string, params []string) bool {
	if strings.Contains(program, payload) || slices.Contains(params, payload) {
		return true
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(program), "")
	if err != nil {
		return false
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok && !found {
			if v, ok := wordValue(w); ok && v == payload {
				found = true
			}
		}
		return !found
	})
	return found
}

// BenchmarkUnwrap is the envelope check on the shim's path: for a plain
// command (the common case, which must cost next to nothing) and for a
// Claude Code envelope; NewTrust included, as the shim builds one per run.
func BenchmarkUnwrap(b *testing.B) {
	getenv := func(string) string { return "" }
	for _, bc := range []struct{ name, program string }{
		{"plain", "git status"},
		{"claude", `source /home/ada/.claude/shell-snapshots/snapshot-bash-1763800000000-x1y2z3.sh 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval 'git status' < /dev/null && pwd -P >| /tmp/claude-4f2a-cwd`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				NewTrust(nil, "/home/ada", getenv).Unwrap(bc.program, []string{"bash"})
			}
		})
	}
}

// TestNestedShellLanguage: a script given to sh is read as sh reads it.
// Under bash $'…' is one quoted word; dash reads $ and a quoted '\', so the
// touch below runs there and must be seen.
func TestNestedShellLanguage(t *testing.T) {
	e, err := NewEngine()
	require.NoError(t, err)
	payload := `echo $'\' ; touch /tmp/pwned ; \'' #'`
	quoted := "'" + strings.ReplaceAll(payload, "'", `'"'"'`) + "'"
	run := func(shell string) Result {
		return e.Evaluate(Request{Command: shell + " -c " + quoted, Policy: config.BuiltinPolicy()})
	}
	assert.Equal(t, Safe, run("bash").Risk, "bash: one echo")
	for _, sh := range []string{"sh", "dash", "/bin/sh"} {
		assert.NotEqual(t, Safe, run(sh).Risk, sh)
	}
	var argv0 []string
	for _, seg := range run("sh").Segments {
		if len(seg.Argv) > 0 {
			argv0 = append(argv0, seg.Argv[0])
		}
	}
	assert.Contains(t, argv0, "touch", "sh -c is read as sh reads it")
}
