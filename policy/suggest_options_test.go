package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/execgate/execgate/pattern"
)

// optionEffectRule reports whether ru is the kind of rule optionsReach
// counts: firm or dangerous, about an option or its value (or any text,
// when it names its subcommand).
func optionEffectRule(ru *rule) bool {
	if ru == nil || !ru.Firm && ru.Risk != Dangerous {
		return false
	}
	return len(ru.Options) > 0 || len(ru.ValueOf) > 0 || len(ru.Sub) > 0 && (ru.Text != "" || len(ru.AnyArg) > 0)
}

// TestWildcardsStayClearOfOptionEffects is issue 22's property for
// "allow always" (5b): over every command of the corpora, no wildcard
// proposal even matches a command whose options the model says reach
// other targets or effects — any corpus command, or any example of the
// rule table, that an option-effect rule flags. `pytest **` offered for
// `pytest` matched `pytest --basetemp=~`; `make all **` matched
// `make all -f ../x.mk`. A firm reason keeps such a command from being
// covered anyway; the property says more: the wildcard is not offered
// where the program's options are known to reach elsewhere, because it
// would stand for the options the model does not know yet.
func TestWildcardsStayClearOfOptionEffects(t *testing.T) {
	e := testEngine(t)
	var flagged []*Segment
	note := func(command string) {
		for _, s := range analyzeForTest(e, command).Segments {
			for _, r := range s.Reasons {
				// A flag raised because a word known only at run time
				// could be the option says "could be": such a command is
				// never covered by a wildcard, and its words are no
				// evidence of where the options reach.
				if optionEffectRule(e.rules.ruleByID(r.Rule)) && len(s.Argv) > 0 && !anyUnknown(s.words) {
					flagged = append(flagged, s)
					break
				}
			}
		}
	}
	cases := loadCorpus(t)
	for _, c := range cases {
		note(c.command)
	}
	for _, ru := range builtinRules.Rules {
		if optionEffectRule(ru) {
			for _, m := range ru.Match {
				note(m)
			}
		}
	}
	wildcards := 0
	for _, c := range cases {
		for _, s := range analyzeForTest(e, c.command).Segments {
			for _, p := range e.Proposals(s) {
				if !strings.HasSuffix(p, "**") {
					continue
				}
				wildcards++
				m := pattern.NewMatcher([]pattern.Entry{{Pattern: p}}, nil)
				for _, f := range flagged {
					_, _, ok := m.Match(f.Argv)
					assert.False(t, ok, "%q: the proposal %q reaches %q, whose options the model flags", c.command, p, f.Text)
				}
			}
		}
	}
	t.Logf("%d wildcard proposals against %d commands with option effects", wildcards, len(flagged))
	assert.Greater(t, wildcards, 20)
	assert.Greater(t, len(flagged), 100)
}
