package web

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/shim"
)

// Every string the page shows that execgate did not write goes through
// display.Escape here, on the server: control characters, bidi overrides
// and invisible characters arrive as visible escapes (as in the terminal
// prompt), and the page only ever sets them as text, never as HTML.

// card is one pending approval as the page shows it.
type card struct {
	ID string `json:"id"`
	// Lines are the command's lines, each escaped: a here-document shows
	// as the block it is.
	Lines       []string      `json:"lines"`
	Via         string        `json:"via,omitempty"`
	Agent       string        `json:"agent"`
	Cwd         string        `json:"cwd"`
	Risk        string        `json:"risk"`
	Reasons     []string      `json:"reasons"`
	Segments    []segmentView `json:"segments"`
	CreatedAtMs int64         `json:"createdAtMs"`
	ExpiresAtMs int64         `json:"expiresAtMs"`
}

// segmentView is one segment being approved, its reasons and what
// "allow always" saves for it.
type segmentView struct {
	Text     string   `json:"text"`
	Reasons  []string `json:"reasons"`
	Patterns []string `json:"patterns"`
}

// knownRisks are the risk grades the page colours; anything else shows as
// dangerous, the safe side.
var knownRisks = []string{"safe", "needs-review", "dangerous"}

func riskClass(r string) string {
	if slices.Contains(knownRisks, r) {
		return r
	}
	return "dangerous"
}

func escapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = display.Escape(s)
	}
	return out
}

func cardOf(a hub.Approval) card {
	c := card{
		ID:          display.Escape(a.ID),
		Lines:       escapeAll(strings.Split(a.Command, "\n")),
		Via:         display.Escape(a.Via),
		Agent:       display.Escape(a.AgentID),
		Cwd:         display.Escape(a.Cwd),
		Risk:        riskClass(a.Risk),
		Reasons:     escapeAll(a.Reasons),
		Segments:    []segmentView{},
		CreatedAtMs: a.CreatedAtMs,
		ExpiresAtMs: a.ExpiresAtMs,
	}
	for _, p := range a.Proposals {
		c.Segments = append(c.Segments, segmentView{Text: display.Escape(p.Text), Reasons: escapeAll(p.Reasons), Patterns: escapeAll(p.Patterns)})
	}
	return c
}

// settled is an approval that left the queue, and who settled it.
type settled struct {
	ID       string `json:"id"`
	How      string `json:"how"` // resolved, expired, withdrawn
	Decision string `json:"decision,omitempty"`
	By       string `json:"by,omitempty"`
	Message  string `json:"message,omitempty"`
}

// settleHow names the events that take a card away.
var settleHow = map[string]string{
	hub.EventResolved:  "resolved",
	hub.EventExpired:   "expired",
	hub.EventWithdrawn: "withdrawn",
}

func settledOf(how string, a hub.Approval) settled {
	return settled{ID: display.Escape(a.ID), How: how, Decision: display.Escape(a.Decision),
		By: display.Escape(a.ResolvedBy), Message: display.Escape(a.Message)}
}

// historyRow is one decision from the audit log.
type historyRow struct {
	TimeMs   int64    `json:"timeMs"`
	Agent    string   `json:"agent"`
	Risk     string   `json:"risk"`
	Decision string   `json:"decision"`
	By       string   `json:"by"`
	Scope    string   `json:"scope,omitempty"` // once, always: a person's allow
	Always   []string `json:"always,omitempty"`
	Command  string   `json:"command"`
	Message  string   `json:"message,omitempty"`
}

// Bounds on the history the page shows.
const (
	historyRows    = 200
	historyCommand = 400 // bytes of escaped command per row
	historySince   = 30 * 24 * time.Hour
)

// decisionEvents are the audit events that record a decision.
var decisionEvents = []string{shim.EventStarted, shim.EventDenied, shim.EventAllowed}

// history reads the newest decisions from the audit log, newest first,
// keeping those of agent and risk when given.
func history(path, agent, risk string, now time.Time) ([]historyRow, error) {
	var rows []historyRow
	if path == "" {
		return rows, nil
	}
	l := shim.AuditLog{Path: path}
	err := l.Read(now.Add(-historySince), func(ev shim.Event, _ []byte) error {
		if !slices.Contains(decisionEvents, ev.Event) || (agent != "" && ev.Agent != agent) || (risk != "" && ev.Risk != risk) {
			return nil
		}
		rows = append(rows, historyRow{
			TimeMs: ev.Time.UnixMilli(), Agent: display.Escape(ev.Agent), Risk: riskClass(ev.Risk),
			Decision: display.Escape(ev.Decision), By: display.Escape(ev.Who()), Scope: ev.Scope, Always: escapeAll(ev.Allowlisted),
			Command: display.Clip(ev.Command, historyCommand), Message: display.Escape(ev.Message),
		})
		if len(rows) > 2*historyRows {
			rows = slices.Delete(rows, 0, len(rows)-historyRows)
		}
		return nil
	})
	if len(rows) > historyRows {
		rows = rows[len(rows)-historyRows:]
	}
	slices.Reverse(rows)
	return rows, err
}

