package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// fakePath resolves bare names as if PATH held only /usr/bin.
func fakePath(name string) string { return "/usr/bin/" + name }

func entries(patterns ...string) []pattern.Entry {
	out := make([]pattern.Entry, len(patterns))
	for i, p := range patterns {
		out[i] = pattern.Entry{Pattern: p}
	}
	return out
}

// TestAllowlistTable runs testdata/corpus/allowlist.tsv: decisions under
// security=allowlist, ask=on-miss, autoAllowSafe=false.
func TestAllowlistTable(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000}
	n := 0
	for _, file := range []string{"allowlist.tsv", "smuggling.tsv"} {
		readTSV(t, "../testdata/corpus/"+file, func(line int, cols []string) {
			require.Len(t, cols, 4, "%s:%d", file, line)
			var patterns []string
			var command string
			require.NoError(t, json.Unmarshal([]byte(cols[0]), &patterns), "%s:%d", file, line)
			require.NoError(t, json.Unmarshal([]byte(cols[1]), &command), "%s:%d", file, line)
			res := e.Evaluate(Request{
				Command: command, Cwd: testWorkspace, Home: testHome, Policy: pol,
				Allow: pattern.NewMatcher(entries(patterns...), fakePath),
			})
			want := Decision(cols[2])
			if want == "ask" {
				want = AskHuman
			}
			n++
			assert.Equal(t, want, res.Decision, "%s:%d: %v %q (%s)\n\t%s", file, line, patterns, command, cols[3], explain(res))
		})
	}
	assert.GreaterOrEqual(t, n, 40)
}

// TestDecisionTable covers every branch of the decision under the
// policy, for a safe, a needs-review and a dangerous command.
func TestDecisionTable(t *testing.T) {
	e := testEngine(t)
	type row struct {
		security config.Security
		ask      config.Ask
		auto     bool
		allow    []string
		deny     []string
		command  string
		want     Decision
	}
	rows := []row{
		{config.SecurityAllowlist, config.AskOnMiss, true, nil, nil, "ls -la", Allow},
		{config.SecurityAllowlist, config.AskOnMiss, false, nil, nil, "ls -la", AskHuman},
		{config.SecurityAllowlist, config.AskOff, false, nil, nil, "ls -la", Deny},
		{config.SecurityAllowlist, config.AskAlways, true, nil, nil, "ls -la", AskHuman},
		{config.SecurityAllowlist, config.AskOnMiss, true, nil, nil, "npm test", AskHuman},
		{config.SecurityAllowlist, config.AskOnMiss, true, []string{"npm test"}, nil, "npm test", Allow},
		{config.SecurityAllowlist, config.AskOnMiss, true, []string{"npm **"}, []string{"npm publish"}, "npm publish", Deny},
		{config.SecurityAllowlist, config.AskOnMiss, true, nil, []string{"ls"}, "ls -la", Deny},
		{config.SecurityAllowlist, config.AskOnMiss, true, nil, []string{"terraform destroy **"}, "bash -c 'terraform destroy -auto-approve'", Deny},
		{config.SecurityAllowlist, config.AskOff, true, nil, nil, "rm -rf /", Deny},
		{config.SecurityAllowlist, config.AskOnMiss, true, []string{"rm **"}, nil, "rm -rf /", AskHuman},
		{config.SecurityAllowlist, config.AskOnMiss, true, []string{"rm -rf /"}, nil, "rm -rf /", Allow},
		{config.SecurityDeny, config.AskOnMiss, true, []string{"ls"}, nil, "ls", Deny},
		{config.SecurityFull, config.AskOnMiss, true, nil, nil, "rm -rf /", Allow},
		{config.SecurityFull, config.AskAlways, true, nil, nil, "ls", AskHuman},
		{config.SecurityFull, config.AskOnMiss, true, nil, []string{"rm **"}, "rm -rf /", Deny},
		{config.SecurityAllowlist, config.AskOnMiss, true, []string{"**"}, nil, "curl x | sh", AskHuman},
		// A query gh sends to another host: no wildcard grants it.
		{config.SecurityAllowlist, config.AskOnMiss, true, []string{"gh **"}, nil, "gh pr list -R ghe.example.com/o/r", AskHuman},
		{config.SecurityAllowlist, config.AskOnMiss, true, []string{"gh **"}, nil, "gh pr list -R o/r", Allow},
		{config.SecurityAllowlist, config.AskOnMiss, true, nil, nil, "echo 'unterminated", AskHuman},
		{config.SecurityFull, config.AskOnMiss, true, nil, nil, "", Allow},
	}
	for _, r := range rows {
		name := fmt.Sprintf("%s/%s/auto=%t/%q", r.security, r.ask, r.auto, r.command)
		t.Run(name, func(t *testing.T) {
			res := e.Evaluate(Request{
				Command: r.command, Cwd: testWorkspace, Home: testHome,
				Policy: config.Policy{Security: r.security, Ask: r.ask, AskFallback: config.SecurityDeny, TimeoutMs: 1, AutoAllowSafe: r.auto},
				Allow:  pattern.NewMatcher(entries(r.allow...), fakePath),
				Deny:   pattern.NewMatcher(entries(r.deny...), fakePath),
			})
			assert.Equal(t, r.want, res.Decision, explain(res))
		})
	}
}

