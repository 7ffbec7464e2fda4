package approve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/internal/display"
)

// Past is one decision from the audit log, for the history pane.
type Past struct {
	Time     time.Time
	Agent    string
	Risk     string
	Decision string // allow, deny
	Scope    string // once, always: a person's allow
	Who      string // "ada (web)", "policy", "fallback" …
	Command  string
	Saved    []string // patterns "always" saved
	Message  string
}

// Modes of the screen: the list, or one of the panes over it.
const (
	modeList    = iota
	modeHelp    // ? : the keys
	modeScope   // a on a request with a choice: which scope "always" saves
	modeMessage // m: the message a deny carries
	modeHistory // h: recent decisions
	modeUndo    // u: recent checkpoints, to undo one
	// modeUndoConfirm shows what undoing the selected checkpoint would
	// change, and waits for y.
	modeUndoConfirm
)

// historyRows bounds the history pane.
const historyRows = 200

// helpLines are the help pane.
var helpLines = []string{
	"keys",
	"  o, y      allow the selected request once",
	"  a         allow always: choose what is saved for each part of it",
	"  d, n      deny",
	"  m         deny with a message the agent reads in its refusal",
	"  ↑ ↓ j k   select",
	"  f         filter by agent (cycles through the agents pending)",
	"  r         filter by risk (dangerous, needs-review, safe, all)",
	"  h         history: recent decisions from the audit log",
	"  u         undo: recent checkpoints of your workspaces; Enter shows",
	"            what undoing one changes, y then does it (as execgate undo)",
	"  ?         this help; any key closes it",
	"  q         quit (pending requests stay pending)",
	"",
	"allow always, choosing the scope",
	"  ↑ ↓       the part of the command; ← → or 1-9 its scope",
	"  s         save nothing for this part; Enter sends; Esc goes back",
	"  scopes run from the exact command ($ at the end: nothing after it)",
	"  to a wider pattern (** at the end: any further arguments)",
}

// scopeState is the scope choice under way: one pick per proposal (an
// index into its patterns, -1 for none) and the proposal being chosen.
type scopeState struct {
	id   string
	pick []int
	seg  int
}

// historyMsg brings the history pane's rows.
type historyMsg struct {
	rows []Past
	err  error
}

// hasChoice reports whether some proposal offers more than one scope.
func hasChoice(ps []hub.SegmentProposal) bool {
	return slices.ContainsFunc(ps, func(p hub.SegmentProposal) bool { return len(p.Patterns) > 1 })
}

// visible reports whether it passes the filters.
func (m *model) visible(it item) bool {
	return (m.filterAgent == "" || it.AgentID == m.filterAgent) && (m.filterRisk == "" || it.Risk == m.filterRisk)
}

// shown are the items that pass the filters, in order.
func (m *model) shown() []item {
	var out []item
	for _, it := range m.items {
		if m.visible(it) {
			out = append(out, it)
		}
	}
	return out
}

// refilter keeps the selection on a shown item after a filter changed.
func (m *model) refilter() {
	if i := m.index(m.sel); i >= 0 && m.visible(m.items[i]) {
		return
	}
	m.sel = ""
	if s := m.shown(); len(s) > 0 {
		m.sel = s[0].ID
		m.guard = m.now.Add(guardTime)
	}
}

// cycle returns the value after cur in values, "" (all) after the last.
func cycle(values []string, cur string) string {
	i := slices.Index(values, cur)
	if i+1 >= len(values) {
		return ""
	}
	return values[i+1]
}

// cycleAgent moves the agent filter to the next agent pending.
func (m *model) cycleAgent() {
	var agents []string
	for _, it := range m.items {
		if !slices.Contains(agents, it.AgentID) {
			agents = append(agents, it.AgentID)
		}
	}
	slices.Sort(agents)
	m.filterAgent = cycle(agents, m.filterAgent)
	m.refilter()
}

// cycleRisk moves the risk filter along the grades.
func (m *model) cycleRisk() {
	m.filterRisk = cycle([]string{"dangerous", "needs-review", "safe"}, m.filterRisk)
	m.refilter()
}

