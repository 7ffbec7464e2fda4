package approve

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hub"
)

// scoped is a request whose first segment offers a choice of scope.
func scoped(c *clock, id string) hub.Approval {
	a := approval(c, id, "npm run test && rm -rf dist")
	a.Proposals = []hub.SegmentProposal{
		{Text: "npm run test", Patterns: []string{"npm run test $", "npm run test **"}},
		{Text: "rm -rf dist", Patterns: []string{"rm -rf dist $"}},
	}
	return a
}

// TestAlwaysChoosesScope (issue 15): the request shows what "always"
// saves; a opens the choice instead of sending; the person picks a scope
// per segment and Enter sends exactly those.
func TestAlwaysChoosesScope(t *testing.T) {
	c := newClock()
	src := newFake(scoped(c, "abcd0001"))
	m := connected(t, c, src, Options{})
	c.advance(guardTime)
	assert.Contains(t, screen(m), "always   npm run test $  or  npm run test **")

	assert.Empty(t, m.update(keyMsg{key: "a"}), "a with a choice sends nothing yet")
	s := screen(m)
	assert.Contains(t, s, "[x] 1 npm run test $   this exact command")
	assert.Contains(t, s, "[ ] 2 npm run test **   with any further arguments")
	m.update(keyMsg{key: "right"})
	assert.Contains(t, screen(m), "[x] 2 npm run test **")
	assert.Empty(t, m.update(keyMsg{key: "enter", burst: true}), "a pasted Enter sends nothing")
	exec(t, find(t, m.update(keyMsg{key: "enter"}), "resolve"))
	require.Len(t, src.sent(), 1)
	assert.Equal(t, hub.ResolveParams{ID: "abcd0001", Decision: hub.AllowAlways, Patterns: []string{"npm run test **", "rm -rf dist $"}}, src.sent()[0])
}

func TestAlwaysScopeKeys(t *testing.T) {
	for _, tt := range []struct {
		name string
		keys []string
		want []string // nil: nothing sent
	}{
		{"enter keeps the narrowest", []string{"enter"}, []string{"npm run test $", "rm -rf dist $"}},
		{"a digit picks", []string{"2", "enter"}, []string{"npm run test **", "rm -rf dist $"}},
		{"s saves nothing for a part", []string{"down", "s", "enter"}, []string{"npm run test $", ""}},
		{"left of the first is none", []string{"left", "enter"}, []string{"", "rm -rf dist $"}},
		{"esc goes back", []string{"esc"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			src := newFake(scoped(c, "abcd0001"))
			m := connected(t, c, src, Options{})
			c.advance(guardTime)
			m.update(keyMsg{key: "a"})
			for _, k := range tt.keys {
				for _, cm := range m.update(keyMsg{key: k}) {
					exec(t, cm)
				}
			}
			if tt.want == nil {
				assert.Empty(t, src.sent())
				assert.Equal(t, modeList, m.mode)
				return
			}
			require.Len(t, src.sent(), 1)
			assert.Equal(t, tt.want, src.sent()[0].Patterns)
		})
	}
}

// TestAlwaysWithoutChoiceSendsAtOnce: one scope per part: a sends, and the
// requester saves the narrowest.
func TestAlwaysWithoutChoiceSendsAtOnce(t *testing.T) {
	c := newClock()
	a := approval(c, "abcd0002", "rm -rf dist")
	a.Proposals = []hub.SegmentProposal{{Text: "rm -rf dist", Patterns: []string{"rm -rf dist $"}}}
	src := newFake(a)
	m := connected(t, c, src, Options{})
	c.advance(guardTime)
	exec(t, find(t, m.update(keyMsg{key: "a"}), "resolve"))
	assert.Equal(t, []hub.ResolveParams{{ID: "abcd0002", Decision: hub.AllowAlways}}, src.sent())
}

// TestScopeChoiceClosesWhenSettledElsewhere: another approver answers
// while the choice is open: the pane closes and says who.
func TestScopeChoiceClosesWhenSettledElsewhere(t *testing.T) {
	c := newClock()
	a := scoped(c, "abcd0003")
	src := newFake(a)
	m := connected(t, c, src, Options{})
	c.advance(guardTime)
	m.update(keyMsg{key: "a"})
	a.Decision, a.ResolvedBy = hub.Deny, "web@box"
	a.Approver = &hub.ApproverInfo{Uid: 1000, User: "ada", Kind: hub.KindWeb}
	m.update(eventMsg{gen: m.gen, ev: event(t, hub.EventResolved, a), ok: true})
	assert.Equal(t, modeList, m.mode)
	assert.Contains(t, m.status, "denied by ada (web)")
	assert.Empty(t, m.update(keyMsg{key: "enter"}))
	assert.Empty(t, src.sent())
}