// TestExplanationsNeverEmpty: every segment that is not safe says why.
func TestExplanationsNeverEmpty(t *testing.T) {
	e := testEngine(t)
	for _, c := range loadCorpus(t) {
		res := analyzeForTest(e, c.command)
		for _, s := range res.Segments {
			if s.Risk != Safe {
				assert.NotEmpty(t, s.Reasons, "%s:%d segment %q", c.file, c.line, s.Text)
			}
		}
	}
}

// TestDcgAgreement measures how execgate's risk agrees with the verdicts
// of a peer project's public corpus (shared/corpora/dcg.tsv): a command
// dcg denies must not be safe (and ideally is dangerous); one it allows
// should not be dangerous. The figures go in the README; the floors keep
// them from sliding.
func TestDcgAgreement(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "corpora", "dcg.tsv")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("peer corpus not present: %v", err)
	}
	e := testEngine(t)
	var deny, denyNotSafe, denyDangerous, allow, allowNotDangerous int
	readTSV(t, path, func(line int, cols []string) {
		require.Len(t, cols, 3, "dcg.tsv:%d", line)
		var command string
		require.NoError(t, json.Unmarshal([]byte(cols[2]), &command), "dcg.tsv:%d", line)
		res := analyzeForTest(e, command)
		switch cols[0] {
		case "deny":
			deny++
			if res.Risk != Safe {
				denyNotSafe++
			} else {
				t.Logf("dcg denies, execgate calls safe: %q", command)
			}
			if res.Risk == Dangerous {
				denyDangerous++
			}
		case "allow":
			allow++
			if res.Risk != Dangerous {
				allowNotDangerous++
			} else {
				t.Logf("dcg allows, execgate calls dangerous: %q: %s", command, strings.Join(res.Reasons, "; "))
			}
		}
	})
	pct := func(a, b int) float64 { return 100 * float64(a) / float64(b) }
	t.Logf("dcg deny  (%d): not safe %d (%.1f%%), dangerous %d (%.1f%%)", deny, denyNotSafe, pct(denyNotSafe, deny), denyDangerous, pct(denyDangerous, deny))
	t.Logf("dcg allow (%d): not dangerous %d (%.1f%%)", allow, allowNotDangerous, pct(allowNotDangerous, allow))
	assert.Equal(t, deny, denyNotSafe, "every command dcg denies must be at least needs-review")
	assert.GreaterOrEqual(t, pct(denyDangerous, deny), 90.0)
	assert.GreaterOrEqual(t, pct(allowNotDangerous, allow), 95.0)
}

// TestShellfirmAgreement measures execgate against the labels of a second
// peer corpus (shared/corpora/shellfirm.tsv): BLOCK (shellfirm's High and
// Critical checks) must not be safe and should be dangerous; ASK must not be
// safe; ALLOW (no shellfirm pattern matches, often a typo) should not be
// dangerous. The figures go in the README; the floors keep them from sliding.
func TestShellfirmAgreement(t *testing.T) {
	path := sharedCorpus("shellfirm.tsv")
	if path == "" {
		t.Skip("peer corpus shellfirm.tsv not present")
	}
	e := testEngine(t)
	count := map[string]map[Risk]int{}
	readTSV(t, path, func(line int, cols []string) {
		require.Len(t, cols, 3, "shellfirm.tsv:%d", line)
		var command string
		require.NoError(t, json.Unmarshal([]byte(cols[2]), &command), "shellfirm.tsv:%d", line)
		res := analyzeForTest(e, command)
		if count[cols[0]] == nil {
			count[cols[0]] = map[Risk]int{}
		}
		count[cols[0]][res.Risk]++
		switch {
		case cols[0] != "ALLOW" && res.Risk == Safe:
			t.Logf("shellfirm %s, execgate calls safe: %q", cols[0], command)
		case cols[0] == "BLOCK" && res.Risk != Dangerous:
			t.Logf("shellfirm BLOCK, execgate calls %s: %q", res.Risk, command)
		case cols[0] == "ALLOW" && res.Risk == Dangerous:
			t.Logf("shellfirm ALLOW, execgate calls dangerous: %q: %s", command, strings.Join(res.Reasons, "; "))
		}
	})
	pct := func(label string, r Risk) float64 {
		total := 0
		for _, n := range count[label] {
			total += n
		}
		return 100 * float64(count[label][r]) / float64(total)
	}
	t.Logf("shellfirm BLOCK: dangerous %.1f%%, safe %.1f%%", pct("BLOCK", Dangerous), pct("BLOCK", Safe))
	t.Logf("shellfirm ASK: safe %.1f%%", pct("ASK", Safe))
	t.Logf("shellfirm ALLOW: dangerous %.1f%%", pct("ALLOW", Dangerous))
	assert.Zero(t, count["BLOCK"][Safe], "a command shellfirm blocks must not be safe")
	assert.Zero(t, count["ASK"][Safe], "a command shellfirm asks about must not be safe")
	assert.GreaterOrEqual(t, pct("BLOCK", Dangerous), 85.0, "issue 14's goal: peer refuses → dangerous")
	assert.LessOrEqual(t, pct("ALLOW", Dangerous), 15.0, "ALLOW lines are regex negatives, not harmless commands; keep the drift visible")
}

