package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/internal/vectors"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/shim"
)

func readEnvelopeVectors(t *testing.T) vectors.Envelopes {
	t.Helper()
	v, err := vectors.ReadEnvelopes()
	require.NoError(t, err)
	return v
}

// envelopeEnv is a shim environment with the agents' snapshot files in
// its home directory and a temporary directory of its own.
func envelopeEnv(t *testing.T, config string) (e *shimEnv, home, tmp string) {
	e = newShimEnv(t, config)
	for _, kv := range e.env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = h
		}
	}
	tmp = t.TempDir()
	e.env = append(e.env, "TMPDIR="+tmp)
	for _, snap := range []string{
		".claude/shell-snapshots/snapshot-bash-1763800000000-x1y2z3.sh",
		".claude/shell-snapshots/snapshot-zsh-1763800000000-q9w8e7.sh",
		".codex/shell_snapshots/0198c9a2-7d3e-7b21-9f00-5c4d3e2f1a0b.sh",
	} {
		path := filepath.Join(home, snap)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte("export SNAPSHOT_LOADED="+filepath.Base(path)+"\n"), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "file.txt"), []byte("x\n"), 0o644))
	return e, home, tmp
}

// lastEvent is the last audit event that is not exec.finished.
func lastDecision(t *testing.T, e *shimEnv) shim.Event {
	t.Helper()
	evs := e.readAudit()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Event != shim.EventFinished {
			return evs[i]
		}
	}
	t.Fatal("no decision in the audit log")
	return shim.Event{}
}

// TestShimEnvelopes runs each agent's envelope around each payload under
// the built-in policy. The verdict must be the bare payload's: a payload
// refused alone is refused in the envelope with the same line, and one
// allowed alone runs in the envelope exactly as under bash, snapshot and
// cwd file included. The audit log records the payload and the agent.
func TestShimEnvelopes(t *testing.T) {
	bash := realBash(t)
	v := readEnvelopeVectors(t)
	e, home, tmp := envelopeEnv(t, "")
	run := func(path string, argv []string) outcome {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return runOutcome(t, e.command(ctx, path, argv...), "")
	}
	for _, shape := range v.Shapes {
		for _, p := range v.Payloads {
			if p.Heredoc && shape.NoHeredoc {
				continue
			}
			t.Run(shape.Name+"/"+p.Name, func(t *testing.T) {
				argv := vectors.Fill(shape.Argv, home, tmp, p.Command, p.Heredoc)
				bare := run(e.shim("bash"), []string{"bash", "-c", p.Command})
				got := run(e.shim("bash"), argv)
				ev := lastDecision(t, e)
				assert.Equal(t, p.Command, ev.Command, "the payload is what is judged and logged")
				if shape.Agent != "" {
					assert.Equal(t, policy.AgentLabel(shape.Agent), ev.Via)
					assert.NotEmpty(t, ev.Envelope)
				}
				if bare.status == shim.ExitDenied && strings.HasPrefix(bare.stderr, "execgate: ") {
					assert.Equal(t, bare, got, "refused alone, refused alike in the envelope")
					return
				}
				cwdFiles, _ := filepath.Glob(filepath.Join(tmp, "claude-*-cwd"))
				for _, f := range cwdFiles {
					os.Remove(f)
				}
				want := run(bash, argv)
				wantCwd := readFiles(t, cwdFiles)
				got = run(e.shim("bash"), argv)
				assert.Equal(t, want, got, "runs as under bash")
				assert.Equal(t, wantCwd, readFiles(t, cwdFiles), "the cwd file is written as under bash")
				if strings.Contains(p.Command, "SNAPSHOT_LOADED") && strings.Contains(strings.Join(argv, " "), "snapshots/") {
					assert.NotContains(t, got.stdout, "snapshot=none", "the snapshot was sourced")
				}
			})
		}
	}
}

func readFiles(t *testing.T, paths []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil {
			m[p] = string(b)
		}
	}
	return m
}

