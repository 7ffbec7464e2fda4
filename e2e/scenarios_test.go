package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/sandbox"
)

// scenario is one model command and what must come of it.
type scenario struct {
	name    string
	command string
	// hub starts a hub with a scripted approver that allows every request.
	hub bool
	// prepare readies the world (a directory to delete).
	prepare func(t *testing.T, w *world)
	// per is the command for an agent that needs another spelling of it.
	per map[string]string
	// shim is the command on a route that confines (confines), where it
	// differs: a command whose only effects lie in the workspace runs
	// confined there, unasked, while a hook that cannot confine still
	// asks.
	shim string
	// confinedOnly: the scenario is about confinement, and runs only on
	// the routes that confine.
	confinedOnly bool
	// check looks at the world, the audit log and the tool result the
	// model got back.
	check func(t *testing.T, w *world, command, result string, shown []string)
}

// commandFor is the scenario's command for agent on route.
func (sc scenario) commandFor(agent, route string) string {
	if c, ok := sc.per[agent]; ok {
		return c
	}
	if sc.shim != "" && confines(agent, route) {
		return sc.shim
	}
	return sc.command
}

// confines reports whether commands agent runs by route run confined
// where this machine can confine: the shim's, and those Claude Code's hook
// rewrites to run through the shim (PreToolUse updatedInput).
func confines(agent, route string) bool {
	return (route == routeShim || route == routeHook && (agent == "claude" || agent == "codex")) && sandbox.Probe(nil).Supported()
}

var scenarios = []scenario{
	{
		name: "git status runs unasked", command: "git status",
		check: func(t *testing.T, w *world, command, result string, shown []string) {
			if !strings.Contains(result, "On branch main") {
				t.Errorf("the model did not get git's output: %q", result)
			}
			noExecgateOutput(t, result)
			// The hook logs exec.allowed, the shim exec.started and
			// exec.finished.
			if len(auditFor(w, "git status", "exec.allowed", "exec.started")) == 0 {
				t.Errorf("the audit log has no allowed `git status` (the bare payload): %s", describeAudit(w))
			}
			if len(shown) > 0 {
				t.Errorf("approvers were asked about %q", shown)
			}
		},
	},
	{
		name: "rm of a home directory is refused", command: "rm -rf ~/precious",
		check: func(t *testing.T, w *world, command, result string, _ []string) {
			if !w.exists("precious/keep.txt") {
				t.Errorf("~/precious was deleted")
			}
			oneRefusal(t, result)
		},
	},
	{
		name: "a write needing review is refused under askFallback=deny", command: "echo hi > notes.txt",
		// Code that runs later (.envrc) needs more than the sandbox.
		shim: "echo hi > .envrc",
		// Claude Code runs here under --dangerously-skip-permissions,
		// where it ran the command after a hook's "ask" (2.1.332): the
		// hook refuses in that mode instead.
		check: func(t *testing.T, w *world, command, result string, _ []string) {
			if w.exists("work/notes.txt") || w.exists("work/.envrc") {
				t.Errorf("%q wrote its file", command)
			}
			oneRefusal(t, result)
		},
	},
	{
		name: "an approved rm runs", command: "rm -rf ./scratch", hub: true,
		// Codex 0.169 itself refuses `rm -rf` after every hook has allowed
		// it ("rm -f style commands are not permitted").
		// It writes .envrc too, which no route confines: the approver
		// is asked everywhere.
		per:  map[string]string{"codex": "rm -r ./scratch && touch .envrc"},
		shim: "rm -rf ./scratch && touch .envrc",
		prepare: func(t *testing.T, w *world) {
			must(t, os.MkdirAll(filepath.Join(w.work, "scratch", "sub"), 0o755))
		},
		check: func(t *testing.T, w *world, command, result string, shown []string) {
			if w.exists("work/scratch") || strings.Contains(command, ".envrc") && !w.exists("work/.envrc") {
				t.Errorf("%q did not run; tool result %q", command, result)
			}
			noExecgateOutput(t, result)
			if !slices.Equal(shown, []string{command}) {
				t.Errorf("the approver was shown %q, not the bare payload alone", shown)
			}
		},
	},
}

var confinedScenario = scenario{
	name: "a workspace write runs confined, unasked", command: "echo hi > notes.txt", confinedOnly: true,
	check: func(t *testing.T, w *world, command, result string, shown []string) {
		if b, err := os.ReadFile(filepath.Join(w.work, "notes.txt")); err != nil || string(b) != "hi\n" {
			t.Errorf("%q did not run; tool result %q", command, result)
		}
		noExecgateOutput(t, result)
		confined := false
		for _, ev := range w.audit() {
			// The shim's own record of the run (the hook logs
			// exec.allowed): the sandbox's grants.
			confined = confined || ev.Command == command && ev.Event == "exec.started" && ev.DecidedBy == "confined" && strings.Contains(ev.Confined, "writes the workspace")
		}
		if !confined {
			t.Errorf("no confined run of %q in the audit log: %s", command, describeAudit(w))
		}
		if len(shown) > 0 {
			t.Errorf("approvers were asked about %q", shown)
		}
	},
}

