package approve

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/internal/display"
)

// SGR sequences used when colour is on.
const (
	sgrBold   = "\x1b[1m"
	sgrRed    = "\x1b[1;31m"
	sgrYellow = "\x1b[33m"
	sgrGreen  = "\x1b[32m"
	sgrReset  = "\x1b[0m"
)

// riskStyles colour each risk grade as the TTY prompt and check do.
var riskStyles = []struct{ risk, sgr string }{
	{"dangerous", sgrRed},
	{"needs-review", sgrYellow},
	{"safe", sgrGreen},
}

func riskSGR(risk string) string {
	for _, r := range riskStyles {
		if r.risk == risk {
			return r.sgr
		}
	}
	return ""
}

// pastTenses word each decision in a status line.
var pastTenses = []struct{ decision, text string }{
	{hub.AllowOnce, "allowed once"},
	{hub.AllowAlways, "allowed always"},
	{hub.Deny, "denied"},
}

// keyHelps are the key line, longest first: the first that fits is shown.
var keyHelps = []string{
	"o/y allow once · a allow always · d/n deny · m deny with a message · ↑↓/jk move · f/r filter · h history · u undo · ? help · q quit",
	"o once · a always · d deny · m message · f/r filter · h history · ? help",
	"o once · a always · d deny · j/k move · ? help · q quit",
	"o/a/d · j/k · ? · q",
}

// paneHelp is the key line of a pane ("" in the list).
func paneHelp(mode int) string {
	switch mode {
	case modeHelp:
		return "any key closes the help"
	case modeScope:
		return "↑↓ part · ←→/1-9 scope · s none · Enter send · Esc back"
	case modeMessage:
		return "type the message · Enter deny with it · Esc back"
	case modeHistory:
		return "f agent · r risk · any other key back · q quit"
	case modeUndo:
		return "↑↓/jk select · Enter what undo changes · any other key back · q quit"
	case modeUndoConfirm:
		return "y undo it · any other key back"
	}
	return ""
}

// Layout of the selected request's details: a label column then the value,
// as in the TTY prompt. Below wideLayout columns the labels get rows of
// their own so that the values keep most of the width.
const (
	labelFormat = "    %-7s  "
	labelCells  = 13
	wideLayout  = 48
	narrowLabel = "  "
	narrowValue = "    "
)

// span is a piece of a screen line in one style.
type span struct{ text, sgr string }

// line is one screen row.
type line []span

func plain(s string) line { return line{{text: s}} }

// view renders the whole screen, one string per row. No row is wider than
// the terminal (minus a spare column) and, when the height is known, there
// are no more rows than it has.
func (m *model) view() []string {
	header := m.header()
	status := m.status
	if m.mode == modeMessage {
		status = "deny " + shortID(m.msgID) + " with message: " + display.Escape(m.msg) + "_"
	}
	footer := []line{nil, plain(status), plain(m.keyHelp())}
	room := math.MaxInt // height unknown: no limit
	if m.height > 0 {
		room = m.height - len(header) - len(footer)
	}
	body := m.crop(m.body(), room)
	rows := make([]string, 0, len(header)+len(body)+len(footer))
	for _, group := range [][]line{header, body, footer} {
		for _, l := range group {
			rows = append(rows, m.render(l))
		}
	}
	if m.height > 0 && len(rows) > m.height {
		rows = rows[len(rows)-m.height:]
	}
	return rows
}

func (m *model) keyHelp() string {
	if h := paneHelp(m.mode); h != "" {
		return h
	}
	for _, h := range keyHelps {
		if cells(h) < m.width {
			return h
		}
	}
	return keyHelps[len(keyHelps)-1]
}

func (m *model) header() []line {
	title := line{{"execgate approve", sgrBold}}
	switch {
	case !m.connected:
		title = append(title, span{" · " + m.down, sgrYellow})
	default:
		title = append(title, span{fmt.Sprintf(" · %d pending", len(m.items)), ""})
		if m.filterAgent != "" || m.filterRisk != "" {
			title = append(title, span{fmt.Sprintf(" · showing %d: %s", len(m.shown()), m.filterText()), sgrYellow})
		}
		if m.o.Name != "" {
			title = append(title, span{" · as " + display.Escape(m.o.Name), ""})
		}
	}
	if m.mode == modeUndo || m.mode == modeUndoConfirm {
		title = append(title, span{" · undo", sgrBold})
	}
	if m.mode == modeHistory {
		title = append(title, span{" · history", sgrBold})
		if m.filterAgent != "" || m.filterRisk != "" {
			title = append(title, span{" (" + m.filterText() + ")", ""})
		}
	}
	return []line{title, nil}
}

// block is the rows of one request; sel marks the selected one.
type block struct {
	rows []line
	sel  bool
}