// TestShimTamperedEnvelopes: anything added around a payload, or a piece
// out of its trusted shape, makes the whole program the thing judged.
func TestShimTamperedEnvelopes(t *testing.T) {
	realBash(t)
	v := readEnvelopeVectors(t)
	e, home, tmp := envelopeEnv(t, "")
	victim := filepath.Join(home, "victim")
	for _, tc := range v.Tampered {
		t.Run(tc.Name, func(t *testing.T) {
			require.NoError(t, os.MkdirAll(victim, 0o700))
			argv := vectors.Fill(tc.Argv, home, tmp, "", false)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			o := runOutcome(t, e.command(ctx, e.shim("bash"), argv...), "")
			ev := lastDecision(t, e)
			if ev.DecidedBy == shim.ByConfined {
				// Judged whole, its only unproven effects lie inside the
				// sandbox: it ran confined, and the kernel kept the
				// victim (outside the workspace) whole.
				assert.NotEmpty(t, ev.Confined)
				assert.NotContains(t, o.stderr, "execgate: denied")
			} else {
				denyLine(t, o, "execgate: denied: ")
			}
			assert.DirExists(t, victim)
			program := argv[2]
			assert.Equal(t, program, ev.Command, "the whole program is judged")
			assert.Empty(t, ev.Envelope)
			assert.Empty(t, ev.Via)
		})
	}
}

// TestHubEnvelopeShowsPayload: the approver is asked about the payload,
// via Claude Code, and "allow always" learns the payload's pattern, never
// the envelope's pieces.
func TestHubEnvelopeShowsPayload(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 30000))
	w.unconfined() // the payload only touches the workspace: confined, it would not ask
	home := envValue(w.env, "HOME")
	tmp := t.TempDir()
	snap := filepath.Join(home, ".claude", "shell-snapshots", "snapshot-bash-1-a.sh")
	require.NoError(t, os.MkdirAll(filepath.Dir(snap), 0o700))
	require.NoError(t, os.WriteFile(snap, []byte("true\n"), 0o600))
	a := w.approver(t)
	payload := "rm -f ./no-such-file && echo 'it'\"'\"'s gone'"
	program := "source " + snap + " 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval '" +
		strings.ReplaceAll(payload, "'", `'"'"'`) + "' < /dev/null && pwd -P >| " + filepath.Join(tmp, "claude-ab12-cwd")
	_, done := w.runShim(t, program, "TMPDIR="+tmp)
	req := a.next(t, hub.EventRequested)
	assert.Equal(t, payload, req.Command)
	assert.Equal(t, "Claude Code", req.Via)
	_, err := a.c.Resolve(t.Context(), req.ID, hub.AllowAlways)
	require.NoError(t, err)
	o := wait(t, done)
	assert.Equal(t, 0, o.status, "stderr %q", o.stderr)
	assert.Equal(t, "it's gone\n", o.stdout)
	cwd, err := os.ReadFile(filepath.Join(tmp, "claude-ab12-cwd"))
	require.NoError(t, err)
	assert.Equal(t, w.work+"\n", string(cwd))

	cfg, _, _, err := config.Load(w.config)
	require.NoError(t, err)
	var patterns []string
	for _, e := range cfg.Resolve("test-agent").Allowlist {
		patterns = append(patterns, e.Pattern)
	}
	assert.Equal(t, []string{"rm -f ./no-such-file $"}, patterns, "only the payload's pattern is learnt")
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// TestCheckEnvelope: `execgate check` judges an envelope by its payload,
// as the shim does, and says so.
func TestCheckEnvelope(t *testing.T) {
	checkEnv(t)
	t.Setenv("HOME", "/home/ada")
	t.Setenv("TMPDIR", "")
	envelope := `source /home/ada/.claude/shell-snapshots/snapshot-bash-1-a.sh 2>/dev/null || true && eval 'rm -rf ~' < /dev/null && pwd -P >| /tmp/claude-12ab-cwd`
	code, out, _ := checkRun(t, "", "--json", "--", envelope)
	require.Equal(t, 0, code)
	var res struct{ Command, Via, Risk string }
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "rm -rf ~", res.Command)
	assert.Equal(t, "Claude Code", res.Via)
	assert.Equal(t, "dangerous", res.Risk)

	_, out, _ = checkRun(t, "", "--", envelope+"; rm -rf /")
	assert.NotContains(t, out, "envelope", "a tampered envelope is judged whole")
}