func init() { scenarios = append(scenarios, confinedScenario) }

// refusalPrefix starts the one line a refusal shows the model.
const refusalPrefix = "execgate: denied: "

// oneRefusal checks that the model got exactly one line from execgate, a
// refusal, and nothing else of execgate's.
func oneRefusal(t *testing.T, result string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(result, "\n") {
		if strings.Contains(strings.ToLower(l), "execgate") {
			lines = append(lines, l)
		}
	}
	// A hook that finds nobody to approve answers "ask"; a headless
	// Claude Code refuses then, showing the model execgate's reason.
	if len(lines) != 1 || !strings.Contains(lines[0], refusalPrefix) && !strings.Contains(lines[0], "execgate: needs approval: ") {
		t.Errorf("want exactly one refusal line in the tool result, got %q in %q", lines, result)
	}
}

func noExecgateOutput(t *testing.T, result string) {
	t.Helper()
	if strings.Contains(strings.ToLower(result), "execgate") {
		t.Errorf("execgate output reached the model: %q", result)
	}
}

// auditFor returns the audit events of the kinds for command.
func auditFor(w *world, command string, kinds ...string) []string {
	var out []string
	for _, ev := range w.audit() {
		if ev.Command == command && slices.Contains(kinds, ev.Event) {
			out = append(out, ev.ID)
		}
	}
	return out
}

func describeAudit(w *world) string {
	var b strings.Builder
	for _, ev := range w.audit() {
		c := ev.Command
		if len(c) > 120 {
			c = c[:120] + "…"
		}
		fmt.Fprintf(&b, "\n  %s %s by %s: %q %q", ev.Event, ev.Risk, ev.DecidedBy, c, ev.Reasons)
	}
	return b.String()
}

// timing is one scenario's wall time, for docs/BENCHMARKS.md.
type timing struct {
	agent, route, scenario string
	elapsed                time.Duration
}

// TestAgents drives each pinned agent CLI through each route and scenario.
func TestAgents(t *testing.T) {
	enabled(t)
	pins := readPins(t)
	var timings []timing
	for _, a := range agents {
		t.Run(a.name, func(t *testing.T) {
			p := pinFor(pins, a.name)
			bin := install(t, p)
			for _, route := range a.routes {
				t.Run(route, func(t *testing.T) {
					for _, sc := range scenarios {
						t.Run(sc.name, func(t *testing.T) {
							if sc.confinedOnly && !confines(a.name, route) {
								t.Skipf("%s's %s route does not confine here", a.name, route)
							}
							el := runScenario(t, a, p, bin, route, sc)
							timings = append(timings, timing{a.name, route, sc.name, el})
						})
					}
				})
			}
		})
	}
	// The same runs without execgate, for the timings alone.
	for _, a := range agents {
		t.Run("without execgate/"+a.name, func(t *testing.T) {
			p := pinFor(pins, a.name)
			bin := install(t, p)
			for _, sc := range scenarios {
				if sc.confinedOnly {
					continue
				}
				w := newWorld(t)
				m := newMockModel(t, a.api, sc.commandFor(a.name, routeNone))
				env := a.wire(t, w, routeNone, m)
				if sc.prepare != nil {
					sc.prepare(t, w)
				}
				r := w.runAgent(a.argv(bin), env...)
				timings = append(timings, timing{a.name, routeNone, sc.name, r.elapsed})
			}
		})
	}
	for _, tm := range timings {
		t.Logf("timing: %s %s %q: %v", tm.agent, tm.route, tm.scenario, tm.elapsed.Round(time.Millisecond))
	}
}

// pinFor is the pinned version, or EXECGATE_E2E_VERSION_<NAME> to try
// another one (a new release, before pinning it).
func pinFor(pins map[string]pin, name string) pin {
	p := pins[name]
	if v := os.Getenv("EXECGATE_E2E_VERSION_" + strings.ToUpper(name)); v != "" {
		p.Version = v
	}
	return p
}

func runScenario(t *testing.T, a agentKind, p pin, bin, route string, sc scenario, tweaks ...func(*world) []string) time.Duration {
	w := newWorld(t)
	command := sc.commandFor(a.name, route)
	m := newMockModel(t, a.api, command)
	env := a.wire(t, w, route, m)
	for _, tweak := range tweaks {
		env = append(env, tweak(w)...)
	}
	if sc.prepare != nil {
		sc.prepare(t, w)
	}
	shown := func() []string { return nil }
	if sc.hub {
		w.startHub()
		shown = w.approveAll(hub.AllowOnce)
	}
	r := w.runAgent(a.argv(bin), env...)
	results := m.toolResults()
	if len(results) != 1 {
		t.Fatalf("want one tool result, got %d: %q\nstatus %d\nstdout %s\nstderr %s\nrequests:\n%s\naudit:%s",
			len(results), results, r.status, r.stdout, r.stderr, m.describe(), describeAudit(w))
	}
	sc.check(t, w, command, results[0], shown())
	onlyPayloadJudged(t, w, command)
	if t.Failed() {
		t.Logf("stdout %s\nstderr %s\naudit:%s", r.stdout, r.stderr, describeAudit(w))
	}
	checkEnvelopes(t, w, a, p, bin, route, command)
	return r.elapsed
}

