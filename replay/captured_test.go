package replay

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/policy"
)

// script is the session the e2e test's mock model played for each agent
// (e2e/transcripts_test.go), with what the default policy does with each
// command.
var script = []struct {
	command  string
	decision policy.Decision
	risk     policy.Risk
}{
	{"git status", policy.Allow, policy.Safe},
	{"ls -la", policy.Allow, policy.Safe},
	{"cd sub && pwd", policy.Allow, policy.Safe},
	{"git log --oneline -1", policy.Allow, policy.Safe},
	{"echo hi > notes.txt", policy.AskHuman, policy.NeedsReview},
	{"rm -rf ~/precious", policy.AskHuman, policy.Dangerous},
	{"for f in *; do\n  echo \"$f\"\ndone", policy.Allow, policy.Safe},
	{"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\nEOF", policy.AskHuman, policy.NeedsReview},
}

// TestCapturedTranscripts replays the transcripts the real Claude Code,
// Codex and Gemini CLI wrote in the e2e run: every command the model sent
// is found, in order, in the directory it ran in, under its agent's
// policy, and judged as the hook judged it then.
func TestCapturedTranscripts(t *testing.T) {
	dir, home := materialize(t)
	work := filepath.Join(home, "work")
	for _, tc := range []struct {
		agent, policy string
		applyPatch    bool // Codex applies it itself: skipped
		followsCd     bool // Claude Code records the directory cd left
	}{
		{"claude", policy.AgentClaudeCode, false, true},
		{"codex", policy.AgentCodex, true, false},
		{"gemini", policy.AgentGeminiCLI, false, false},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			f := replayPaths(t, testJudge(t, "", home), filepath.Join(dir, "captured", tc.agent))
			assert.Empty(t, f.problems)
			want := script
			if tc.applyPatch {
				want = script[:len(script)-1]
				assert.Equal(t, []Skip{{Why: skipApplyPatch, Count: 1}}, f.report.Skipped)
			}
			require.Len(t, f.commands, len(want), "%q", f.texts())
			for i, w := range want {
				c, v := f.commands[i], f.verdicts[i]
				assert.Equal(t, w.command, c.Text)
				assert.Equal(t, tc.policy, v.Agent, c.Text)
				cwd := work
				if tc.followsCd && i > 2 {
					cwd = filepath.Join(work, "sub")
				}
				assert.Equal(t, cwd, v.Cwd, c.Text)
				assert.Empty(t, v.Unknown, c.Text)
				assert.Equal(t, w.decision, v.Decision, c.Text)
				assert.Equal(t, w.risk, v.Risk, c.Text)
				assert.False(t, c.Time.IsZero(), c.Text)
				assert.NotEmpty(t, c.Session, c.Text)
				assert.Equal(t, c.Session, f.commands[0].Session, "one session")
			}
			assert.Equal(t, 1, f.report.Sessions.Count)
			assert.Equal(t, 1, f.report.Dangerous.Stopped)
		})
	}
}

// TestGoneDirectories: where the recorded directory no longer exists, the
// command is judged in an unknown one, and the report says so. A
// relative write that was judged in its workspace is then not proven to
// stay in it.
func TestGoneDirectories(t *testing.T) {
	if _, err := os.Stat(fixtureHome); err == nil {
		t.Skipf("%s exists on this machine", fixtureHome)
	}
	home := t.TempDir()
	f := replayPaths(t, testJudge(t, "", home), filepath.Join(fixtures(t), "captured", "claude"))
	require.Len(t, f.commands, len(script))
	for _, v := range f.verdicts {
		assert.Equal(t, UnknownGone, v.Unknown)
		assert.Empty(t, v.Cwd)
	}
	assert.Equal(t, UnknownDirectory{Gone: len(script)}, f.report.UnknownDirectory)
}

// TestTrajectories replays the mini-swe-agent and SWE-agent trajectories
// written by hand in their documented formats (testdata/replay/README.md).
func TestTrajectories(t *testing.T) {
	dir, home := materialize(t)
	work := filepath.Join(home, "work")
	src := filepath.Join(work, "src")
	for _, tc := range []struct {
		file     string
		commands []string
		cwds     []string // "" for an unknown directory
	}{
		{"mini-swe-agent/parser-fix.traj.json", []string{
			"ls -la",
			"grep -rn 'def parse' src/ | head -20",
			"sed -i 's/return None/return []/' src/parser.py",
			"python3 -m pytest -q tests/test_parser.py",
			"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
		}, []string{work, work, work, work, work}},
		// v1: the message with two ```bash blocks ran nothing.
		{"mini-swe-agent/readme-fix-v1.traj.json", []string{
			"head -20 README.md",
			"sed -i 's/pip install tool/pip install example-tool/' README.md && grep -n install README.md",
			"echo MINI_SWE_AGENT_FINAL_OUTPUT && git add -A && git diff --cached",
		}, []string{"", "", ""}},
		// Each step runs where the one before left: the first, nowhere known.
		{"swe-agent/parser-fix.traj", []string{
			"ls -F",
			`find_file "parser.py" src`,
			"cd src",
			"edit 42:42\n        return []\nend_of_edit",
			"python -m pytest ../tests/test_parser.py -q",
			"submit",
		}, []string{"", work, work, src, src, src}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f := replayPaths(t, testJudge(t, "", home), filepath.Join(dir, tc.file))
			assert.Empty(t, f.problems)
			assert.Equal(t, tc.commands, f.texts())
			for i, v := range f.verdicts {
				if i < len(tc.cwds) {
					assert.Equal(t, tc.cwds[i], v.Cwd, f.commands[i].Text)
				}
				assert.Equal(t, "default", v.Agent)
			}
			assert.Equal(t, 1, f.report.Sessions.Count)
		})
	}
}
