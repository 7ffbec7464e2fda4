package policy

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueryModelsAreAllowOnly is the property for the models whose safe
// verdict reaches the network with the user's credentials ("query":
// gh): every leaf is allow-only, and a random option a leaf does not
// list is never safe, before the subcommand or after it.
func TestQueryModelsAreAllowOnly(t *testing.T) {
	e := testEngine(t)
	r := rand.New(rand.NewPCG(42, 43))
	var query []string
	for name, spec := range e.rules.Safe.all() {
		if !spec.Query {
			continue
		}
		query = append(query, name)
		leaves := hostOnlyLeaves(name, name, spec, nil)
		for _, l := range leaves {
			require.NotEmpty(t, l.only, "%q runs with the network and credentials: its model must list the options it allows", l.cmd)
		}
		requireUnlistedOptionsAsk(t, e, r, name, leaves)
	}
	assert.Equal(t, []string{"gh"}, query, "the query models")
}

// TestGhUnlistedOptionsAsk: options of gh's read-only subcommands that its
// model leaves out (they write a file, name a host, print a token or are
// not gh's), each of which the old model let run unconfined with the
// user's token; and repositories and URLs on another host.
func TestGhUnlistedOptionsAsk(t *testing.T) {
	e := testEngine(t)
	cases := map[string][]string{ // a safe line → what makes it ask
		"gh pr list": {"--hostname=ghe.example", "--no-such-option", "-Z", "-R ghe.example/o/r",
			"--repo=https://ghe.example/o/r", "-R git@ghe.example:o/r", "--repo \"$R\""},
		"gh pr view 12":     {"--web", "-w", "--output=./x", "--no-such-option"},
		"gh pr diff 12":     {"--hostname ghe.example", "--no-such-option"},
		"gh run view 123":   {"--log-file=./x", "-R evil.example/o/r", "--no-such-option"},
		"gh auth status":    {"-h ghe.example", "--hostname=ghe.example", "-t", "--show-token", "--no-such-option"},
		"gh repo view":      {"ghe.example/o/r", "https://ghe.example/o/r", "--no-such-option"},
		"gh issue view":     {"https://ghe.example/o/r/issues/3", "--no-such-option"},
		"gh search code x":  {"--hostname=ghe.example", "-R ghe.example/o/r", "--no-such-option"},
		"gh status":         {"--hostname=ghe.example", "--no-such-option"},
		"gh release list":   {"--no-such-option", "-R https://evil.example/o/r"},
		"gh workflow view":  {"--web", "--no-such-option"},
		"gh label list":     {"--no-such-option"},
		"gh run list -L 5":  {"-w ci.yml", "--no-such-option"},
		"gh issue list":     {"--no-such-option", "-R ghe.example/o/r"},
		"gh search prs foo": {"--web", "--no-such-option"},
	}
	for line, extra := range cases {
		res := analyzeForTest(e, line)
		require.Equal(t, Safe, res.Risk, "%q: %s", line, explain(res))
		for _, x := range extra {
			cmd := line + " " + x
			res := analyzeForTest(e, cmd)
			assert.NotEqual(t, Safe, res.Risk, "%q must ask: %s", cmd, explain(res))
		}
	}
}

// TestGhCommonFormsSafe: the forms agents use most stay safe, their
// values skipped rather than read as operands.
func TestGhCommonFormsSafe(t *testing.T) {
	e := testEngine(t)
	for _, cmd := range []string{
		"gh pr list --state open --limit 20", "gh pr list -L5 -s merged --json number,title",
		"gh pr view 12 --comments", "gh pr view --comments 12", "gh pr view 12 -c",
		"gh pr view https://github.com/o/r/pull/12", "gh pr diff 12 --name-only", "gh pr diff 12 --color never",
		"gh pr checks 12", "gh pr checks 12 --required", "gh pr status",
		"gh issue view 3 --json title,body", "gh issue list --label bug --state all -L 50",
		"gh run view 123 --log-failed", "gh run view 123 --log", "gh run view --job 456 --log",
		"gh run list -L 5", "gh run list --workflow ci.yml --branch main", "gh run list -a -L 3",
		"gh repo view --json name -q .name", "gh repo view cli/cli", "gh repo view github.com/cli/cli",
		"gh search prs --author @me --state open", "gh search code 'func main' --language go -R o/r",
		"gh search repos --owner cli --include-forks only", "gh search issues crash --repo o/r",
		"gh release view v1.0 -R o/r", "gh release list --limit 5", "gh label list --sort name",
		"gh workflow list --all", "gh workflow view ci.yml --yaml --ref main",
		"gh auth status", "gh auth status --active", "gh status -o myorg", "gh --help",
		"gh pr list --repo=o/r",
	} {
		res := analyzeForTest(e, cmd)
		assert.Equal(t, Safe, res.Risk, "%q: %s", cmd, explain(res))
	}
}

// TestGhRepoHost names the host a repository name or URL sends gh to.
func TestGhRepoHost(t *testing.T) {
	for name, want := range map[string]string{
		"o/r": "", "r": "", "github.com/o/r": "", "GitHub.com/o/r": "",
		"https://github.com/o/r/pull/1": "", "https://www.github.com/o/r": "",
		"ghe.example/o/r": "ghe.example", "https://ghe.example/o/r": "ghe.example",
		"http://github.com.evil.example/o/r": "github.com.evil.example", "git@ghe.example:o/r": "the host of an SSH address",
		"a/b/c/d": "a", "//": "a host that cannot be read from it", "/o/r": "a host that cannot be read from it", "https://": "a host that cannot be read from it",
	} {
		assert.Equal(t, want, ghRepoHost(name), name)
	}
}

// FuzzGhRepoHost: any name is judged without panicking, and a name that
// names no host other than GitHub's is OWNER/REPO, REPO, or GitHub's.
func FuzzGhRepoHost(f *testing.F) {
	for _, s := range []string{"o/r", "ghe.example/o/r", "https://github.com/o/r", "git@h:o/r", "::", "a/b/c/d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ghRepoHost(name) != "" || strings.Contains(name, "://") {
			return
		}
		parts := strings.Split(name, "/")
		if len(parts) > 2 {
			assert.Contains(t, []string{"github.com", "www.github.com"}, strings.ToLower(parts[0]), name)
		}
	})
}