// paneKey handles a key in one of the panes; ok is false in the list.
func (m *model) paneKey(k keyMsg) (cmds []cmd, ok bool) {
	switch m.mode {
	case modeHelp:
		m.mode = modeList
		return nil, true
	case modeHistory:
		switch k.key {
		case "f":
			m.cycleHistoryAgent()
		case "r":
			m.cycleRisk()
		case "q", "Q", "ctrl+c", "ctrl+d":
			m.quit = true
		default:
			m.mode = modeList
		}
		return nil, true
	case modeScope:
		return m.scopeKey(k), true
	case modeMessage:
		return m.messageKey(k), true
	case modeUndo, modeUndoConfirm:
		return m.undoKey(k), true
	}
	return nil, false
}

// cycleHistoryAgent moves the agent filter along the agents in the history.
func (m *model) cycleHistoryAgent() {
	var agents []string
	for _, p := range m.history {
		if !slices.Contains(agents, p.Agent) {
			agents = append(agents, p.Agent)
		}
	}
	slices.Sort(agents)
	m.filterAgent = cycle(agents, m.filterAgent)
	m.refilter()
}

// startScope opens the scope choice for the selected request, each
// proposal on its narrowest scope.
func (m *model) startScope(it item) {
	st := &scopeState{id: it.ID, pick: make([]int, len(it.Proposals))}
	for i, p := range it.Proposals {
		if len(p.Patterns) == 0 {
			st.pick[i] = -1
		}
	}
	m.scope, m.mode = st, modeScope
	m.status = "allow always: choose what is saved, then Enter"
}

// scopeKey handles a key during the scope choice.
func (m *model) scopeKey(k keyMsg) []cmd {
	st := m.scope
	i := m.index(st.id)
	if i < 0 {
		m.mode, m.scope = modeList, nil
		return nil
	}
	props := m.items[i].Proposals
	n := len(props[st.seg].Patterns)
	switch k.key {
	case "esc", "ctrl+c", "ctrl+d":
		m.mode, m.scope = modeList, nil
		m.status = "allow always cancelled: nothing sent"
	case "up", "k":
		st.seg = max(st.seg-1, 0)
	case "down", "j":
		st.seg = min(st.seg+1, len(props)-1)
	case "left", "h":
		if n > 0 {
			st.pick[st.seg] = max(st.pick[st.seg]-1, -1)
		}
	case "right", "l":
		if n > 0 {
			st.pick[st.seg] = min(st.pick[st.seg]+1, n-1)
		}
	case "s":
		st.pick[st.seg] = -1
	case "enter":
		if k.burst {
			m.status = "ignored keys that came all at once (a paste?): press Enter on its own"
			return nil
		}
		p := hub.ResolveParams{ID: st.id, Decision: hub.AllowAlways, Patterns: make([]string, len(props))}
		for j, pick := range st.pick {
			if pick >= 0 {
				p.Patterns[j] = props[j].Patterns[pick]
			}
		}
		m.mode, m.scope = modeList, nil
		return m.send(i, p)
	default:
		if len(k.key) == 1 && k.key[0] >= '1' && k.key[0] <= '9' && int(k.key[0]-'1') < n {
			st.pick[st.seg] = int(k.key[0] - '1')
		}
	}
	return nil
}

// messageKey handles a key while the deny message is typed.
func (m *model) messageKey(k keyMsg) []cmd {
	i := m.index(m.msgID)
	if i < 0 {
		m.mode = modeList
		return nil
	}
	switch k.key {
	case "esc", "ctrl+c", "ctrl+d":
		m.mode, m.msg = modeList, ""
		m.status = "deny cancelled: nothing sent"
	case "backspace":
		if _, size := utf8.DecodeLastRuneInString(m.msg); size > 0 {
			m.msg = m.msg[:len(m.msg)-size]
		}
	case "enter":
		if k.burst {
			m.status = "ignored keys that came all at once (a paste?): press Enter on its own"
			return nil
		}
		text := strings.TrimSpace(m.msg)
		m.mode, m.msg = modeList, ""
		return m.send(i, hub.ResolveParams{ID: m.msgID, Decision: hub.Deny, Message: text})
	case "", "up", "down", "left", "right":
	default:
		if len(m.msg)+len(k.key) <= hub.MaxDenyMessage {
			m.msg += k.key
		}
	}
	return nil
}