// onlyPayloadJudged checks that execgate refused or asked about nothing but
// the model's command: the agent's own start-up commands are its harness.
func onlyPayloadJudged(t *testing.T, w *world, command string) {
	t.Helper()
	for _, ev := range w.audit() {
		if ev.Command == command || ev.Event != "exec.denied" && ev.DecidedBy != "hub" && ev.DecidedBy != "tty" {
			continue
		}
		c := ev.Command
		if len(c) > 200 {
			c = c[:200] + "…"
		}
		t.Errorf("execgate judged the agent's own command like the model's (%s by %s): %q %q", ev.Event, ev.DecidedBy, c, ev.Reasons)
	}
}

// TestClaudeVariants runs Claude Code through the shim in the set-ups that
// change its wrapper: a ~/.bashrc (the snapshot writer sources it), and an
// environment script (CLAUDE_ENV_FILE, and what SessionStart hooks write),
// which Claude Code puts before its prologue.
func TestClaudeVariants(t *testing.T) {
	enabled(t)
	a := agentByName("claude")
	p := pinFor(readPins(t), a.name)
	bin := install(t, p)
	variants := []struct {
		name  string
		tweak func(*world) []string
	}{
		{"with a bashrc", func(w *world) []string {
			must(t, os.WriteFile(filepath.Join(w.home, ".bashrc"), []byte("alias ll='ls -l'\nhello() { echo hi; }\nexport FROM_BASHRC=1\n"), 0o644))
			return nil
		}},
		{"with CLAUDE_ENV_FILE", func(w *world) []string {
			f := filepath.Join(w.home, "agent-env.sh")
			must(t, os.WriteFile(f, []byte("export FROM_ENV_FILE=1\nexport OTHER=two\n"), 0o644))
			return []string{"CLAUDE_ENV_FILE=" + f}
		}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			el := runScenario(t, a, p, bin, routeShim, scenarios[0], v.tweak)
			t.Logf("timing: claude shim %q %s: %v", scenarios[0].name, v.name, el.Round(time.Millisecond))
		})
	}
}

// TestClaudeZshShapes records what Claude Code hands a zsh (it picks the
// zsh forms when CLAUDE_CODE_SHELL's path names zsh): a recording script
// named zsh that runs the real zsh, with no execgate in between, since
// execgate has no zsh shim. The shapes go into the captured fixtures, which
// the policy tests require execgate to recognise.
func TestClaudeZshShapes(t *testing.T) {
	enabled(t)
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed")
	}
	a := agentByName("claude")
	p := pinFor(readPins(t), a.name)
	bin := install(t, p)
	w := newWorld(t)
	m := newMockModel(t, a.api, "git status")
	env := a.wire(t, w, routeNone, m)
	dir := filepath.Join(w.home, ".local", "lib", "recorded-zsh")
	must(t, os.MkdirAll(dir, 0o755))
	script := "#!/bin/bash\nprintf '%s\\0' \"$0\" \"$@\" > " + shellQuote(w.argvDir) + "/\"$(date +%s%N)-$$.argv\"\n" +
		"exec -a \"$0\" " + shellQuote(zsh) + " \"$@\"\n"
	must(t, os.WriteFile(filepath.Join(dir, "zsh"), []byte(script), 0o755))
	env = append(env, "CLAUDE_CODE_SHELL="+filepath.Join(dir, "zsh"))
	r := w.runAgent(a.argv(bin), env...)
	results := m.toolResults()
	if len(results) != 1 || !strings.Contains(results[0], "On branch main") {
		t.Fatalf("git status under zsh: %q\nstdout %s\nstderr %s", results, r.stdout, r.stderr)
	}
	checkEnvelopes(t, w, a, p, bin, routeZsh, "git status")
}

// realZsh is the zsh on PATH; the test skips without one.
func realZsh(t *testing.T) string {
	t.Helper()
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed: no zsh shim route to test (apt-get install zsh)")
	}
	return zsh
}

// TestClaudeZshShim runs Claude Code wired by `execgate setup claude` for a
// user whose login shell is zsh: CLAUDE_CODE_SHELL names the zsh shim,
// Claude Code sends its zsh forms, and the shim recognises them exactly —
// git status runs unasked with only the payload judged, rm -rf ~/precious is
// refused. The argvs are checked against the captured fixtures (drift).
func TestClaudeZshShim(t *testing.T) {
	enabled(t)
	realZsh(t)
	a := agentByName("claude")
	p := pinFor(readPins(t), a.name)
	bin := install(t, p)
	for _, sc := range scenarios[:2] {
		t.Run(sc.name, func(t *testing.T) {
			el := runScenario(t, a, p, bin, routeZshShim, sc)
			t.Logf("timing: claude zsh-shim %q: %v", sc.name, el.Round(time.Millisecond))
		})
	}
}
