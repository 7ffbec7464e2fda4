package replay

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/pattern"
	"github.com/execgate/execgate/policy"
)

// SchemaVersion is the version of Report's JSON form; it changes only
// when a field changes meaning or goes away.
const SchemaVersion = 1

// Report is what replaying a history found. Its JSON form is the schema
// `execgate replay --json` prints, documented in docs/replay.md.
type Report struct {
	Schema int `json:"schema"`
	// Files is the number of transcripts read; Problems the number of
	// problem lines: records or files that could not be read and were
	// skipped (a file lists at most 20, then how many more).
	Files    int `json:"files"`
	Problems int `json:"problems"`
	// Commands is the number of shell commands judged.
	Commands int      `json:"commands"`
	Outcomes Outcomes `json:"outcomes"`
	// Agents breaks the outcomes down by the agent policy they were
	// judged under.
	Agents []AgentReport `json:"agents"`
	// UnknownDirectory counts the commands judged in an unknown
	// directory, by why.
	UnknownDirectory UnknownDirectory `json:"unknownDirectory"`
	// Skipped counts the shell calls that were not commands run by a
	// shell, by why.
	Skipped []Skip `json:"skipped"`
	// First and Last are the times of the earliest and latest command,
	// when the transcripts say.
	First *time.Time `json:"first,omitempty"`
	Last  *time.Time `json:"last,omitempty"`
	// Sessions is how often each agent session would have been
	// interrupted.
	Sessions Sessions `json:"sessions"`
	// AskCauses are why commands would have asked, by the id of the rule
	// or reason the policy gives, commonest first.
	AskCauses []Cause `json:"askCauses"`
	// Dangerous is what the history holds that the policy calls
	// dangerous.
	Dangerous Dangerous `json:"dangerous"`
	// Suggestions are the allowlist entries that would have spared the
	// most questions, each with what else it would let through.
	Suggestions []Suggestion `json:"suggestions"`
}

// Outcomes count commands by what would have happened to them.
type Outcomes struct {
	// Allow: it runs unasked.
	Allow int `json:"allow"`
	// Confined: it runs unasked inside the kernel sandbox. Reserved for
	// the confined tier; 0 until it exists.
	Confined int `json:"confined"`
	// Ask: a person is asked (with nobody to answer, askFallback
	// decides).
	Ask int `json:"ask"`
	// Deny: it is refused.
	Deny int `json:"deny"`
}

// decisionConfined is the decision of the kernel sandbox tier (issue
// 24), which the policy does not have yet: a command that runs unasked,
// confined.
const decisionConfined policy.Decision = "confined"

// asks reports whether a decision puts a question to a person; one the
// tally does not know does, as it is never counted as running unasked.
func asks(d policy.Decision) bool {
	return d != policy.Allow && d != decisionConfined && d != policy.Deny
}

// add counts one decision; one it does not know counts as a question.
func (o *Outcomes) add(d policy.Decision) {
	switch d {
	case policy.Allow:
		o.Allow++
	case decisionConfined:
		o.Confined++
	case policy.Deny:
		o.Deny++
	default:
		o.Ask++
	}
}

// AgentReport is one agent policy's share of the history.
type AgentReport struct {
	Agent string `json:"agent"`
	// Policy is the policy the commands were judged under, the session's
	// override included: "security=allowlist ask=on-miss …".
	Policy   string   `json:"policy"`
	Commands int      `json:"commands"`
	Sessions int      `json:"sessions"`
	Outcomes Outcomes `json:"outcomes"`
}

// UnknownDirectory counts commands judged in an unknown directory.
type UnknownDirectory struct {
	// Unrecorded: the transcript does not say where it ran.
	Unrecorded int `json:"unrecorded"`
	// Gone: the directory it ran in no longer exists.
	Gone int `json:"gone"`
}

// Skip counts shell calls that are not commands a shell ran.
type Skip struct {
	Why   string `json:"why"`
	Count int    `json:"count"`
}

// Sessions is the questions per agent session.
type Sessions struct {
	Count int `json:"count"`
	// WithoutAsks is the number of sessions where nothing would have
	// asked.
	WithoutAsks int `json:"withoutAsks"`
	// AsksMedian, AsksP90 and AsksMax are the questions per session
	// (nearest rank).
	AsksMedian int `json:"asksMedian"`
	AsksP90    int `json:"asksP90"`
	AsksMax    int `json:"asksMax"`
}

