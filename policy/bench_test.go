package policy

import (
	"fmt"
	"testing"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// thousandEntries is an allowlist of 1,000 patterns over 50 programs, the
// shape a long-lived allow-always list takes.
func thousandEntries() []pattern.Entry {
	var out []pattern.Entry
	for p := 0; p < 50; p++ {
		for s := 0; s < 20; s++ {
			out = append(out, pattern.Entry{Pattern: fmt.Sprintf("tool%d sub%d **", p, s)})
		}
	}
	out[500] = pattern.Entry{Pattern: "git status"}
	return out
}

func benchEvaluate(b *testing.B, command string, allow []pattern.Entry) {
	e := testEngine(b)
	req := Request{
		Command: command, Cwd: testWorkspace, Home: testHome,
		Policy: config.BuiltinPolicy(),
		Allow:  pattern.NewMatcher(allow, fakePath),
		Deny:   pattern.NewMatcher(entries("terraform destroy **"), fakePath),
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.Evaluate(req)
	}
}

// BenchmarkEvaluateTypical is the budget: a typical command with
// 1,000 allowlist entries, under 50 µs.
func BenchmarkEvaluateTypical(b *testing.B) {
	benchEvaluate(b, "git status", thousandEntries())
}

// BenchmarkEvaluatePipeline is a longer agent command.
func BenchmarkEvaluatePipeline(b *testing.B) {
	benchEvaluate(b, `cd src && grep -rn "TODO" --include='*.go' . | sort | uniq -c | head -20 && git diff --stat`, thousandEntries())
}

// BenchmarkEvaluateEnvelope is a Claude Code style envelope.
func BenchmarkEvaluateEnvelope(b *testing.B) {
	benchEvaluate(b, `source /home/agent/.claude/shell-snapshots/snapshot-bash-1.sh 2>/dev/null || true && eval 'npm run build' < /dev/null && pwd -P >| /tmp/claude-ab12-cwd`, thousandEntries())
}

// BenchmarkFirstMatch is the per-process cost of a 1,000-entry allowlist:
// building the index and compiling the candidates on the first match.
func BenchmarkFirstMatch(b *testing.B) {
	list := thousandEntries()
	argv := []string{"git", "status"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := pattern.NewMatcher(list, fakePath).Match(argv); !ok {
			b.Fatal("git status should match")
		}
	}
}

// BenchmarkNewEngine is the per-process cost of loading the rule table.
func BenchmarkNewEngine(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewEngine(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluateReadOnlyModel is inspection through the read-only models
// of issue 14: a gcloud query under a release track and command groups, and
// an aws query whose every parameter is checked.
func BenchmarkEvaluateReadOnlyModel(b *testing.B) {
	benchEvaluate(b, `gcloud beta compute instances list --format=json && aws ec2 describe-instances --filters Name=tag:env,Values=prod --query 'Reservations[].Instances[].InstanceId' --output text`, thousandEntries())
}
