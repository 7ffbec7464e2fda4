package policy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryReasonHasAnEffect reads the analyzer's source for the rule ids
// its reasons use and checks each names an effect, so that a new kind of
// reason cannot be added without saying what it is about.
func TestEveryReasonHasAnEffect(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	ruleID := regexp.MustCompile(`Rule: "([a-z0-9-]+)"`)
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "rules_gen.go" {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range ruleID.FindAllStringSubmatch(string(src), -1) {
			seen++
			if m[1] == "wrapper-" {
				continue // wrapper-NAME: effectOf gives the wrapper's risk its effect
			}
			_, ok := reasonEffects.lookup(m[1])
			assert.True(t, ok, "%s: reason rule %q has no effect in reasonEffects (effects.go)", f, m[1])
		}
	}
	require.Greater(t, seen, 40)
}

// TestRuleEffectsNamed: every reason of a corpus command has an effect.
func TestRuleEffectsNamed(t *testing.T) {
	e := testEngine(t)
	for _, c := range loadCorpus(t) {
		for _, s := range analyzeForTest(e, c.command).Segments {
			for _, r := range s.Reasons {
				assert.NotEmpty(t, r.Effect, "%s:%d %q", c.file, c.line, r.Text)
			}
		}
	}
}