// Cause is one reason commands would have asked.
type Cause struct {
	// Rule is the id of the policy's rule or reason (rules.json,
	// docs/calibration.md); in parentheses, a cause that is the policy's
	// setting rather than a reason: "(autoAllowSafe off)",
	// "(ask=always)", "(unnamed)".
	Rule string `json:"rule"`
	// Effect is what the reason is about: write, network, code …
	Effect string `json:"effect,omitempty"`
	// Asks is the number of asked commands with this cause (a command
	// may have several). When more distinct causes came than replay
	// keeps count of, it is a count the cause certainly had.
	Asks    int     `json:"asks"`
	Example Example `json:"example"`
}

// Example is one command behind a figure.
type Example struct {
	Command string `json:"command"`
	// Reason is the policy's reason, in words.
	Reason string `json:"reason,omitempty"`
	Agent  string `json:"agent"`
	// Where is the transcript and line it was read from.
	Where string `json:"where"`
}

// Dangerous is what the history holds that the policy calls dangerous.
type Dangerous struct {
	Commands int `json:"commands"`
	// Stopped: asked about or refused. LetThrough: allowed all the same
	// (an allowlist entry, security=full).
	Stopped    int `json:"stopped"`
	LetThrough int `json:"letThrough"`
	// Examples are the first few, one per distinct command.
	Examples []DangerousExample `json:"examples"`
}

// DangerousExample is one dangerous command and what would have become of
// it.
type DangerousExample struct {
	Command  string   `json:"command"`
	Decision string   `json:"decision"`
	Reasons  []string `json:"reasons"`
	Agent    string   `json:"agent"`
	Where    string   `json:"where"`
}

// Suggestion is an allowlist entry the policy itself would propose for
// commands that asked (policy.Engine.Proposals: never a wildcard over
// what a command does outside the workspace, to credentials, to code or
// the environment), with what it would let through.
type Suggestion struct {
	Agent   string `json:"agent"`
	Pattern string `json:"pattern"`
	// Removes is the number of asked commands this entry alone would have
	// let run; Helps the number with some part it covers.
	Removes int `json:"removes"`
	Helps   int `json:"helps"`
	// Scope says which commands it matches: "exact" (these words and
	// nothing more), "prefix" (these words, and longer commands for what
	// the program is for) or "wildcard" (commands the pattern matches,
	// for what the program is for).
	Scope string `json:"scope"`
	// Effects are the effects it lets run without a question: those of
	// the reasons it waives in the commands it covered.
	Effects []string `json:"effects"`
	Example string   `json:"example"`
	// Allow is the command that adds it.
	Allow string `json:"allow"`
}

// Caps on what the report lists; its counts are never capped.
const (
	maxCauses       = 1024 // distinct causes counted
	maxPatterns     = 4096 // distinct patterns counted
	maxDangerous    = 10   // dangerous examples listed
	maxShownCauses  = 10
	maxShownSuggest = 5
	maxExampleLen   = 200
)

// Tally adds up verdicts into a Report in memory that does not grow with
// the history: only the sessions and agents are kept one by one.
type Tally struct {
	files, problems, commands int
	outcomes                  Outcomes
	agents                    map[string]*agentTally
	unknown                   UnknownDirectory
	skipped                   map[string]int
	first, last               time.Time
	sessions                  map[string]*sessionTally
	causes                    *topK[*causeValue]
	dangerous                 Dangerous
	patterns                  *topK[*patternValue]
}

type agentTally struct {
	policy   config.Policy
	commands int
	sessions int
	outcomes Outcomes
}

type sessionTally struct{ asks int }

type causeValue struct {
	effect  string
	example Example
}

type patternValue struct {
	agent, pattern string
	removes        int
	effects        []string
	example        string
}

// NewTally starts a tally.
func NewTally() *Tally {
	return &Tally{agents: map[string]*agentTally{}, skipped: map[string]int{},
		sessions: map[string]*sessionTally{}, causes: newTopK[*causeValue](maxCauses),
		patterns: newTopK[*patternValue](maxPatterns)}
}

// File counts a transcript read.
func (t *Tally) File() { t.files++ }

// Problem counts a record skipped.
func (t *Tally) Problem() { t.problems++ }

// Skipped counts a shell call that no shell ran.
func (t *Tally) Skipped(why string) { t.skipped[why]++ }

