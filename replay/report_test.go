package replay

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/policy"
)

// tallyOf judges commands in home/work and tallies them.
func tallyOf(t *testing.T, cfg string, commands []Command) Report {
	t.Helper()
	home := testHome(t)
	j := testJudge(t, cfg, home)
	tally := NewTally()
	for i, c := range commands {
		c.Cwd, c.File, c.Line = home, "t.jsonl", i+1
		tally.Add(c, j.Evaluate(c))
	}
	return tally.Report()
}

func TestTally(t *testing.T) {
	cmd := func(agent, session, text string) Command { return Command{Agent: agent, Session: session, Text: text} }
	r := tallyOf(t, "", []Command{
		cmd("claude-code", "a", "git status"),
		cmd("claude-code", "a", "npm test"),
		cmd("claude-code", "a", "npm test"),
		cmd("claude-code", "a", "npm run test -- --watch=false"),
		cmd("claude-code", "a", "rm -rf ~"),
		cmd("claude-code", "b", "ls"),
		cmd("codex", "c", "go test ./..."),
		cmd("codex", "c", "go test ./..."),
		cmd("codex", "c", "go test -run TestX ./pkg"),
		cmd("codex", "c", "go vet ./... && go test ./..."),
		cmd("codex", "c", "git status && go test ./..."),
	})
	assert.Equal(t, 11, r.Commands)
	assert.Equal(t, Outcomes{Allow: 2, Ask: 9}, r.Outcomes)
	assert.Equal(t, Sessions{Count: 3, WithoutAsks: 1, AsksMedian: 4, AsksP90: 5, AsksMax: 5}, r.Sessions)
	require.Len(t, r.Agents, 2)
	assert.Equal(t, AgentReport{Agent: "claude-code", Policy: "security=allowlist ask=on-miss askFallback=deny autoAllowSafe=true",
		Commands: 6, Sessions: 2, Outcomes: Outcomes{Allow: 2, Ask: 4}}, r.Agents[0])

	// Causes by rule id, each counted once per command, commonest first.
	require.Len(t, r.AskCauses, 2)
	assert.Equal(t, "workspace-runner", r.AskCauses[0].Rule)
	assert.Equal(t, 8, r.AskCauses[0].Asks)
	assert.Equal(t, policy.EffectRuns, r.AskCauses[0].Effect)
	assert.Equal(t, "npm test", r.AskCauses[0].Example.Command)
	assert.Equal(t, "t.jsonl:2", r.AskCauses[0].Example.Where)
	assert.Equal(t, "rm-recursive-catastrophic", r.AskCauses[1].Rule)

	// The dangerous command was stopped.
	assert.Equal(t, 1, r.Dangerous.Commands)
	assert.Equal(t, 1, r.Dangerous.Stopped)
	require.Len(t, r.Dangerous.Examples, 1)
	assert.Equal(t, "rm -rf ~", r.Dangerous.Examples[0].Command)

	// go test's options reach other programs (-exec, -toolexec), so no
	// wildcard is proposed for it: the exact command spares three of
	// codex's questions; each suggestion says what it lets run.
	require.GreaterOrEqual(t, len(r.Suggestions), 3)
	assert.Equal(t, Suggestion{Agent: "codex", Pattern: "go test ./... $", Removes: 3, Helps: 4, Scope: "exact",
		Effects: []string{policy.EffectRuns}, Example: "go test ./...", Allow: "execgate --agent codex allow 'go test ./... $'"}, r.Suggestions[0])
	for _, s := range r.Suggestions {
		assert.NotEqual(t, "rm -rf ~", s.Pattern)
	}
}

// TestSuggestionsAreTheEnginesAndRemoveTheAsk: every suggested entry is
// one the policy proposes, and added to the allowlist it lets the example
// run without asking.
func TestSuggestionsAreTheEnginesAndRemoveTheAsk(t *testing.T) {
	var commands []Command
	for _, c := range []string{"make build", "make build", "git commit -m wip", "git add -A", "git add src", "sed -i s/a/b/ f.go",
		"sed -i s/a/b/ f.go", "python3 repro.py", "npm install", "npm install", "npm install", "echo hi > notes.txt", "cat ~/.ssh/id_rsa"} {
		commands = append(commands, Command{Agent: "claude-code", Session: "s", Text: c})
	}
	r := tallyOf(t, "", commands)
	require.NotEmpty(t, r.Suggestions)
	for _, s := range r.Suggestions {
		home := testHome(t)
		cfg := fmt.Sprintf(`{"version": 1, "agents": {"claude-code": {"allowlist": [{"pattern": %q}]}}}`, s.Pattern)
		v := testJudge(t, cfg, home).Evaluate(Command{Agent: "claude-code", Text: s.Example, Cwd: home})
		assert.Equal(t, policy.Allow, v.Decision, "%q does not let %q run", s.Pattern, s.Example)
		assert.NotEmpty(t, s.Effects, s.Pattern)
		assert.NotContains(t, s.Pattern, "id_rsa")
	}
	assert.Equal(t, "npm install $", r.Suggestions[0].Pattern, "an installer gets no wildcard")
	assert.Equal(t, "exact", r.Suggestions[0].Scope)
}

