package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gobwas/glob"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hasRule reports whether any segment of res carries a reason from rule id
// at the rule's own risk (not the weaker "might" reason for unknown
// arguments). A zero risk accepts any.
func hasRule(res Result, id string, risk Risk) bool {
	for _, s := range res.Segments {
		for _, r := range s.Reasons {
			if r.Rule == id && (risk == Safe || r.Risk == risk) {
				return true
			}
		}
	}
	return false
}

func explain(res Result) string {
	var parts []string
	for _, s := range res.Segments {
		for _, r := range s.Reasons {
			parts = append(parts, fmt.Sprintf("%s[%s]", r.Text, r.Rule))
		}
	}
	return strings.Join(parts, " | ")
}

// TestRuleExamples checks the examples written beside every rule: each
// match example fires the rule, each notMatch example does not.
func TestRuleExamples(t *testing.T) {
	e := testEngine(t)
	rf := e.rules
	for _, ru := range rf.Rules {
		require.NotEmpty(t, ru.Match, "rule %s has no match example", ru.ID)
		for _, cmd := range ru.Match {
			res := analyzeForTest(e, cmd)
			assert.True(t, hasRule(res, ru.ID, ru.Risk), "rule %s should match %q: %s", ru.ID, cmd, explain(res))
		}
		for _, cmd := range ru.NotMatch {
			res := analyzeForTest(e, cmd)
			assert.False(t, hasRule(res, ru.ID, ru.Risk), "rule %s should not match %q", ru.ID, cmd)
		}
	}
	for _, cr := range rf.Code {
		require.NotEmpty(t, cr.Match, "code rule %s has no match example", cr.ID)
		for _, cmd := range cr.Match {
			res := analyzeForTest(e, cmd)
			assert.True(t, hasRule(res, cr.ID, Safe), "code rule %s should match %q: %s", cr.ID, cmd, explain(res))
		}
		for _, cmd := range cr.NotMatch {
			res := analyzeForTest(e, cmd)
			assert.False(t, hasRule(res, cr.ID, Safe), "code rule %s should not match %q: %s", cr.ID, cmd, explain(res))
		}
	}
	for _, d := range rf.Decoders {
		for _, cmd := range d.Match {
			a := &analyzer{r: rf}
			words := splitForTest(cmd)
			assert.True(t, a.decodes(programName(words[0].text), words), "decoder %s should match %q", d.ID, cmd)
		}
		for _, cmd := range d.NotMatch {
			a := &analyzer{r: rf}
			words := splitForTest(cmd)
			assert.False(t, a.decodes(programName(words[0].text), words), "decoder %s should not match %q", d.ID, cmd)
		}
	}
}

// TestWrapperExamples checks that the wrapped command is what gets
// classified: every match example is as dangerous as what it wraps.
func TestWrapperExamples(t *testing.T) {
	e := testEngine(t)
	for name, w := range e.rules.Wrappers.all() {
		require.NotEmpty(t, w.Match, "wrapper %s has no example", name)
		for _, cmd := range w.Match {
			res := analyzeForTest(e, cmd)
			assert.Equal(t, Dangerous, res.Risk, "wrapper %s: %q: %s", name, cmd, explain(res))
		}
		for _, cmd := range w.NotMatch {
			res := analyzeForTest(e, cmd)
			assert.NotEqual(t, Dangerous, res.Risk, "wrapper %s: %q: %s", name, cmd, explain(res))
		}
	}
}

// TestSafeProgramsAreSafe checks that every program in the safe table is
// safe on its own, run by name (subcommand tables: with each subcommand;
// a glob key such as describe-* with a word it matches), and that every
// subcommand marked as printing secrets or running the workspace's code is
// not safe.
func TestSafeProgramsAreSafe(t *testing.T) {
	e := testEngine(t)
	count := 0
	for name, spec := range e.rules.Safe.all() {
		count++
		for _, inv := range safeInvocations(shellQuote(name), spec) {
			cmd := inv.cmd
			switch {
			case name == "sed" || strings.HasSuffix(name, "awk"):
				cmd += " 1" // a program is required
			case e.rules.envPrinters.has(name):
				cmd += " -e" // alone, set prints every variable
			case inv.spec.Check == "docker-inspect":
				cmd += " --format '{{.State.Status}}' app"
			case inv.spec.Check == "local-chart":
				cmd += " ./chart"
			case inv.spec.Check == "fmt-check":
				cmd += " -check"
			case inv.spec.Check == "systemctl-show":
				cmd += " -p ActiveState nginx"
			}
			res := analyzeForTest(e, cmd)
			if inv.spec.Secret != "" || inv.spec.Runner {
				assert.NotEqual(t, Safe, res.Risk, "%q: %s", cmd, explain(res))
				continue
			}
			assert.Equal(t, Safe, res.Risk, "%q: %s", cmd, explain(res))
		}
	}
	assert.GreaterOrEqual(t, count, 40, "the issue asks for at least 40 safe programs")
}

// safeInvocation is one command line of a safe model's leaf.
type safeInvocation struct {
	cmd  string
	spec *safeSpec
}

// safeInvocations lists prefix with every leaf subcommand of spec, a glob
// key written as a word it matches.
func safeInvocations(prefix string, spec *safeSpec) []safeInvocation {
	if spec.Sub == nil {
		return []safeInvocation{{prefix, spec}}
	}
	var out []safeInvocation
	for sub, subSpec := range spec.Sub.all() {
		word := strings.NewReplacer("*", "x", "?", "x").Replace(sub)
		out = append(out, safeInvocations(strings.TrimSpace(prefix+" "+word), subSpec)...)
	}
	return out
}

// splitForTest turns a simple command line into known words.
func splitForTest(cmd string) []word {
	var out []word
	for _, f := range strings.Fields(cmd) {
		out = append(out, word{text: f, known: true})
	}
	return out
}

// TestRequiredText checks the pieces of text the path sets are filtered by
// before their globs are compiled.
func TestRequiredText(t *testing.T) {
	for pat, want := range map[string]string{
		"~/.ssh/**":                "~/.ssh/",
		"**/.env.*":                "/.env.",
		"**/id_rsa":                "/id_rsa",
		"/dev/sd*":                 "/dev/sd",
		"/etc/cron*/**":            "/etc/cron",
		"~/.claude/settings*.json": "~/.claude/settings",
		"/dev/x[ab]cdefghijk":      "/dev/x",
		"[ab]/etc/passwd":          "",
		"~/{a,b}/c":                "",
		`~/\*`:                     "",
		"**":                       "",
	} {
		require.Equal(t, want, requiredText(pat), pat)
	}
}

// FuzzRequiredText checks that the filter never rules out a path a glob
// matches: a filter that did would hide a credential or system path from
// every rule that uses the set.
func FuzzRequiredText(f *testing.F) {
	for _, pats := range builtinRules.Paths.all() {
		for _, pat := range pats {
			f.Add(pat, strings.NewReplacer("**", "a/b", "*", "x", "?", "q").Replace(pat))
		}
	}
	f.Add("[!a]bc*", "xbcd")
	f.Fuzz(func(t *testing.T, pat, path string) {
		g, err := glob.Compile(pat, '/')
		if err != nil || !g.Match(path) {
			return
		}
		if req := requiredText(pat); !strings.Contains(path, req) {
			t.Fatalf("%q matches %q but lacks %q", pat, path, req)
		}
		if !(&pathSet{patterns: []string{pat}}).mayMatch(path) {
			t.Fatalf("set of %q rules out %q", pat, path)
		}
	})
}
