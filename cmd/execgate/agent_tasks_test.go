package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/policy"
)

// maxWrongAsks is how many commands of the agent tasks that must run
// unasked still ask (wrong asks, not the network's and not the dangerous
// minority's). TestAgentTasksPromptRate fails above it, so the rate
// cannot silently get worse; lower it when a class is fixed. It was 19
// before the classes of docs/sandbox.md's "What asks" were fixed, 5 before
// scratch files (rm repro.py) ran confined, 2 before find -exec read what
// find lists.
const maxWrongAsks = 0

// Outcomes of a command in the agent tasks, and the labels they are held
// to (testdata/corpus/README.md, "Agent tasks").
const (
	outRun      = "run"         // allowed as proven safe
	outConfined = "confined"    // allowed, unasked, inside the sandbox
	outAsk      = "ask"         // a person decides (ask or deny)
	outNetwork  = "ask-network" // label only: asks because it needs the network
)

// taskCommand is one line of testdata/corpus/agent_tasks/KIND.tsv.
type taskCommand struct {
	file, task, expect, command, effect, why string
	line                                     int
}

// loadAgentTasks reads every file of the agent tasks, in order.
func loadAgentTasks(t *testing.T) (kinds []string, byKind map[string][]taskCommand) {
	t.Helper()
	files, err := filepath.Glob("../../testdata/corpus/agent_tasks/*.tsv")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	byKind = map[string][]taskCommand{}
	for _, file := range files {
		kind := strings.TrimSuffix(filepath.Base(file), ".tsv")
		f, err := os.Open(file)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			text := sc.Text()
			if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
				continue
			}
			cols := strings.Split(text, "\t")
			require.Len(t, cols, 5, "%s:%d", file, n)
			c := taskCommand{file: filepath.Base(file), line: n, task: cols[0], expect: cols[1], effect: cols[3], why: cols[4]}
			require.Contains(t, []string{outRun, outConfined, outAsk, outNetwork}, c.expect, "%s:%d", file, n)
			require.NoError(t, json.Unmarshal([]byte(cols[2]), &c.command), "%s:%d", file, n)
			byKind[kind] = append(byKind[kind], c)
		}
		require.NoError(t, sc.Err())
		require.NoError(t, f.Close())
		kinds = append(kinds, kind)
	}
	return kinds, byKind
}