func TestDenyWithMessage(t *testing.T) {
	c := newClock()
	src := newFake(approval(c, "abcd0004", "curl x | sh"))
	m := connected(t, c, src, Options{})
	c.advance(guardTime)
	assert.Empty(t, m.update(keyMsg{key: "m"}))
	for _, k := range []string{"u", "s", "e", " ", "m", "a", "k", "e", "x", "backspace", "q"} {
		assert.Empty(t, m.update(keyMsg{key: k}), "typing sends nothing (not even q)")
	}
	assert.False(t, m.quit)
	assert.Contains(t, screen(m), "with message: use makeq_")
	exec(t, find(t, m.update(keyMsg{key: "enter"}), "resolve"))
	assert.Equal(t, []hub.ResolveParams{{ID: "abcd0004", Decision: hub.Deny, Message: "use makeq"}}, src.sent())

	// Esc leaves without sending.
	src2 := newFake(approval(c, "abcd0005", "ls"))
	m = connected(t, c, src2, Options{})
	c.advance(guardTime)
	m.update(keyMsg{key: "m"})
	m.update(keyMsg{key: "x"})
	m.update(keyMsg{key: "esc"})
	assert.Equal(t, modeList, m.mode)
	assert.Empty(t, src2.sent())
}

func TestFilters(t *testing.T) {
	c := newClock()
	a1 := approval(c, "aaaa0001", "make deploy")
	a2 := approval(c, "bbbb0002", "rm -rf /")
	a2.AgentID, a2.Risk = "codex", "dangerous"
	a3 := approval(c, "cccc0003", "git push")
	m := connected(t, c, newFake(a1, a2, a3), Options{})
	m.update(keyMsg{key: "f"}) // claude-code
	s := listed(m)
	assert.Contains(t, s, "showing 2: agent claude-code")
	assert.NotContains(t, s, "bbbb0002")
	m.update(keyMsg{key: "f"}) // codex
	s = listed(m)
	assert.Contains(t, s, "bbbb0002")
	assert.NotContains(t, s, "aaaa0001")
	assert.Equal(t, "bbbb0002", m.sel, "the selection follows the filter")
	m.update(keyMsg{key: "f"}) // all again
	m.update(keyMsg{key: "r"}) // dangerous
	s = listed(m)
	assert.Contains(t, s, "risk dangerous")
	assert.Contains(t, s, "bbbb0002")
	assert.NotContains(t, s, "cccc0003")
	// Moving stays among the shown.
	m.update(keyMsg{key: "down"})
	assert.Equal(t, "bbbb0002", m.sel)
	m.update(keyMsg{key: "r"}) // needs-review
	m.update(keyMsg{key: "r"}) // safe: none
	m.update(keyMsg{key: "r"}) // all
	assert.Contains(t, listed(m), "cccc0003")
}

func TestHelpPane(t *testing.T) {
	c := newClock()
	m := connected(t, c, newFake(approval(c, "aaaa0001", "ls")), Options{})
	m.update(keyMsg{key: "?"})
	assert.Contains(t, screen(m), "deny with a message the agent reads")
	assert.Empty(t, m.update(keyMsg{key: "o"}), "a key closes the help, it decides nothing")
	assert.Equal(t, modeList, m.mode)
}

func TestHistoryPane(t *testing.T) {
	c := newClock()
	rows := []Past{
		{Time: c.now(), Agent: "claude-code", Risk: "needs-review", Decision: "allow", Scope: "always", Who: "ada (web)", Command: "npm run test", Saved: []string{"npm run test **"}},
		{Time: c.now(), Agent: "codex", Risk: "dangerous", Decision: "deny", Who: "bob (tui)", Command: "rm -rf /", Message: "no"},
	}
	m := connected(t, c, newFake(), Options{History: func(context.Context) ([]Past, error) { return rows, nil }})
	m.update(resizeMsg{width: 120})
	m.update(exec(t, find(t, m.update(keyMsg{key: "h"}), "history")))
	s := screen(m)
	assert.Contains(t, s, "allow always  by ada (web)  claude-code: npm run test")
	assert.Contains(t, s, "saved npm run test **")
	assert.Contains(t, s, "deny          by bob (tui)  codex: rm -rf /")
	m.update(keyMsg{key: "r"}) // dangerous only
	s = screen(m)
	assert.NotContains(t, s, "npm run test")
	assert.Contains(t, s, "rm -rf /")
	m.update(keyMsg{key: "x"})
	assert.Equal(t, modeList, m.mode)

	// A history that cannot be read says so.
	m = connected(t, c, newFake(), Options{History: func(context.Context) ([]Past, error) { return nil, errors.New("disk on fire") }})
	m.update(exec(t, find(t, m.update(keyMsg{key: "h"}), "history")))
	assert.Contains(t, screen(m), "cannot read the history: disk on fire")
}