// policyView is the configuration as the page shows it, escaped; the raw
// file travels beside it for edits.
type policyView struct {
	Hash   string      `json:"hash"`
	Path   string      `json:"path"`
	Raw    string      `json:"raw"`
	Agents []agentView `json:"agents"`
}

// agentView is one agent's policy ("defaults" for the defaults).
type agentView struct {
	Name        string      `json:"name"`
	Key         string      `json:"key"` // the raw key, for edits ("" for defaults)
	Security    string      `json:"security"`
	Ask         string      `json:"ask"`
	AskFallback string      `json:"askFallback"`
	TimeoutMs   string      `json:"timeoutMs"`
	Allowlist   []entryView `json:"allowlist"`
	Denylist    []entryView `json:"denylist"`
}

// entryView is one allowlist or denylist entry.
type entryView struct {
	Pattern    string `json:"pattern"`
	LastUsedMs int64  `json:"lastUsedMs,omitempty"`
	LastUsed   string `json:"lastUsed,omitempty"`
}

// fileShape is the part of the configuration file the page shows.
type fileShape struct {
	Defaults policyShape            `json:"defaults"`
	Agents   map[string]policyShape `json:"agents"`
}

type policyShape struct {
	Security    string `json:"security"`
	Ask         string `json:"ask"`
	AskFallback string `json:"askFallback"`
	TimeoutMs   *int   `json:"timeoutMs"`
	Allowlist   []struct {
		Pattern         string `json:"pattern"`
		LastUsedAt      int64  `json:"lastUsedAt"`
		LastUsedCommand string `json:"lastUsedCommand"`
	} `json:"allowlist"`
	Denylist []struct {
		Pattern string `json:"pattern"`
	} `json:"denylist"`
}

func policyOf(s hub.ConfigSnapshot) (policyView, error) {
	v := policyView{Hash: s.Hash, Path: display.Escape(s.Path), Raw: string(s.File), Agents: []agentView{}}
	var f fileShape
	if err := json.Unmarshal(s.File, &f); err != nil {
		return v, err
	}
	v.Agents = append(v.Agents, agentOf("defaults", "", f.Defaults))
	names := make([]string, 0, len(f.Agents))
	for k := range f.Agents {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v.Agents = append(v.Agents, agentOf(display.Escape(k), k, f.Agents[k]))
	}
	return v, nil
}

func agentOf(name, key string, p policyShape) agentView {
	a := agentView{Name: name, Key: key, Security: display.Escape(p.Security), Ask: display.Escape(p.Ask),
		AskFallback: display.Escape(p.AskFallback), Allowlist: []entryView{}, Denylist: []entryView{}}
	if p.TimeoutMs != nil {
		a.TimeoutMs = display.Escape(strings.TrimSpace(jsonInt(*p.TimeoutMs)))
	}
	for _, e := range p.Allowlist {
		a.Allowlist = append(a.Allowlist, entryView{Pattern: display.Escape(e.Pattern), LastUsedMs: e.LastUsedAt, LastUsed: display.Clip(e.LastUsedCommand, 200)})
	}
	for _, e := range p.Denylist {
		a.Denylist = append(a.Denylist, entryView{Pattern: display.Escape(e.Pattern)})
	}
	return a
}

func jsonInt(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// sessionView is one hub session override.
type sessionView struct {
	Agent       string `json:"agent"`
	Key         string `json:"key"` // the raw agent id, for clear`
	Security    string `json:"security,omitempty"`
	Ask         string `json:"ask,omitempty"`
	AskFallback string `json:"askFallback,omitempty"`
	Elevated    bool   `json:"elevated,omitempty"`
	ExpiresAtMs int64  `json:"expiresAtMs,omitempty"`
	SetBy       string `json:"setBy,omitempty"`
}

func sessionsOf(os []hub.SessionOverride) []sessionView {
	out := make([]sessionView, 0, len(os))
	for _, o := range os {
		out = append(out, sessionView{Agent: display.Escape(o.AgentID), Key: o.AgentID, Security: display.Escape(o.Security), Ask: display.Escape(o.Ask),
			AskFallback: display.Escape(o.AskFallback), Elevated: o.Elevated, ExpiresAtMs: o.ExpiresAtMs, SetBy: display.Escape(o.SetBy)})
	}
	return out
}