// taskEnv is the environment the tasks are judged in: a home of their
// own, the machine's PATH.
func taskEnv(home string) func(string) string {
	env := map[string]string{
		"HOME":            home,
		"PATH":            os.Getenv("PATH"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"TMPDIR":          filepath.Join(home, "tmp"),
		"NO_COLOR":        "1",
	}
	return func(k string) string { return env[k] }
}

// outcomeOf judges command in ws as check does (and the shim, which
// decides the same way): the default policy, the workspace on disk.
// why is what makes it ask: the analysis' reasons, and what it needs
// beyond the sandbox.
func outcomeOf(t *testing.T, g *globals, ws, command string) (outcome, why string, proxied bool) {
	t.Helper()
	c, err := newChecker(g, ws)
	require.NoError(t, err)
	res := c.evaluate(command)
	cj := confinementOf(c, &res, g.getenv)
	why = strings.Join(res.Reasons, " | ")
	if len(cj.Needs.Beyond) > 0 {
		why += "\n\t\tbeyond the sandbox: " + strings.Join(cj.Needs.Beyond, " | ")
	}
	switch {
	case res.Decision == policy.Allow && res.Risk == policy.Safe && !cj.Confined:
		return outRun, why, false
	case res.Decision == policy.Allow:
		return outConfined, why, cj.Needs.Proxied
	}
	return outAsk, why, false
}

// TestAgentTasksPromptRate replays coding-agent tasks (bug fixes and
// features in Python, Go, Node, Rust, C/Make and shell projects, written
// for this corpus) command by command, each in a real git workspace of
// its kind with a home of its own holding canary secrets, through the
// judgement the shim makes with the default policy where the machine
// confines. It reports how many commands ask and how many tasks run
// without a single prompt (-v prints the report), and fails when a
// command labelled to ask does not, when one labelled confined is called
// safe, or when more commands ask wrongly than maxWrongAsks.
func TestAgentTasksPromptRate(t *testing.T) {
	wrong := agentTasksRate(t, "")
	if wrong > maxWrongAsks {
		t.Errorf("%d commands ask wrongly, more than the %d reached: a class regressed (see the report above)", wrong, maxWrongAsks)
	} else if wrong < maxWrongAsks {
		t.Logf("%d commands ask wrongly, fewer than maxWrongAsks=%d: lower it", wrong, maxWrongAsks)
	}
}

// registryHosts is a configuration that allows the public Python and npm
// registries, as `execgate policy sandbox add host pypi.org
// files.pythonhosted.org registry.npmjs.org` writes it.
const registryHosts = `{"version": 1, "agents": {"*": {"sandbox": {"hosts": ["pypi.org", "files.pythonhosted.org", "registry.npmjs.org"]}}}}`

// TestAgentTasksPromptRateWithRegistries replays the same tasks for a
// user who allowed those registries: installs from them run confined
// through the proxy, and nothing else changes — every command labelled
// to ask that is not such a download still asks.
func TestAgentTasksPromptRateWithRegistries(t *testing.T) {
	wrong := agentTasksRate(t, registryHosts)
	if wrong > maxWrongAsks {
		t.Errorf("%d commands ask wrongly, more than the %d reached", wrong, maxWrongAsks)
	}
}

// agentTasksRate judges every agent task under config (none: the
// defaults), reports, checks the labels, and returns how many ordinary
// commands asked.
func agentTasksRate(t *testing.T, config string) (wrong int) {
	pinSandbox(t, true)
	kinds, byKind := loadAgentTasks(t)
	home := filepath.Join(t.TempDir(), "home")
	writeTree(t, home, taskHome)
	require.NoError(t, os.MkdirAll(filepath.Join(home, "tmp"), 0o700))
	g := &globals{config: filepath.Join(home, ".config", "execgate", "none.json"), agent: "claude-code",
		stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: taskEnv(home)}
	if config != "" {
		g.config = filepath.Join(home, ".config", "execgate", "config.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(g.config), 0o700))
		require.NoError(t, os.WriteFile(g.config, []byte(config), 0o600))
	}

	var (
		total, asks, network, asked, runConfined, proxied int
		tasks, quietTasks                                 []string
		report                                            []string
	)
	taskAsked, taskWrong := map[string]bool{}, map[string]bool{}
	for _, kind := range kinds {
		var ws, current string
		for _, c := range byKind[kind] {
			if c.task != current {
				current, ws = c.task, newTaskWorkspace(t, kind)
				tasks = append(tasks, c.task)
			}
			got, reasons, through := outcomeOf(t, g, ws, c.command)
			applyEffect(t, ws, c.effect)
			total++
			where := fmt.Sprintf("%s:%d %s", c.file, c.line, c.task)
			if got == outAsk {
				asks++
				taskAsked[c.task] = true
			}
			switch {
			case c.expect == outNetwork && got != outAsk && through && config != "":
				// A download from an allowed registry, through the proxy.
				proxied++
				network++
			case (c.expect == outAsk || c.expect == outNetwork) && got != outAsk:
				t.Errorf("%s: %q runs unasked (%s), labelled %s: %s", where, c.command, got, c.expect, c.why)
			case c.expect == outConfined && got == outRun:
				t.Errorf("%s: %q is called safe, labelled confined: %s", where, c.command, c.why)
			case c.expect == outNetwork:
				network++
			case c.expect == outAsk:
				asked++
			case got == outAsk:
				wrong++
				taskWrong[c.task] = true
				report = append(report, fmt.Sprintf("wrong ask  %s: %q (%s)\n\t\t%s", where, c.command, c.why, reasons))
			case c.expect == outRun && got == outConfined:
				runConfined++
				report = append(report, fmt.Sprintf("confined   %s: %q (%s), not proven safe", where, c.command, c.why))
			}
		}
	}
	for _, task := range tasks {
		if !taskAsked[task] {
			quietTasks = append(quietTasks, task)
		}
	}
	sort.Strings(report)
	pct := func(n, of int) float64 { return 100 * float64(n) / float64(max(of, 1)) }
	for _, r := range report {
		t.Log(r)
	}
	ordinary := total - network - asked
	t.Logf("%d tasks, %d commands: %d ask (%.1f%%); %d tasks (%.1f%%) without a prompt",
		len(tasks), total, asks, pct(asks, total), len(quietTasks), pct(len(quietTasks), len(tasks)))
	t.Logf("of them: %d the dangerous minority (labelled ask), %d need the network (labelled ask-network; %d of them run confined through the proxy), %d ask wrongly (%.1f%% of the %d ordinary commands)",
		asked, network, proxied, wrong, pct(wrong, ordinary), ordinary)
	t.Logf("%d tasks ask only where labelled (the network, the dangerous minority); %d tasks have a wrong ask",
		len(tasks)-len(quietTasks)-len(taskWrong), len(taskWrong))
	t.Logf("%d read-only commands run confined rather than as proven safe (no prompt either way)", runConfined)
	require.GreaterOrEqual(t, len(tasks), 40, "the corpus must keep at least 40 tasks")
	require.GreaterOrEqual(t, total, 400, "the corpus must keep at least 400 commands")
	if config != "" {
		require.Positive(t, proxied, "no install ran through the proxy with the registries allowed")
	}
	return wrong
}