// TestInvalidDenylistDenies: a denylist entry that does not compile
// cannot be checked, so nothing is allowed while it is there.
func TestInvalidDenylistDenies(t *testing.T) {
	e := testEngine(t)
	res := e.Evaluate(Request{
		Command: "ls", Cwd: testWorkspace, Home: testHome,
		Policy: config.Policy{Security: config.SecurityFull, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1, AutoAllowSafe: true},
		Deny:   pattern.NewMatcher(entries("rm [x"), fakePath),
	})
	assert.Equal(t, Deny, res.Decision)
	assert.Contains(t, strings.Join(res.Reasons, " "), `"rm [x"`)
}

// TestWorkspaceApartFromCwd: a command an agent runs in another directory
// than its session's is judged there, and against the session's workspace.
// Codex's exec_command with workdir=$HOME and `rm -r ./precious`, with
// `rm **` allowlisted: judged in the session's directory it was allowed,
// and deleted ~/precious.
func TestWorkspaceApartFromCwd(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	proj := testHome + "/proj"
	for _, tt := range []struct {
		cwd, workspace, command string
		want                    Decision
	}{
		{proj, "", "rm -r ./precious", Allow},                   // in the project: the allowlist applies
		{testHome, proj, "rm -r ./precious", AskHuman},          // ~/precious, outside the project
		{testHome, proj, "rm -r proj/build", Allow},             // back inside it
		{proj + "/sub", proj, "rm -r ../../precious", AskHuman}, // climbs out of it
		{proj, "", "rm -r ../precious", AskHuman},               // Workspace "" is Cwd, as before
		{"/", proj, "rm -r etc/x", AskHuman},                    // a system directory, whatever the workspace
	} {
		t.Run(tt.cwd+"|"+tt.workspace+"|"+tt.command, func(t *testing.T) {
			res := e.Evaluate(Request{
				Command: tt.command, Cwd: tt.cwd, Workspace: tt.workspace, Home: testHome, Policy: pol,
				Allow: pattern.NewMatcher(entries("rm **"), fakePath),
			})
			assert.Equal(t, tt.want, res.Decision, explain(res))
		})
	}
}

// TestReasonsQuoteWordsAsWritten: a reason quotes a word with an unknown
// expansion as it was written, not as the "$?" stand-in the analysis uses,
// which reads like the exit status; the stand-in stays in Argv, which the
// allowlist's patterns match.
func TestReasonsQuoteWordsAsWritten(t *testing.T) {
	e := testEngine(t)
	for _, tt := range []struct{ command, shown, argv string }{
		{`echo hi > "$SNAPSHOT_FILE"`, "`\"$SNAPSHOT_FILE\"`", "echo hi"},
		{`source "$SNAPSHOT_FILE"`, "`\"$SNAPSHOT_FILE\"`", "source $?"},
		{`cp a "$(mktemp)"`, "`\"$(mktemp)\"`", "cp a $?"},
		{`bash -c "$SCRIPT"`, "`\"$SCRIPT\"`", "bash -c $?"},
	} {
		t.Run(tt.command, func(t *testing.T) {
			res := e.Analyze(Request{Command: tt.command, Cwd: testWorkspace, Home: testHome})
			text := strings.Join(res.Reasons, "\n")
			assert.Contains(t, text, tt.shown)
			assert.NotContains(t, text, "`$?`")
			last := res.Segments[len(res.Segments)-1]
			assert.Equal(t, tt.argv, strings.Join(last.Argv, " "))
		})
	}
}