// send resolves items[i] with p.
func (m *model) send(i int, p hub.ResolveParams) []cmd {
	m.items[i].sending = p.Decision
	m.status = fmt.Sprintf("sending %s for %s…", p.Decision, shortID(p.ID))
	return []cmd{m.resolveCmd(p)}
}

// historyCmd reads the history pane's rows.
func (m *model) historyCmd() cmd {
	read := m.o.History
	return cmd{"history", func(ctx context.Context) any {
		if read == nil {
			return historyMsg{err: fmt.Errorf("no audit log to read")}
		}
		rows, err := read(ctx)
		return historyMsg{rows: rows, err: err}
	}}
}

// helpBody is the help pane.
func (m *model) helpBody() []block {
	rows := make([]line, 0, len(helpLines))
	for _, h := range helpLines {
		rows = append(rows, plain(h))
	}
	return []block{{rows: rows, sel: true}}
}

// historyBody is the history pane: newest first, filtered.
func (m *model) historyBody() []block {
	if m.historyErr != "" {
		return []block{{rows: []line{plain("  cannot read the history: " + m.historyErr)}}}
	}
	var rows []line
	for _, p := range m.history {
		if (m.filterAgent != "" && p.Agent != m.filterAgent) || (m.filterRisk != "" && p.Risk != m.filterRisk) {
			continue
		}
		how := p.Decision
		if p.Scope != "" {
			how += " " + p.Scope
		}
		rows = append(rows, line{
			{"  " + p.Time.Local().Format("01-02 15:04:05") + "  ", ""},
			{fmt.Sprintf("%-12s", display.Escape(p.Risk)), riskSGR(p.Risk)},
			{fmt.Sprintf("  %-12s  by %s  %s: ", how, display.Escape(p.Who), display.Escape(p.Agent)), ""},
			{display.Escape(p.Command), ""},
		})
		for _, s := range p.Saved {
			rows = append(rows, plain("      saved "+display.Escape(s)))
		}
		if p.Message != "" {
			rows = append(rows, plain("      "+display.Escape(p.Message)))
		}
	}
	if len(rows) == 0 {
		rows = append(rows, plain("  no decisions recorded yet (or none match the filter)"))
	}
	return []block{{rows: rows, sel: true}}
}

// scopeBody is the scope choice for the request being allowed always.
func (m *model) scopeBody() []block {
	i := m.index(m.scope.id)
	if i < 0 {
		return nil
	}
	it := m.items[i]
	rows := []line{{{"  allow always: " + display.Escape(summaryLine(it.Command)), sgrBold}}, nil}
	for j, p := range it.Proposals {
		marker := "    "
		if j == m.scope.seg {
			marker = "  > "
		}
		rows = append(rows, line{{marker + display.Escape(p.Text), ""}})
		if len(p.Patterns) == 0 {
			rows = append(rows, plain("        nothing can be saved for this part: it will be asked again"))
			continue
		}
		for k, pat := range p.Patterns {
			box := "[ ]"
			if m.scope.pick[j] == k {
				box = "[x]"
			}
			rows = append(rows, plain(fmt.Sprintf("        %s %d %s%s", box, k+1, display.Escape(pat), scopeNote(pat))))
		}
		box := "[ ]"
		if m.scope.pick[j] == -1 {
			box = "[x]"
		}
		rows = append(rows, plain("        "+box+" s nothing (ask again next time)"))
	}
	return []block{{rows: rows, sel: true}}
}

// scopeNote says in words what a scope covers.
func scopeNote(pat string) string {
	switch {
	case strings.HasSuffix(pat, " $"):
		return "   this exact command"
	case strings.HasSuffix(pat, " **"):
		return "   with any further arguments"
	}
	return ""
}

// summaryLine is a command's first line.
func summaryLine(command string) string {
	first, _, more := strings.Cut(command, "\n")
	if more {
		return first + " …"
	}
	return first
}

// alwaysLines say, per segment, what "always" may save.
func alwaysLines(ps []hub.SegmentProposal) []string {
	var out []string
	for _, p := range ps {
		if len(p.Patterns) == 0 {
			out = append(out, "nothing for "+p.Text+" (asked again)")
			continue
		}
		out = append(out, strings.Join(p.Patterns, "  or  "))
	}
	return out
}