// Add counts one command and its verdict.
func (t *Tally) Add(c Command, v Verdict) {
	p := v.Policy
	t.commands++
	t.outcomes.add(v.Decision)
	a := t.agents[v.Agent]
	if a == nil {
		a = &agentTally{policy: p}
		t.agents[v.Agent] = a
	}
	a.commands++
	a.outcomes.add(v.Decision)
	switch v.Unknown {
	case UnknownUnrecorded:
		t.unknown.Unrecorded++
	case UnknownGone:
		t.unknown.Gone++
	}
	if !c.Time.IsZero() {
		if t.first.IsZero() || c.Time.Before(t.first) {
			t.first = c.Time
		}
		if c.Time.After(t.last) {
			t.last = c.Time
		}
	}
	key := v.Agent + "\x00" + c.Session
	s := t.sessions[key]
	if s == nil {
		s = &sessionTally{}
		t.sessions[key] = s
		a.sessions++
	}
	if asks(v.Decision) {
		s.asks++
		t.askCauses(c, v, p)
		t.suggest(c, v, p)
	}
	if v.Risk == policy.Dangerous {
		t.danger(c, v)
	}
}

// askCauses counts the causes of one asked command, each once.
func (t *Tally) askCauses(c Command, v Verdict, p config.Policy) {
	var seen []string
	count := func(rule, effect, reason string) {
		if slices.Contains(seen, rule) {
			return
		}
		seen = append(seen, rule)
		t.causes.add(rule, func() *causeValue {
			return &causeValue{effect: effect, example: example(c, v, reason)}
		})
	}
	for _, s := range v.Segments {
		if s.Covered && !s.Opaque {
			continue
		}
		if len(s.Reasons) == 0 && s.Risk == policy.Safe {
			count("(autoAllowSafe off)", "", "read-only, and autoAllowSafe is off")
		}
		for _, r := range s.Reasons {
			if r.Risk == policy.Safe {
				continue
			}
			rule := r.Rule
			if rule == "" {
				rule = "(unnamed)"
			}
			count(rule, r.Effect, r.Text)
		}
	}
	if len(seen) == 0 && p.Ask == config.AskAlways {
		count("(ask=always)", "", "the policy asks about every command (ask=always)")
	}
	if len(seen) == 0 {
		reason := ""
		if len(v.Reasons) > 0 {
			reason = v.Reasons[0]
		}
		count("(unnamed)", "", reason)
	}
}

// suggest counts the allowlist entries that would cover one asked
// command: for each segment that needed approval, the widest pattern the
// policy proposes for it (Verdict.Proposals). The command is removed when
// one pattern covers every such segment.
func (t *Tally) suggest(c Command, v Verdict, p config.Policy) {
	if policy.Decide(p, false, true) != policy.Allow {
		return // ask=always, security=deny: no entry would spare the question
	}
	var chosen []string
	var effects [][]string
	whole := true
	for i, s := range v.Segments {
		if s.Covered || i >= len(v.Proposals) {
			continue
		}
		ps := v.Proposals[i]
		if len(ps) == 0 {
			whole = false
			continue
		}
		pat := ps[len(ps)-1]
		if k := slices.Index(chosen, pat); k >= 0 {
			effects[k] = union(effects[k], s.Effects())
			continue
		}
		chosen = append(chosen, pat)
		effects = append(effects, s.Effects())
	}
	for i, pat := range chosen {
		e := t.patterns.add(v.Agent+"\x00"+pat, func() *patternValue {
			return &patternValue{agent: v.Agent, pattern: pat, example: display.Flatten(c.Text, maxExampleLen)}
		})
		e.value.effects = union(e.value.effects, effects[i])
		if whole && len(chosen) == 1 {
			e.value.removes++
		}
	}
}

// danger counts one dangerous command.
func (t *Tally) danger(c Command, v Verdict) {
	t.dangerous.Commands++
	if v.Decision == policy.Allow {
		t.dangerous.LetThrough++
	} else {
		t.dangerous.Stopped++
	}
	if len(t.dangerous.Examples) >= maxDangerous {
		return
	}
	text := display.Flatten(c.Text, maxExampleLen)
	for _, e := range t.dangerous.Examples {
		if e.Command == text {
			return
		}
	}
	var reasons []string
	for _, s := range v.Segments {
		for _, r := range s.Reasons {
			if r.Risk == policy.Dangerous && !slices.Contains(reasons, r.Text) {
				reasons = append(reasons, r.Text)
			}
		}
	}
	t.dangerous.Examples = append(t.dangerous.Examples, DangerousExample{Command: text, Decision: string(v.Decision),
		Reasons: reasons, Agent: v.Agent, Where: c.Where()})
}

func example(c Command, v Verdict, reason string) Example {
	return Example{Command: display.Flatten(c.Text, maxExampleLen), Reason: display.Flatten(reason, maxExampleLen),
		Agent: v.Agent, Where: c.Where()}
}

