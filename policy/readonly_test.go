package policy

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// secretInvocations lists a command line for every subcommand of the safe
// table marked as printing secrets, at any depth, a glob key written as a
// word it matches.
func secretInvocations(prefix string, spec *safeSpec) []string {
	if spec.Secret != "" {
		return []string{prefix}
	}
	var out []string
	for sub, subSpec := range spec.Sub.all() {
		word := strings.NewReplacer("*", "x", "?", "x").Replace(sub)
		out = append(out, secretInvocations(strings.TrimSpace(prefix+" "+word), subSpec)...)
	}
	return out
}

// TestSecretPrintersNotCoverable: a wildcard allowlist entry for the
// program (`aws **`) covers its words, not the secrets it prints. Every
// subcommand the read-only models mark as printing secrets still asks
// under that entry, and each needs review at least.
func TestSecretPrintersNotCoverable(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000}
	n := 0
	for _, name := range tableKeys(e.rules.Safe) {
		allow := pattern.NewMatcher(entries(name+" **"), fakePath)
		cmds := secretInvocations(name, e.rules.Safe.get(name))
		// Spellings the models must see through: options before the
		// subcommand, a release track, a nested group, a verb only known
		// at run time.
		switch name {
		case "aws":
			cmds = append(cmds, "aws --region us-east-1 secretsmanager get-secret-value --secret-id x",
				"aws ssm get-parameter --name /db/pass --with-decryption", "aws secretsmanager $VERB --secret-id x")
		case "gcloud":
			cmds = append(cmds, "gcloud beta auth print-access-token", "gcloud secrets versions access latest --secret x")
		case "az":
			cmds = append(cmds, "az storage account keys list -n s", "az webapp config appsettings list -g rg -n app")
		case "kubectl":
			cmds = append(cmds, "kubectl get secret db -o yaml", "kubectl get secrets,configmaps -o yaml", "kubectl get -n x secret.v1 db -o json")
		}
		for _, cmd := range cmds {
			n++
			res := e.Evaluate(Request{Command: cmd, Cwd: testWorkspace, Home: testHome, Policy: pol, Allow: allow})
			assert.NotEqual(t, Safe, res.Risk, "%q: %s", cmd, explain(res))
			assert.NotEqual(t, Allow, res.Decision, "%q is allowed by %s **: %s", cmd, name, explain(res))
		}
	}
	assert.GreaterOrEqual(t, n, 60)
}

// TestWorkspaceRunnerSwitch: running the workspace's own code asks by
// default and runs under autoAllowWorkspaceRunners, unless something else
// in the command needs review (a runner with a program in an option, a
// makefile from elsewhere, a dangerous variable, a second command).
func TestWorkspaceRunnerSwitch(t *testing.T) {
	e := testEngine(t)
	off := config.BuiltinPolicy()
	on := off
	on.AutoAllowWorkspaceRunners = true
	for _, c := range []struct {
		command string
		off, on Decision
	}{
		{"npm test", AskHuman, Allow},
		{"npm run build", AskHuman, Allow},
		{"pnpm test", AskHuman, Allow},
		{"yarn test", AskHuman, Allow},
		{"go test ./...", AskHuman, Allow},
		{"go vet ./...", AskHuman, Allow},
		{"cargo test", AskHuman, Allow},
		{"cargo check", AskHuman, Allow},
		{"make", AskHuman, Allow},
		{"make test", AskHuman, Allow},
		{"just test", AskHuman, Allow},
		{"pytest -x tests/", AskHuman, Allow},
		{"python -m pytest", AskHuman, Allow},
		{"python manage.py test", AskHuman, Allow},
		{"go test ./... && git status", AskHuman, Allow},
		{"git status", Allow, Allow},
		{"go test -exec ./wrap.sh ./...", AskHuman, AskHuman},
		{"make -f /tmp/other.mk", AskHuman, AskHuman},
		{"make SHELL=/bin/sh test", AskHuman, AskHuman},
		{"npm test && rm notes.txt", AskHuman, AskHuman},
		{"npm test > ~/.bashrc", AskHuman, AskHuman},
		{"LD_PRELOAD=./x.so npm test", AskHuman, AskHuman},
		{"python manage.py runserver", AskHuman, AskHuman},
		{"python -m http.server", AskHuman, AskHuman},
		{"npm install", AskHuman, AskHuman},
		{"./node_modules/.bin/jest", AskHuman, AskHuman},
		{"bash -c \"$CMD\" && npm test", AskHuman, AskHuman},
		// uv run, poetry run: the runner class when the command they run
		// is one; the command itself is judged (issue 14).
		{"uv run pytest -q", AskHuman, Allow},
		{"uv run python -m pytest", AskHuman, Allow},
		{"poetry run pytest", AskHuman, Allow},
		{"uv run --python 3.12 make test", AskHuman, Allow},
		{"uv run rm -rf ~", AskHuman, AskHuman},
		{"uv run myproject-cli", AskHuman, AskHuman},
		{"uv run --with rich pytest", AskHuman, AskHuman},
		{"uv --directory /etc run pytest", AskHuman, AskHuman},
		{"uv run --project=../other pytest", AskHuman, AskHuman},
		{"uv run --project ./sub pytest", AskHuman, Allow},
		{"poetry -C /opt/p run pytest", AskHuman, AskHuman},
		{"uv run script.py", AskHuman, AskHuman},
		{"npx --no-install jest", AskHuman, AskHuman},
		{"npx -y jest", AskHuman, AskHuman},
	} {
		for _, pc := range []struct {
			pol  config.Policy
			want Decision
		}{{off, c.off}, {on, c.on}} {
			res := e.Evaluate(Request{Command: c.command, Cwd: testWorkspace, Home: testHome, Policy: pc.pol})
			assert.Equal(t, pc.want, res.Decision, "%q with autoAllowWorkspaceRunners=%t: %s", c.command, pc.pol.AutoAllowWorkspaceRunners, explain(res))
		}
	}
}

// TestReadOnlyCorpusFigures reports how many lines of the read-only corpora
// (testdata/corpus/readonly_*.tsv) are safe, in both directions: the
// figure for prompt fatigue is the share of the read-only lines that are
// safe (TestCorpus checks each line).
func TestReadOnlyCorpusFigures(t *testing.T) {
	files, err := filepath.Glob("../testdata/corpus/readonly_*.tsv")
	require.NoError(t, err)
	e := testEngine(t)
	want := map[Risk]int{}
	safe := map[Risk]int{}
	for _, file := range files {
		readTSV(t, file, func(line int, cols []string) {
			require.Len(t, cols, 4, "%s:%d", file, line)
			risk, err := ParseRisk(cols[0])
			require.NoError(t, err)
			var cmd string
			require.NoError(t, json.Unmarshal([]byte(cols[1]), &cmd))
			want[risk]++
			if analyzeForTest(e, cmd).Risk == Safe {
				safe[risk]++
			}
		})
	}
	t.Logf("read-only corpora: %d lines meant safe, %d of them safe; %d meant needs-review, %d meant dangerous, %d of those safe",
		want[Safe], safe[Safe], want[NeedsReview], want[Dangerous], safe[NeedsReview]+safe[Dangerous])
	assert.GreaterOrEqual(t, want[Safe]+want[NeedsReview]+want[Dangerous], 500, "several hundred lines, both directions")
	assert.Zero(t, safe[NeedsReview]+safe[Dangerous], "no line meant to need review is safe")
}
