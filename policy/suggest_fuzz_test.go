package policy

import (
	"slices"
	"testing"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// FuzzSuggest: for any command, each pattern "allow always" would offer is
// valid, is offered the same way twice, Suggest is the narrowest, and each
// matches the segment it was made for when the same command comes again —
// a saved pattern that never matches would ask the same question forever.
func FuzzSuggest(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.command)
	}
	e := testEngine(f)
	base := Request{Cwd: testWorkspace, Home: testHome, Policy: config.BuiltinPolicy()}
	f.Fuzz(func(t *testing.T, command string) {
		req := base
		req.Command = command
		res := e.Evaluate(req)
		for i, s := range res.Segments {
			ps := e.Proposals(s)
			if again := e.Proposals(s); !slices.Equal(again, ps) {
				t.Fatalf("%q: segment %q: proposed %q, then %q", command, s.Text, ps, again)
			}
			if len(ps) > 0 && e.Suggest(s) != ps[0] {
				t.Fatalf("%q: segment %q: Suggest %q is not the narrowest of %q", command, s.Text, e.Suggest(s), ps)
			}
			for _, p := range ps {
				if err := pattern.ValidatePattern(p); err != nil {
					t.Fatalf("%q: segment %q: proposed %q is not a valid pattern: %v", command, s.Text, p, err)
				}
				next := req
				next.Allow = pattern.NewMatcher([]pattern.Entry{{Pattern: p}}, nil)
				res2 := e.Evaluate(next)
				if len(res2.Segments) != len(res.Segments) || res2.Segments[i].Text != s.Text {
					t.Fatalf("%q: segments changed when the allowlist did", command)
				}
				if res2.Segments[i].Allowlist == "" {
					t.Fatalf("%q: segment %q: proposed %q does not match it next time", command, s.Text, p)
				}
			}
		}
	})
}
