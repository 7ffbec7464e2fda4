package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// TestSatisfiedRefusesOpaque: under askFallback=allowlist nobody answers,
// and Satisfied alone decides. Code that the analysis cannot see is never
// covered by the allowlist, even when every segment it saw is.
func TestSatisfiedRefusesOpaque(t *testing.T) {
	covered := []*Segment{{Argv: []string{"ls"}, Covered: true}}
	assert.True(t, Result{Segments: covered}.Satisfied())
	assert.False(t, Result{Segments: covered, Opaque: true}.Satisfied(), "opaque code must not be satisfied by the allowlist")
	assert.False(t, Result{Segments: []*Segment{{Argv: []string{"ls"}, Covered: true, Denylist: "ls"}}}.Satisfied())
	assert.False(t, Result{Segments: []*Segment{{Argv: []string{"ls"}}}}.Satisfied())

	// And from a real evaluation: eval of a variable under an allowlist
	// that names eval.
	e := testEngine(t)
	req := Request{Cwd: testWorkspace, Home: testHome, Allow: pattern.NewMatcher(entries("eval **", "ls **"), fakePath),
		Policy: config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AutoAllowSafe: true}}
	req.Command = `eval "$CMD"`
	res := e.Evaluate(req)
	assert.True(t, res.Opaque)
	assert.False(t, res.Satisfied())
	req.Command = "ls -la"
	assert.True(t, e.Evaluate(req).Satisfied())
}