// filterText says which filters are on.
func (m *model) filterText() string {
	var parts []string
	if m.filterAgent != "" {
		parts = append(parts, "agent "+display.Escape(m.filterAgent))
	}
	if m.filterRisk != "" {
		parts = append(parts, "risk "+m.filterRisk)
	}
	return strings.Join(parts, ", ")
}

func (m *model) body() []block {
	switch m.mode {
	case modeHelp:
		return m.helpBody()
	case modeHistory:
		return m.historyBody()
	case modeUndo, modeUndoConfirm:
		return m.undoBody()
	case modeScope:
		return m.scopeBody()
	}
	if len(m.items) == 0 {
		if m.connected {
			return []block{{rows: []line{plain("  no pending requests; new ones appear here")}}}
		}
		return nil
	}
	blocks := make([]block, 0, len(m.items))
	for _, it := range m.shown() {
		b := block{sel: it.ID == m.sel}
		b.rows = append(b.rows, m.row(it, b.sel))
		if b.sel {
			b.rows = append(b.rows, m.details(it.Approval)...)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// row is a request's one-line summary.
func (m *model) row(it item, sel bool) line {
	marker, style := "  ", ""
	if sel {
		marker, style = "> ", sgrBold
	}
	left := m.left(it.Approval)
	if it.sending != "" {
		left = "sending"
	}
	return line{
		{marker + shortID(it.ID) + "  ", style},
		{fmt.Sprintf("%-12s", display.Escape(it.Risk)), riskSGR(it.Risk)},
		{fmt.Sprintf("  %-8s  %s: ", left, display.Escape(it.AgentID)), style},
		{display.Escape(it.Command), style},
	}
}

// details are the selected request's rows: the command one row per source
// line marked "|", then cwd, agent, via, risk and reasons, all escaped and
// wrapped so that nothing is cut off.
func (m *model) details(a hub.Approval) []line {
	var rows []line
	rows = m.field(rows, "command", strings.Split(a.Command, "\n"), "| ", "")
	fields := []struct{ label, value, sgr string }{
		{"cwd", a.Cwd, ""},
		{"agent", a.AgentID, ""},
		{"via", a.Via, ""},
		{"risk", a.Risk, riskSGR(a.Risk)},
	}
	for _, f := range fields {
		if f.value != "" {
			rows = m.field(rows, f.label, []string{f.value}, "", f.sgr)
		}
	}
	if len(a.Reasons) > 0 {
		rows = m.field(rows, "reasons", a.Reasons, "- ", "")
	}
	if always := alwaysLines(a.Proposals); len(always) > 0 {
		rows = m.field(rows, "always", always, "", "")
	}
	return rows
}

// field appends one labelled value of several source lines.
func (m *model) field(rows []line, label string, values []string, marker, sgr string) []line {
	first, indent := fmt.Sprintf(labelFormat, label), strings.Repeat(" ", labelCells)
	if m.width < wideLayout {
		rows = append(rows, plain(narrowLabel+label))
		first, indent = narrowValue, narrowValue
	}
	// One column spare: some terminals scroll as soon as the last is used.
	avail := max(m.width-len(indent)-len(marker)-1, 4)
	for i, v := range values {
		lead := indent
		if i == 0 {
			lead = first
		}
		mark := marker
		if v == "" {
			mark = strings.TrimSpace(marker)
		}
		for j, chunk := range wrap(display.Escape(v), avail) {
			if j > 0 {
				lead, mark = indent, strings.Repeat(" ", len(marker))
			}
			rows = append(rows, line{{lead + mark, ""}, {chunk, sgr}})
		}
		if v == "" {
			rows = append(rows, plain(lead+mark))
		}
	}
	return rows
}

// crop fits the blocks into n rows, keeping the selected request whole
// when it fits, and says how many are above and below.
func (m *model) crop(blocks []block, n int) []line {
	var all []line
	selStart, selEnd := 0, 0
	for _, b := range blocks {
		if b.sel {
			selStart = len(all)
			selEnd = selStart + len(b.rows)
		}
		all = append(all, b.rows...)
	}
	if len(all) <= n {
		return all
	}
	if n < 3 {
		// No room for markers: the selected request's first rows.
		return all[selStart:min(selStart+max(n, 0), len(all))]
	}
	// Room for an "above" and a "below" row.
	room := n - 2
	start := selStart
	if selEnd-selStart < room {
		start = max(0, min(selStart, selEnd-room))
	}
	end := min(start+room, len(all))
	out := make([]line, 0, n)
	if start > 0 {
		out = append(out, plain(fmt.Sprintf("  ↑ %d more rows", start)))
	} else {
		out = append(out, nil)
	}
	out = append(out, all[start:end]...)
	switch {
	case end < selEnd:
		out = append(out, line{{"  ↓ the command goes on: enlarge the terminal to see it all", sgrYellow}})
	case end < len(all):
		out = append(out, plain(fmt.Sprintf("  ↓ %d more rows", len(all)-end)))
	}
	return out
}

// render turns a line into terminal text no wider than the terminal.
func (m *model) render(l line) string {
	var b strings.Builder
	room := max(m.width-1, 1)
	for _, s := range l {
		text, cut := fit(s.text, room)
		room -= cells(text)
		if cut {
			text += "…"
		}
		if m.o.Color && s.sgr != "" && text != "" {
			b.WriteString(s.sgr + text + sgrReset)
		} else {
			b.WriteString(text)
		}
		if cut {
			break
		}
	}
	return b.String()
}

// fit returns the longest prefix of s (made of whole escape tokens) that
// fits in room cells, with room left for an ellipsis when s is cut.
func fit(s string, room int) (string, bool) {
	if cells(s) <= room {
		return s, false
	}
	used, end := 0, 0
	for _, tok := range tokens(s) {
		if used+cells(tok) > room-cells("…") {
			break
		}
		used += cells(tok)
		end += len(tok)
	}
	return s[:end], true
}

// wrap splits escaped text into rows of at most width cells, never
// inside an escape.
func wrap(s string, width int) []string {
	var rows []string
	var cur strings.Builder
	used := 0
	for _, tok := range tokens(s) {
		c := cells(tok)
		if used > 0 && used+c > width {
			rows = append(rows, cur.String())
			cur.Reset()
			used = 0
		}
		cur.WriteString(tok)
		used += c
	}
	if cur.Len() > 0 || len(rows) == 0 {
		rows = append(rows, cur.String())
	}
	return rows
}

// tokens splits prompt.Escape's output into display units: one rune, or
// one backslash escape (\\, \n, \xNN, \uNNNN, \UNNNNNNNN). Escape doubles
// every literal backslash, so a backslash always starts an escape.
func tokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		n := 0
		if s[i] == '\\' && i+1 < len(s) {
			n = 2
			switch s[i+1] {
			case 'x':
				n = 4
			case 'u':
				n = 6
			case 'U':
				n = 10
			}
			n = min(n, len(s)-i)
		} else {
			_, n = utf8.DecodeRuneInString(s[i:])
		}
		out = append(out, s[i:i+n])
		i += n
	}
	return out
}

// cells is a conservative display width: exact for ASCII, two for any
// other rune (as in the TTY prompt), so rows never overflow.
func cells(s string) int {
	n := 0
	for _, r := range s {
		if r < utf8.RuneSelf {
			n++
		} else {
			n += 2
		}
	}
	return n
}

// left is the time left to answer.
func (m *model) left(a hub.Approval) string {
	if a.ExpiresAtMs == 0 {
		return "-"
	}
	d := time.UnixMilli(a.ExpiresAtMs).Sub(m.now)
	if d <= 0 {
		return "expiring"
	}
	return Duration(d) + " left"
}

// Duration shows a wait the way the approver does: 42s, 3m05s, 1h02m,
// rounded up to the second so that a countdown never shows 0s early.
func Duration(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", max(s, 0))
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}

// ShortID is the prefix of an approval ID shown in lists; the hub accepts
// it wherever an ID is wanted as long as it is unique.
func ShortID(id string) string { return shortID(id) }

func shortID(id string) string {
	toks := tokens(display.Escape(id))
	return strings.Join(toks[:min(len(toks), 8)], "")
}

// summary names a request in a status line.
func summary(a hub.Approval) string {
	return shortID(a.ID) + " " + display.Escape(a.Command)
}

// PastTense words a decision for a person: "allowed once".
func PastTense(decision string) string {
	for _, t := range pastTenses {
		if t.decision == decision {
			return t.text
		}
	}
	return "resolved (" + display.Escape(decision) + ")"
}

func escapeOr(s, empty string) string {
	if s == "" {
		return empty
	}
	return display.Escape(s)
}

// SavedLines say, for a settled allow-always, what was chosen to be saved
// per segment (escaped), or that each segment's narrowest scope is.
func SavedLines(a hub.Approval) []string {
	if len(a.Patterns) == 0 {
		if len(a.Proposals) == 0 {
			return nil
		}
		return []string{"saves the narrowest scope proposed for each segment"}
	}
	var out []string
	for i, p := range a.Patterns {
		seg := ""
		if i < len(a.Proposals) {
			seg = display.Escape(a.Proposals[i].Text)
		}
		if p == "" {
			out = append(out, "nothing saved for "+seg)
			continue
		}
		out = append(out, "saves "+display.Escape(p)+" for "+seg)
	}
	return out
}