// union adds to a the strings of b it lacks, in b's order.
func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// Report sums the tally up.
func (t *Tally) Report() Report {
	r := Report{Schema: SchemaVersion, Files: t.files, Problems: t.problems, Commands: t.commands,
		Outcomes: t.outcomes, UnknownDirectory: t.unknown, Dangerous: t.dangerous,
		Agents: []AgentReport{}, Skipped: []Skip{}, AskCauses: []Cause{}, Suggestions: []Suggestion{}}
	if r.Dangerous.Examples == nil {
		r.Dangerous.Examples = []DangerousExample{}
	}
	for name, a := range t.agents {
		r.Agents = append(r.Agents, AgentReport{Agent: name, Policy: describePolicy(a.policy), Commands: a.commands,
			Sessions: a.sessions, Outcomes: a.outcomes})
	}
	slices.SortFunc(r.Agents, func(a, b AgentReport) int {
		return cmp.Or(cmp.Compare(b.Commands, a.Commands), cmp.Compare(a.Agent, b.Agent))
	})
	for why, n := range t.skipped {
		r.Skipped = append(r.Skipped, Skip{Why: why, Count: n})
	}
	slices.SortFunc(r.Skipped, func(a, b Skip) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Why, b.Why)) })
	if !t.first.IsZero() {
		first, last := t.first, t.last
		r.First, r.Last = &first, &last
	}
	r.Sessions = t.sessionFigures()
	for _, e := range t.causes.sorted() {
		if len(r.AskCauses) == maxShownCauses {
			break
		}
		r.AskCauses = append(r.AskCauses, Cause{Rule: e.key, Effect: e.value.effect, Asks: e.count - e.err, Example: e.value.example})
	}
	r.Suggestions = t.suggestions()
	return r
}

// sessionFigures are the questions per session.
func (t *Tally) sessionFigures() Sessions {
	asks := make([]int, 0, len(t.sessions))
	for _, s := range t.sessions {
		asks = append(asks, s.asks)
	}
	slices.Sort(asks)
	out := Sessions{Count: len(asks)}
	for _, n := range asks {
		if n == 0 {
			out.WithoutAsks++
		}
	}
	if len(asks) > 0 {
		out.AsksMedian = nearestRank(asks, 50)
		out.AsksP90 = nearestRank(asks, 90)
		out.AsksMax = asks[len(asks)-1]
	}
	return out
}

// nearestRank is the p-th percentile of sorted, by the nearest-rank
// method: the smallest value at least p% of the values are at most.
func nearestRank(sorted []int, p int) int {
	rank := (p*len(sorted) + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// suggestions are the entries that would remove the most asks.
func (t *Tally) suggestions() []Suggestion {
	entries := t.patterns.sorted()
	slices.SortStableFunc(entries, func(a, b *topEntry[*patternValue]) int { return b.value.removes - a.value.removes })
	out := []Suggestion{}
	for _, e := range entries {
		if len(out) == maxShownSuggest || e.value.removes == 0 {
			break
		}
		v := e.value
		effects := v.effects
		if effects == nil {
			effects = []string{}
		}
		out = append(out, Suggestion{Agent: v.agent, Pattern: v.pattern, Removes: v.removes, Helps: e.count - e.err,
			Scope: scopeOf(v.pattern), Effects: effects, Example: v.example, Allow: allowCommand(v.agent, v.pattern)})
	}
	return out
}

// scopeOf says which commands a pattern matches (see Suggestion.Scope).
func scopeOf(p string) string {
	words := strings.Fields(p)
	switch {
	case len(words) > 1 && words[len(words)-1] == pattern.EndWord:
		return "exact"
	case strings.ContainsAny(p, "*?["):
		return "wildcard"
	}
	return "prefix"
}

// allowCommand is the command that adds pattern to agent's allowlist.
func allowCommand(agent, pattern string) string {
	q, err := syntax.Quote(pattern, syntax.LangBash)
	if err != nil {
		q = fmt.Sprintf("%q", pattern)
	}
	return fmt.Sprintf("execgate --agent %s allow %s", agent, q)
}

// describePolicy is a policy in one line, as `execgate check` says it.
func describePolicy(p config.Policy) string {
	s := fmt.Sprintf("security=%s ask=%s askFallback=%s autoAllowSafe=%t", p.Security, p.Ask, p.AskFallback, p.AutoAllowSafe)
	if p.AutoAllowWorkspaceRunners {
		s += " autoAllowWorkspaceRunners=true"
	}
	return s
}
