package policy

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// corpusSegment is one segment of a corpus command, as the policy judged
// it with no allowlist.
type corpusSegment struct {
	command string
	seg     *Segment
}

// TestProposalsStayInsideEffects is the property "allow always" rests on,
// over every command of the corpora: each proposal matches the segment it
// was made for next time, and every other corpus segment it would newly let
// through has no effect the approved one did not have — a grant never
// reaches a kind of harm the person did not see.
func TestProposalsStayInsideEffects(t *testing.T) {
	e := testEngine(t)
	base := Request{Cwd: testWorkspace, Home: testHome, Policy: config.BuiltinPolicy()}
	byProgram := map[string][]corpusSegment{}
	var all []corpusSegment
	for _, c := range loadCorpus(t) {
		req := base
		req.Command = c.command
		for _, s := range e.Evaluate(req).Segments {
			cs := corpusSegment{c.command, s}
			all = append(all, cs)
			if len(s.Argv) > 0 {
				byProgram[programName(s.Argv[0])] = append(byProgram[programName(s.Argv[0])], cs)
			}
		}
	}
	proposals, literals := 0, 0
	for _, orig := range all {
		for _, p := range e.Proposals(orig.seg) {
			proposals++
			require.NoError(t, pattern.ValidatePattern(p))
			m := pattern.NewMatcher([]pattern.Entry{{Pattern: p}}, nil)
			// It matches its own command when that comes again.
			next := base
			next.Command = orig.command
			next.Allow = m
			again := e.Evaluate(next)
			i := slices.IndexFunc(again.Segments, func(s *Segment) bool { return s.Text == orig.seg.Text })
			require.GreaterOrEqual(t, i, 0)
			if !assert.NotEmpty(t, again.Segments[i].Allowlist, "%q: proposal %q does not match %q next time", orig.command, p, orig.seg.Text) {
				continue
			}
			if orig.seg.firm() {
				// A plain literal, the only pattern that waives a firm
				// reason, is the person's word on these words wherever
				// they stand; what it reaches is the allowlist's rule
				// for exact patterns, not a choice Proposals makes.
				literals++
				continue
			}
			// What it newly covers stays inside the original's effects.
			for _, other := range byProgram[programName(orig.seg.Argv[0])] {
				o := other.seg
				if o.Covered {
					continue
				}
				_, exact, ok := m.Match(o.Argv)
				if !ok || (!exact && o.firm()) || (exact && o.firm() && !o.exactCovers()) {
					continue
				}
				for _, eff := range o.Effects() {
					if eff == EffectWrite && (o.decorated || len(o.Wrappers) > 0) {
						// A redirection's (or a wrapper's output
						// option's) write inside the workspace is
						// waived by any pattern for the words: the
						// allowlist's documented rule (README).
						continue
					}
					assert.Contains(t, orig.seg.Effects(), eff, "%q saved from %q would let %q through with effect %s", p, orig.command, other.command, eff)
				}
			}
		}
	}
	require.Greater(t, proposals, 1000, "the corpora exercise the proposals")
	t.Logf("%d proposals over %d segments (%d plain literals for firm segments)", proposals, len(all), literals)
}