// TestShimEnvelopeNoTerminalPrompt: a command in an agent's envelope comes
// from the agent, whose terminal it is (Claude Code's TUI in raw mode): no
// prompt is drawn there, even with a terminal at hand; with no hub the
// fallback applies at once, and nothing of the envelope reaches the screen.
func TestShimEnvelopeNoTerminalPrompt(t *testing.T) {
	realBash(t)
	e, home, tmp := envelopeEnv(t, "")
	v := readEnvelopeVectors(t)
	// Outside the workspace: a command inside it would run confined, unasked.
	made := filepath.Join(home, "made-here")
	argv := vectors.Fill(v.Shapes[0].Argv, home, tmp, "mkdir "+made+" && echo made", false)
	o, screen := ptyRun(t, e, "", argv...)
	denyLine(t, o, "execgate: denied: ")
	assert.Contains(t, o.stderr, "nobody to ask")
	assert.NotContains(t, screen, "[d]eny?")
	assert.NotContains(t, screen, "shell-snapshots", "the envelope is not shown")
	assert.NoDirExists(t, made)
}

// TestShimCodexEnvelopeIntoShim: when Codex's snapshot envelope execs the
// shim itself with the payload, the payload is judged once, by that inner
// shim, not twice.
func TestShimCodexEnvelopeIntoShim(t *testing.T) {
	realBash(t)
	e, home, _ := envelopeEnv(t, "")
	snap := filepath.Join(home, ".codex", "shell_snapshots", "0198c9a2-7d3e-7b21-9f00-5c4d3e2f1a0b.sh")
	argv := func(payload string) []string {
		return []string{"bash", "-c", `. "$1" && shift && exec "$@"`, "bash", snap, e.shim("bash"), "-lc", payload}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), argv("echo \"$SNAPSHOT_LOADED\"")...), "")
	assert.Equal(t, outcome{stdout: filepath.Base(snap) + "\n"}, o)

	victim := filepath.Join(home, "victim")
	require.NoError(t, os.MkdirAll(victim, 0o700))
	before := len(e.readAudit())
	o = runOutcome(t, e.command(ctx, e.shim("bash"), argv("rm -rf "+victim)...), "")
	denyLine(t, o, "execgate: denied: ")
	assert.DirExists(t, victim)
	var denied int
	for _, ev := range e.readAudit()[before:] {
		if ev.Event == shim.EventDenied {
			denied++
			assert.Equal(t, "rm -rf "+victim, ev.Command)
		}
	}
	assert.Equal(t, 1, denied, "judged once, by the inner shim")
}

// TestShimGeminiTrapTarget: Gemini CLI 0.61's wrapper writes the jobs list
// to "$_bgpids_file" from an EXIT trap that runs after the payload, in the
// payload's own shell. A payload that sets that variable — however bash
// lets it — re-aims the write, so the wrapper is judged with it (asked,
// here refused by askFallback) and the file stays whole. The same payloads
// without the variable run as before.
func TestShimGeminiTrapTarget(t *testing.T) {
	realBash(t)
	e, home, tmp := envelopeEnv(t, "")
	v := readEnvelopeVectors(t)
	i := slices.IndexFunc(v.Shapes, func(s vectors.Shape) bool { return s.Name == "gemini-cli 0.61" })
	require.GreaterOrEqual(t, i, 0)
	victim := filepath.Join(home, ".bashrc")
	run := func(payload string) outcome {
		require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o600))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		argv := vectors.Fill(v.Shapes[i].Argv, home, tmp, payload, false)
		cmd := e.command(ctx, e.shim("bash"), argv...)
		cmd.Env = append(cmd.Env, "GEMINI_CLI=1")
		return runOutcome(t, cmd, "")
	}
	for _, payload := range []string{
		"_bgpids_file=$HOME/.bashrc",
		"_bgpids_file=" + victim + "; echo hi",
		"read _bgpids_file <<< " + victim,
		"printf -v _bgpids_file %s " + victim,
		"for _bgpids_file in " + victim + "; do :; done",
		"declare _bgpids_file=" + victim,
	} {
		o := run(payload)
		assert.Equal(t, 126, o.status, "%s: %+v", payload, o)
		got, err := os.ReadFile(victim)
		require.NoError(t, err)
		assert.Equal(t, "precious\n", string(got), payload)
	}
	o := run("echo hi")
	assert.Equal(t, 0, o.status, "a payload that leaves the variable alone: %+v", o)
	assert.Equal(t, "hi\n", o.stdout)
}
