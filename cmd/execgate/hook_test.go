package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hookproto"
	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/sandbox"
	"github.com/execgate/execgate/shim"
)

// hookConfig allows git, denies `rm -rf /` and asks about anything else
// that is not read-only.
const hookConfig = `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny"},
  "agents": {"*": {"allowlist": [{"pattern": "git **"}], "denylist": [{"pattern": "rm -rf /"}]}}}`

// newHookEnv is a shimEnv for the hook: no agent named in the environment
// (the hook's own table names it) and a runtime directory of its own, so
// that no hub on this machine is reached.
func newHookEnv(t *testing.T, config string) *shimEnv {
	t.Helper()
	e := newShimEnv(t, config)
	e.env = slices.DeleteFunc(e.env, func(kv string) bool { return strings.HasPrefix(kv, "EXECGATE_AGENT=") })
	runtime, err := os.MkdirTemp("", "eg")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(runtime) })
	e.env = append(e.env, "XDG_RUNTIME_DIR="+runtime)
	return e
}

// hook runs `execgate ARGS...` with stdin and returns what it did.
func (e *shimEnv) hook(t *testing.T, stdin []byte, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := e.command(ctx, filepath.Join(e.dir, "execgate"), append([]string{"execgate"}, args...)...)
	return runOutcome(t, cmd, string(stdin))
}

// hookInput reads testdata/hook/AGENT/CASE.input with @CWD@ replaced.
func hookInput(t *testing.T, agent, name, cwd string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../testdata/hook", agent, name+".input"))
	require.NoError(t, err)
	return bytes.ReplaceAll(raw, []byte("@CWD@"), []byte(cwd))
}

// withCommand is the agent's safe.input running command instead.
func withCommand(t *testing.T, agent, cwd, command string) []byte {
	t.Helper()
	var req map[string]any
	require.NoError(t, json.Unmarshal(hookInput(t, agent, "safe", cwd), &req))
	req["tool_input"].(map[string]any)["command"] = command
	raw, err := json.Marshal(req)
	require.NoError(t, err)
	return raw
}

// hugeInput is a well-formed request whose command is over the input bound.
func hugeInput(t *testing.T, agent, cwd string) []byte {
	t.Helper()
	return withCommand(t, agent, cwd, "echo "+strings.Repeat("a", hookproto.MaxInput))
}

// answerOf reads an answer back in the agent's protocol: allow, deny, ask,
// or silent (exit 0 and nothing said). Anything else is a protocol error:
// every answer is exit 0, a refusal included (Gemini CLI shows exit 2 as a
// failed hook).
func answerOf(t *testing.T, agent string, o outcome) string {
	t.Helper()
	require.Equal(t, 0, o.status, "stderr %q", o.stderr)
	assert.Empty(t, o.stderr)
	if o.stdout == "" {
		return "silent"
	}
	require.Equal(t, 1, strings.Count(o.stdout, "\n"), "one JSON line: %q", o.stdout)
	if agent == "gemini" {
		var out struct{ Decision, Reason string }
		require.NoError(t, json.Unmarshal([]byte(o.stdout), &out))
		if out.Decision == "deny" {
			assert.True(t, strings.HasPrefix(out.Reason, "execgate: "), o.stdout)
		}
		return out.Decision
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName            string
			PermissionDecision       string
			PermissionDecisionReason string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &out))
	require.Equal(t, "PreToolUse", out.HookSpecificOutput.HookEventName)
	assert.True(t, strings.HasPrefix(out.HookSpecificOutput.PermissionDecisionReason, "execgate: "), o.stdout)
	return out.HookSpecificOutput.PermissionDecision
}

// hookExpected is what each golden case must answer, per agent; cases not
// listed must be refused. Codex says nothing to allow (see preToolUse).
var hookExpected = map[string]map[string]string{
	"safe":     {"claude": "allow", "codex": "silent", "gemini": "allow"},
	"dir-path": {"gemini": "allow"},
	"review":   {"claude": "ask", "codex": "deny", "gemini": "deny"},
	"nonshell": {"claude": "silent", "codex": "silent", "gemini": "silent"},
}

