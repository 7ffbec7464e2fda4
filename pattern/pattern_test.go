package pattern

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// fakePath resolves bare names as if PATH held only /usr/bin.
func fakePath(name string) string { return "/usr/bin/" + name }

func entries(patterns ...string) []Entry {
	out := make([]Entry, len(patterns))
	for i, p := range patterns {
		out[i] = Entry{Pattern: p}
	}
	return out
}

// TestPatternMatching pins the pattern language: word globs, ** runs,
// word prefixes, case, and program paths.
func TestPatternMatching(t *testing.T) {
	look := func(name string) string {
		if name == "git" {
			return "/usr/bin/git"
		}
		return ""
	}
	cases := []struct {
		pattern string
		argv    string
		want    bool
	}{
		{"git status", "git status", true},
		{"git status", "git status -s", true},
		{"git status", "git statuses", false},
		{"git st*", "git status", true},
		{"git st*", "git status -s", false},
		{"git **", "git", true},
		{"git **", "git log --oneline", true},
		{"git ** --force", "git push origin --force", true},
		{"git ** --force", "git push origin", false},
		{"npm run test", "npm run test -- -u", true},
		{"npm run test", "npm run tests", false},
		{"git **", "Git status", false},
		{"git **", "./git status", false},
		{"git **", "/tmp/git status", false},
		{"git **", "/usr/bin/git status", true},
		{"/usr/bin/git **", "git status", true},
		{"/usr/bin/git **", "/usr/bin/git log", true},
		{"/usr/local/bin/git **", "git status", false},
		{"* --version", "node --version", true},
		{"src/** x", "src/a/b x", true},
		{"ls src/**", "ls src a", false},
		// A last word $ anchors: these words and nothing after.
		{"rm -rf dist $", "rm -rf dist", true},
		{"rm -rf dist $", "rm -rf dist src", false},
		{"rm -rf dist $", "rm -rf", false},
		{"npm run test $", "npm run test -- -u", false},
		{"git st* $", "git status", true},
		{"/usr/bin/git status $", "git status", true},
		{"/usr/bin/git status $", "git status -s", false},
	}
	for _, c := range cases {
		m := NewMatcher(entries(c.pattern), look)
		_, _, ok := m.Match(strings.Fields(c.argv))
		assert.Equal(t, c.want, ok, "%q vs %q", c.pattern, c.argv)
	}
	assert.Error(t, ValidatePattern("  "))
	assert.Error(t, ValidatePattern("git [status"))
	assert.NoError(t, ValidatePattern("git **"))
}

// FuzzPattern checks that any pattern either is rejected with an error or
// compiles and matches without panicking.
func FuzzPattern(f *testing.F) {
	for _, p := range []string{"git **", "npm run test", "* --version", "/usr/bin/git **", "{a,b} c", "[x", "**", "a ** b ** c", "\\*"} {
		f.Add(p, "git status --short")
	}
	f.Fuzz(func(t *testing.T, pattern, argv string) {
		if ValidatePattern(pattern) != nil {
			return
		}
		m := NewMatcher(entries(pattern), fakePath)
		words := strings.Fields(argv)
		m.Match(words)
		checkPatternProperties(t, pattern, words)
	})
}

// TestAnchoredExact: Exact writes a pattern that matches its argv and
// nothing longer, and that match is not exact in Match's sense (it waives
// only what a wildcard waives, so the same words in a riskier context are
// asked again).
func TestAnchoredExact(t *testing.T) {
	argv := []string{"rm", "-rf", "dist"}
	p := Exact(argv)
	assert.Equal(t, "rm -rf dist $", p)
	m := NewMatcher(entries(p), nil)
	_, exact, ok := m.Match(argv)
	assert.True(t, ok)
	assert.False(t, exact)
	_, _, ok = m.Match(append(argv, "src"))
	assert.False(t, ok)
	assert.Empty(t, Exact([]string{"rm", "a b"}))
}