// TestAskAlways: with ask=always every command asks, and no allowlist
// entry would spare a question, so none is proposed.
func TestAskAlways(t *testing.T) {
	r := tallyOf(t, `{"version": 1, "defaults": {"ask": "always"}}`, []Command{{Session: "s", Text: "git status"}, {Session: "s", Text: "npm test"}})
	assert.Equal(t, Outcomes{Ask: 2}, r.Outcomes)
	assert.Empty(t, r.Suggestions)
	require.NotEmpty(t, r.AskCauses)
	assert.Equal(t, "(ask=always)", r.AskCauses[0].Rule)
}

func TestNearestRank(t *testing.T) {
	for _, tc := range []struct {
		values      []int
		p50, p90    int
		description string
	}{
		{[]int{7}, 7, 7, "one"},
		{[]int{0, 1}, 0, 1, "two"},
		{[]int{0, 0, 0, 0, 0, 0, 0, 0, 0, 9}, 0, 0, "ten"},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 6, 10, "eleven"},
	} {
		assert.Equal(t, tc.p50, nearestRank(tc.values, 50), tc.description)
		assert.Equal(t, tc.p90, nearestRank(tc.values, 90), tc.description)
	}
}

// TestTopK: within its capacity the counts are exact; beyond it, every key
// counted more than total/capacity times is kept, with a count it
// certainly reached and one it did not pass.
func TestTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, capacity := range []int{8, 64, 1000} {
		k := newTopK[int](capacity)
		truth := map[string]int{}
		total := 20000
		for i := 0; i < total; i++ {
			key := fmt.Sprint("heavy", r.IntN(5))
			if r.IntN(3) == 0 {
				key = fmt.Sprint("light", r.IntN(500))
			}
			truth[key]++
			k.add(key, func() int { return 0 })
		}
		entries := k.sorted()
		assert.LessOrEqual(t, len(entries), capacity)
		kept := map[string]*topEntry[int]{}
		for i, e := range entries {
			kept[e.key] = e
			assert.LessOrEqual(t, e.count-e.err, truth[e.key], e.key)
			assert.GreaterOrEqual(t, e.count, truth[e.key], e.key)
			if i > 0 {
				assert.GreaterOrEqual(t, entries[i-1].count-entries[i-1].err, e.count-e.err)
			}
			if len(truth) <= capacity {
				assert.Zero(t, e.err)
			}
		}
		for key, n := range truth {
			if n > total/capacity {
				assert.Contains(t, kept, key, "capacity %d: %s counted %d times is gone", capacity, key, n)
			}
		}
	}
}

// TestRefusal: a configuration that cannot be used refuses every command,
// as the shim does, and the report counts them refused.
func TestRefusal(t *testing.T) {
	home := testHome(t)
	j := testJudge(t, "", home)
	j.Refusal = "execgate: refused: the configuration cannot be used"
	v := j.Evaluate(Command{Text: "git status", Cwd: home})
	assert.Equal(t, policy.Deny, v.Decision)
	assert.Equal(t, j.Refusal, v.Reasons[0])
}

// TestOutsideTheProject: a command run outside its session's project is
// judged against the project, as the agents' hooks judge it.
func TestOutsideTheProject(t *testing.T) {
	home := testHome(t)
	project := filepath.Join(home, "work")
	other := filepath.Join(home, "other")
	require.NoError(t, mkdirs(project, other))
	j := testJudge(t, "", home)
	inside := j.Evaluate(Command{Text: "rm -r build", Cwd: other})
	outside := j.Evaluate(Command{Text: "rm -r build", Cwd: other, Root: project})
	assert.Equal(t, policy.NeedsReview, inside.Risk, inside.Reasons)
	assert.Equal(t, policy.Dangerous, outside.Risk, outside.Reasons)
}

// TestOutcomes: the confined tier's decision has its own count, and a
// decision the tally does not know is counted as a question, never as
// running unasked.
func TestOutcomes(t *testing.T) {
	var o Outcomes
	for _, d := range []policy.Decision{policy.Allow, policy.AskHuman, policy.Deny, decisionConfined, "something-new"} {
		o.add(d)
	}
	assert.Equal(t, Outcomes{Allow: 1, Confined: 1, Ask: 2, Deny: 1}, o)
}