// TestHookGolden pins each agent's answers, byte for byte, to the inputs in
// testdata/hook/AGENT (run with -update to rewrite answers.golden), and
// checks each answer's meaning independently of the golden file.
func TestHookGolden(t *testing.T) {
	e := newHookEnv(t, hookConfig)
	// The same answers on every machine: where the sandbox works, Claude
	// Code's allowances are rewritten to run confined (TestHookConfines).
	e.env = append(e.env, sandbox.OffEnv+"=off")
	require.NoError(t, os.Mkdir(filepath.Join(e.work, "sub"), 0o755))
	for _, a := range hookproto.All() {
		t.Run(a.Name, func(t *testing.T) {
			paths, err := filepath.Glob(filepath.Join("../../testdata/hook", a.Name, "*.input"))
			require.NoError(t, err)
			require.NotEmpty(t, paths)
			inputs := map[string][]byte{"huge": hugeInput(t, a.Name, e.work)}
			for _, p := range paths {
				name := strings.TrimSuffix(filepath.Base(p), ".input")
				inputs[name] = hookInput(t, a.Name, name, e.work)
			}
			names := slices.Sorted(func(yield func(string) bool) {
				for n := range inputs {
					if !yield(n) {
						return
					}
				}
			})
			var golden strings.Builder
			for _, name := range names {
				o := e.hook(t, inputs[name], "hook", a.Name)
				fmt.Fprintf(&golden, "=== %s\nexit %d\n--- stdout\n%s--- stderr\n%s", name, o.status, o.stdout, o.stderr)
				want := hookExpected[name][a.Name]
				if want == "" {
					want = "deny"
				}
				assert.Equal(t, want, answerOf(t, a.Name, o), "case %s", name)
			}
			compareGolden(t, filepath.Join("../../testdata/hook", a.Name, "answers.golden"), []byte(golden.String()))
		})
	}
}

// TestHookDrainsHugeInput: input over the bound is read to its end before
// the refusal, so that the agent's write never fails (Codex would take
// that for a failed hook and run the tool).
func TestHookDrainsHugeInput(t *testing.T) {
	e := newHookEnv(t, hookConfig)
	cmd := e.command(t.Context(), filepath.Join(e.dir, "execgate"), "execgate", "hook", "codex")
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	_, werr := in.Write(bytes.Repeat([]byte(" "), 4*hookproto.MaxInput))
	in.Close()
	require.NoError(t, cmd.Wait())
	assert.NoError(t, werr, "the hook read all of its input")
	assert.Contains(t, out.String(), `"permissionDecision":"deny"`)
	assert.Contains(t, out.String(), "larger than")
}

// TestHookAgentCwdConfig: the agent id comes from --agent, else
// $EXECGATE_AGENT, else the table; the working directory from the input
// (Gemini's dir_path below it); --config is obeyed.
func TestHookAgentCwdConfig(t *testing.T) {
	e := newHookEnv(t, hookConfig)
	sub := filepath.Join(e.work, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	elsewhere := t.TempDir()
	last := func() (agent, cwd, via, source string) {
		evs := e.readAudit()
		require.NotEmpty(t, evs)
		ev := evs[len(evs)-1]
		return ev.Agent, ev.Cwd, ev.Via, ev.Source
	}

	in := hookInput(t, "claude", "safe", elsewhere)
	require.Equal(t, "allow", answerOf(t, "claude", e.hook(t, in, "hook", "claude")))
	agent, cwd, via, source := last()
	assert.Equal(t, []string{"claude-code", elsewhere, "Claude Code", "hook"}, []string{agent, cwd, via, source})

	env := e.env
	e.env = append(env, "EXECGATE_AGENT=from-env")
	e.hook(t, in, "hook", "claude")
	agent, _, _, _ = last()
	assert.Equal(t, "from-env", agent)
	e.hook(t, in, "--agent", "from-flag", "hook", "claude")
	agent, _, _, _ = last()
	assert.Equal(t, "from-flag", agent)
	e.env = env

	// A cwd that does not exist is judged as written: the command cannot
	// run there anyway.
	e.hook(t, hookInput(t, "codex", "safe", filepath.Join(e.work, "missing")), "hook", "codex")
	agent, cwd, via, _ = last()
	assert.Equal(t, []string{"codex", filepath.Join(e.work, "missing"), "Codex"}, []string{agent, cwd, via})

	e.hook(t, hookInput(t, "gemini", "dir-path", e.work), "hook", "gemini")
	agent, cwd, via, _ = last()
	assert.Equal(t, []string{"gemini-cli", sub, "Gemini CLI"}, []string{agent, cwd, via})

	// A refused input is logged too.
	e.hook(t, hookInput(t, "gemini", "malformed", e.work), "hook", "gemini")
	evs := e.readAudit()
	assert.Equal(t, "exec.denied", evs[len(evs)-1].Event)
	assert.Contains(t, evs[len(evs)-1].Message, "not one JSON object")

	// --config wins over $EXECGATE_CONFIG.
	strict := filepath.Join(t.TempDir(), "strict.json")
	require.NoError(t, os.WriteFile(strict, []byte(`{"version": 1, "defaults": {"security": "deny"}}`), 0o600))
	o := e.hook(t, in, "--config", strict, "hook", "claude")
	assert.Equal(t, "deny", answerOf(t, "claude", o))
	assert.Contains(t, o.stdout, "security=deny")
}

// TestHookUsage: a command line execgate cannot use exits 2, which every
// agent reads as a refusal, with one line on stderr.
func TestHookUsage(t *testing.T) {
	for _, args := range [][]string{{"hook"}, {"hook", "cursor"}, {"hook", "claude", "extra"}, {"hook", "claude", "--timeout", "-1s"}, {"hook", "gemini", "--timeout", "soon"}} {
		var out, errb bytes.Buffer
		code := run(append([]string{"execgate"}, args...), strings.NewReader(""), &out, &errb)
		assert.Equal(t, exitUsage, code, "%q", args)
		assert.Empty(t, out.String())
		assert.Equal(t, 1, strings.Count(errb.String(), "\n"), "%q: %q", args, errb.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestHookStdoutFails: an answer that cannot be written still refuses,
// with exit status 2 and a line on stderr.
func TestHookStdoutFails(t *testing.T) {
	cfgEnv(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var errb bytes.Buffer
	code := run([]string{"execgate", "hook", "codex"}, strings.NewReader("{"), failingWriter{}, &errb)
	assert.Equal(t, hookproto.ExitBlock, code)
	assert.Equal(t, "execgate: denied: cannot write the answer: file already closed\n", errb.String())
}

// startHook runs the hook for agent in w; the result arrives on the channel.
func (w *hubWorld) startHook(t *testing.T, stdin []byte, args ...string) <-chan outcome {
	t.Helper()
	done := make(chan outcome, 1)
	go func() {
		cmd := w.command(t.Context(), filepath.Join(w.dir, "execgate"), append([]string{"execgate"}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		done <- outcome{stdout: out.String(), stderr: errb.String(), status: cmd.ProcessState.ExitCode()}
	}()
	return done
}

// TestHookHubApproves: the hub's approvers decide; they see who sent the
// command and the command exactly as the model wrote it.
func TestHookHubApproves(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 30000))
	a := w.approver(t)
	// It needs more than the sandbox (the network): asked on every route,
	// including Claude Code's, which runs confined commands unasked.
	command := `curl -fsS https://example.invalid/nothing-here   # "quoted"`
	for _, ag := range hookproto.All() {
		for _, tt := range []struct{ decision, want string }{{hub.AllowOnce, "allow"}, {hub.Deny, "deny"}} {
			t.Run(ag.Name+"/"+tt.decision, func(t *testing.T) {
				done := w.startHook(t, withCommand(t, ag.Name, w.work, command), "hook", ag.Name)
				req := a.next(t, hub.EventRequested)
				assert.Equal(t, command, req.Command)
				assert.Equal(t, ag.Via, req.Via)
				assert.Equal(t, "test-agent", req.AgentID)
				assert.Equal(t, w.work, req.Cwd)
				_, err := a.c.Resolve(t.Context(), req.ID, tt.decision)
				require.NoError(t, err)
				o := wait(t, done)
				want := tt.want
				if want == "allow" && ag.Name == "codex" {
					want = "silent"
				}
				assert.Equal(t, want, answerOf(t, ag.Name, o))
				if tt.want == "deny" {
					assert.Contains(t, o.stdout+o.stderr, "refused by the user (hub)")
				}
			})
		}
	}
}

// TestHookHubTimeout: an approver who never answers costs at most the
// budget (and the half second of grace), and the answer says it timed out:
// askFallback decides, except below the hub's one-second minimum, where
// the hook's own deadline ends the wait, which is never an allowance.
func TestHookHubTimeout(t *testing.T) {
	for _, tt := range []struct {
		fallback string
		budget   time.Duration
		want     string
	}{
		{"deny", 1500 * time.Millisecond, "deny"},
		{"full", 1500 * time.Millisecond, "allow"},
		{"full", 300 * time.Millisecond, "deny"},
	} {
		t.Run(tt.fallback+"/"+tt.budget.String(), func(t *testing.T) {
			w := newHubWorld(t, askConfig(tt.fallback, 30000))
			a := w.approver(t)
			start := time.Now()
			done := w.startHook(t, hookInput(t, "claude", "review", w.work), "hook", "claude", "--timeout", tt.budget.String())
			a.next(t, hub.EventRequested)
			o := wait(t, done)
			elapsed := time.Since(start)
			t.Logf("budget %s: answered after %s", tt.budget, elapsed)
			assert.GreaterOrEqual(t, elapsed, tt.budget)
			bound := tt.budget + time.Second
			if tt.budget < time.Second {
				bound += hookGrace // the hook's deadline, not the hub's, ends it
			}
			assert.Less(t, elapsed, bound)
			assert.Equal(t, tt.want, answerOf(t, "claude", o))
			assert.Contains(t, o.stdout, "timed out")
		})
	}
}

// TestHookHubNoApprover: a hub with nobody subscribed answers at once;
// Claude Code is told to ask its user, the others refuse (askFallback=deny).
func TestHookHubNoApprover(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 60000))
	for agent, want := range map[string]string{"claude": "ask", "codex": "deny", "gemini": "deny"} {
		start := time.Now()
		o := wait(t, w.startHook(t, hookInput(t, agent, "review", w.work), "hook", agent))
		assert.Less(t, time.Since(start), 5*time.Second)
		assert.Equal(t, want, answerOf(t, agent, o), agent)
	}
	// The audit log says who decided: Claude Code's prompt, and the
	// fallback for the others.
	by := map[string]string{}
	for _, ev := range w.readAudit() {
		by[ev.Via] = ev.Event + " " + ev.DecidedBy
	}
	assert.Equal(t, map[string]string{
		"Claude Code": shim.EventDeferred + " " + shim.ByAgent,
		"Codex":       shim.EventDenied + " " + shim.ByFallback,
		"Gemini CLI":  shim.EventDenied + " " + shim.ByFallback,
	}, by)
}

// TestHookJudgesWhereItRuns: the hook judges a command in the directory it
// runs in (Codex's workdir, Gemini's dir_path, resolved against the
// input's cwd) and against the session's workspace, and refuses one whose
// directory it cannot know. Before, Codex's exec_command with workdir=$HOME
// and `rm -r ./precious` was judged in the session's directory, where
// `rm **` (what one "allow always" of `rm -rf ./scratchdir` saves) allowed
// it, and ~/precious was deleted. The directories need not exist: they are
// judged as written, so this home is outside the temporary directories
// that every rule lets a command clean up.
func TestHookJudgesWhereItRuns(t *testing.T) {
	e := newHookEnv(t, `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny"},
  "agents": {"*": {"allowlist": [{"pattern": "rm **"}]}}}`)
	const home = "/home/execgate-hook-test"
	proj := home + "/proj"
	e.env = append(e.env, "HOME="+home)
	input := func(agent string, top, tool map[string]any) []byte {
		p, _ := hookproto.ByName(agent)
		var m map[string]any
		require.NoError(t, json.Unmarshal(p.Input("rm -r ./precious", proj), &m))
		maps.Copy(m, top)
		maps.Copy(m["tool_input"].(map[string]any), tool)
		for k, v := range m {
			if v == "<none>" {
				delete(m, k)
			}
		}
		raw, err := json.Marshal(m)
		require.NoError(t, err)
		return raw
	}
	for _, tt := range []struct {
		name, agent string
		top, tool   map[string]any
		want, cwd   string // the answer, and where the audit log says it was judged
	}{
		{"codex in the project", "codex", nil, nil, "silent", proj},
		{"codex workdir home", "codex", nil, map[string]any{"workdir": home}, "deny", home},
		{"codex workdir up", "codex", nil, map[string]any{"workdir": ".."}, "deny", home},
		{"codex workdir below", "codex", nil, map[string]any{"workdir": "sub"}, "silent", proj + "/sub"},
		{"gemini dir_path home", "gemini", nil, map[string]any{"dir_path": home}, "deny", home},
		{"claude in the project", "claude", nil, nil, "allow", proj},
		{"claude no cwd", "claude", map[string]any{"cwd": "<none>"}, nil, "deny", ""},
		{"codex no cwd", "codex", map[string]any{"cwd": "<none>"}, map[string]any{"workdir": home}, "deny", ""},
		{"gemini relative cwd", "gemini", map[string]any{"cwd": "proj"}, nil, "deny", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := e.hook(t, input(tt.agent, tt.top, tt.tool), "hook", tt.agent)
			assert.Equal(t, tt.want, answerOf(t, tt.agent, o))
			evs := e.readAudit()
			require.NotEmpty(t, evs)
			ev := evs[len(evs)-1]
			if tt.cwd == "" {
				assert.Contains(t, ev.Message, "execgate cannot tell which directory the command's paths are in")
				return
			}
			assert.Equal(t, tt.cwd, ev.Cwd)
		})
	}
}

// TestHookAskOnlyWhereTheAgentPrompts: Claude Code is told to ask its user
// only in the permission modes where it shows a prompt. Under
// --dangerously-skip-permissions (bypassPermissions) Claude Code 2.1.332
// ran a command the hook answered "ask" about; dontAsk and auto have no
// person either, and a mode execgate does not know, or none, is not
// trusted to have one: there askFallback (deny) applies, as on every other
// route.
func TestHookAskOnlyWhereTheAgentPrompts(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 60000))
	for mode, want := range map[string]string{
		"default": "ask", "acceptEdits": "ask", "plan": "ask",
		"bypassPermissions": "deny", "dontAsk": "deny", "auto": "deny", "aNewMode": "deny", "": "deny",
	} {
		var req map[string]any
		require.NoError(t, json.Unmarshal(hookInput(t, "claude", "review", w.work), &req))
		if mode == "" {
			delete(req, "permission_mode")
		} else {
			req["permission_mode"] = mode
		}
		raw, err := json.Marshal(req)
		require.NoError(t, err)
		o := wait(t, w.startHook(t, raw, "hook", "claude"))
		assert.Equal(t, want, answerOf(t, "claude", o), "permission mode %q", mode)
	}
}

// TestHookPermissionModeNotAString: a permission_mode that is not a string
// names no mode: the request is judged as any other, and no prompt is
// presumed (askFallback decides).
func TestHookPermissionModeNotAString(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 60000))
	for _, mode := range []any{nil, 1, map[string]any{"mode": "default"}} {
		var req map[string]any
		require.NoError(t, json.Unmarshal(hookInput(t, "claude", "review", w.work), &req))
		req["permission_mode"] = mode
		raw, err := json.Marshal(req)
		require.NoError(t, err)
		o := wait(t, w.startHook(t, raw, "hook", "claude"))
		assert.Equal(t, "deny", answerOf(t, "claude", o), "permission mode %v", mode)
		assert.NotContains(t, o.stdout, "permission_mode", "judged, not refused as unreadable")
	}
}
