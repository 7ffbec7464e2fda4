package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// No frame the hub sends may be longer than MaxLine, the limit its peers
// read with: a longer one breaks the peer's connection, and when it is a
// list or an event every approver's, each time it reconnects. So:
//
//   - A request is refused when the approval it makes would not fit in
//     one answer (maxApproval): a command too long to show a person is not
//     one a person can approve. Every pending approval then fits in an
//     exec.approval.get answer and in its exec.approval.requested event.
//   - exec.approval.list and session.list come in pages of at most
//     pageBudget bytes; the answer's "next" is the cursor of the next page.
//   - An event that would still be too long (a resolved approval with the
//     chosen patterns and message, a shim's report of a huge command) has
//     its display texts shortened with a marker and "truncated": true; its
//     id and decision are kept, and exec.approval.get has nothing more
//     once it is settled.
//   - Whatever else would be too long is answered with TOO_LARGE instead.

// Budgets, in bytes of encoded JSON.
const (
	// envelopeReserve is room for a frame's envelope around its result
	// or payload: id, ok, event name, the seal.
	envelopeReserve = 4 << 10
	// pageBudget bounds the result of one list page.
	pageBudget = MaxLine - envelopeReserve
	// maxApproval bounds one pending approval: it must fit a page, and
	// leave room for what settling adds (decision, approver, message).
	maxApproval = MaxLine - 2*envelopeReserve
	// maxClientID bounds the request id the hub echoes in an answer that
	// is near the limit; a longer one gets its answer without the id.
	maxClientID = 1 << 10
)

// truncatedMark ends a text the hub shortened.
const truncatedMark = "… [truncated by the hub]"

// marshal encodes v as the hub sends it: without HTML escaping, which
// would make a command of '<' six times as long on the wire as in the
// request that carried it.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// fits reports whether a frame of n bytes may be sent, seal included.
func fits(n int) bool { return n+sealSuffixMax <= MaxLine }

// checkApprovalSize refuses an approval too long to show an approver.
func checkApprovalSize(a Approval) error {
	b, err := marshal(a)
	if err != nil {
		return badRequest("cannot encode the request: " + oneLine(err.Error()))
	}
	if len(b) > maxApproval {
		return badRequest(fmt.Sprintf("the request is %d bytes as approvers would receive it, over the %d-byte limit: too long to show a person; refusing it", len(b), maxApproval))
	}
	return nil
}

// shortenTo cuts s to at most n bytes (on a character boundary), marked.
func shortenTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < len(truncatedMark) {
		n = len(truncatedMark)
	}
	cut := n - len(truncatedMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncatedMark
}

// shortenAll shortens every string of ss to n bytes.
func shortenAll(ss []string, n int) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shortenTo(s, n)
	}
	return out
}

// fitApproval returns a, or a copy with its display texts shortened (and
// Truncated set) so that it encodes in at most budget bytes. Each round
// halves the bound on every text, so a few rounds always do: the fields
// left whole are bounded (ids, times, the approver).
func fitApproval(a Approval, budget int) (Approval, []byte, error) {
	b, err := marshal(a)
	for n := 64 << 10; err == nil && len(b) > budget && n >= 16; n /= 2 {
		a = shortenApproval(a, n)
		b, err = marshal(a)
	}
	if err == nil && len(b) > budget {
		err = fmt.Errorf("approval %s: %d bytes after shortening, over %d", a.ID, len(b), budget)
	}
	return a, b, err
}

func shortenApproval(a Approval, n int) Approval {
	a.Truncated = true
	a.Command = shortenTo(a.Command, n)
	a.Cwd = shortenTo(a.Cwd, n)
	a.Via = shortenTo(a.Via, n)
	a.AgentID = shortenTo(a.AgentID, n)
	a.SessionKey = shortenTo(a.SessionKey, n)
	a.Reasons = shortenList(a.Reasons, n)
	a.Segments = shortenList(a.Segments, n)
	a.Patterns = shortenList(a.Patterns, n)
	if a.Proposals != nil {
		ps := make([]SegmentProposal, 0, min(len(a.Proposals), n))
		for _, p := range a.Proposals[:min(len(a.Proposals), n)] {
			ps = append(ps, SegmentProposal{Text: shortenTo(p.Text, n), Reasons: shortenList(p.Reasons, n), Patterns: shortenList(p.Patterns, n)})
		}
		a.Proposals = ps
	}
	return a
}

// shortenList keeps at most n entries of at most n bytes each.
func shortenList(ss []string, n int) []string {
	if len(ss) > n {
		ss = ss[:n]
	}
	return shortenAll(ss, n)
}

// fitReport is fitApproval for a shim's report.
func fitReport(r ExecReport, budget int) (ExecReport, []byte, error) {
	b, err := marshal(r)
	for n := 64 << 10; err == nil && len(b) > budget && n >= 16; n /= 2 {
		r.Truncated = true
		r.Command = shortenTo(r.Command, n)
		r.Cwd = shortenTo(r.Cwd, n)
		r.AgentID = shortenTo(r.AgentID, n)
		r.ID = shortenTo(r.ID, n)
		r.ApprovalID = shortenTo(r.ApprovalID, n)
		r.DecidedBy = shortenTo(r.DecidedBy, n)
		r.Scope = shortenTo(r.Scope, n)
		r.Reasons = shortenList(r.Reasons, n)
		r.Allowlisted = shortenList(r.Allowlisted, n)
		if r.Approver != nil {
			ap := *r.Approver
			ap.User, ap.Kind, ap.Host, ap.Name = shortenTo(ap.User, n), shortenTo(ap.Kind, n), shortenTo(ap.Host, n), shortenTo(ap.Name, n)
			r.Approver = &ap
		}
		b, err = marshal(r)
	}
	if err == nil && len(b) > budget {
		err = fmt.Errorf("report: %d bytes after shortening, over %d", len(b), budget)
	}
	return r, b, err
}

// eventPayload encodes an event's payload so that the event fits a line.
func eventPayload(name string, payload any) ([]byte, error) {
	budget := MaxLine - envelopeReserve
	switch p := payload.(type) {
	case Approval:
		_, b, err := fitApproval(p, budget)
		return b, err
	case ExecReport:
		_, b, err := fitReport(p, budget)
		return b, err
	}
	b, err := marshal(payload)
	if err == nil && len(b) > budget {
		err = fmt.Errorf("event %s: payload of %d bytes, over %d", name, len(b), budget)
	}
	return b, err
}

// page builds one page of a list from items in order, each encoded by
// enc, after the cursor: at most pageBudget bytes of items. next is the
// cursor of the item after the page, "" when the page is the last.
func page[T any](items []T, cursorOf func(T) string, enc func(T) ([]byte, error)) (raws []json.RawMessage, next string, err error) {
	size := 0
	for i, it := range items {
		b, err := enc(it)
		if err != nil {
			return nil, "", err
		}
		if len(raws) > 0 && size+len(b)+1 > pageBudget {
			return raws, cursorOf(items[i-1]), nil
		}
		raws = append(raws, b)
		size += len(b) + 1
	}
	return raws, "", nil
}

// listPage is one page of exec.approval.list, encoded once.
type listPage struct {
	Approvals []json.RawMessage `json:"approvals"`
	Next      string            `json:"next,omitempty"`
}

// sessionPage is one page of session.list.
type sessionPage struct {
	Sessions []json.RawMessage `json:"sessions"`
	Next     string            `json:"next,omitempty"`
}

// seqCursor parses an approval list cursor: the creation number of the
// last approval seen, decimal; "" for the start.
func seqCursor(c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(c, 10, 64)
	if err != nil {
		return 0, badRequest("cursor: use the next of the previous page")
	}
	return n, nil
}

// requestBudget bounds a request's params, so that the approval the hub
// makes of it (a few fields more) stays within maxApproval.
const requestBudget = maxApproval - 1<<10

// FitRequest returns r, or when the approval it makes would be too long
// to reach an approver whole, a copy whose per-segment texts (Segments,
// each proposal's text and reasons, the reasons) are shortened with a
// marker, and whose proposals drop the "allow always" patterns too long to
// keep (a pattern cannot be shortened: what is saved must be what was
// shown; without it that segment is simply asked again). The command, cwd
// and agent stay whole: if they alone are too long, the hub refuses the
// request, and the shim the command.
func FitRequest(r ApprovalRequest) ApprovalRequest {
	if b, err := marshal(r); err != nil || len(b) <= requestBudget {
		return r
	}
	out := r
	for n := 32 << 10; n >= 16; n /= 2 {
		out = r
		out.Reasons = shortenList(r.Reasons, n)
		out.Segments = shortenList(r.Segments, n)
		if r.Proposals != nil {
			out.Proposals = make([]SegmentProposal, len(r.Proposals))
			for i, p := range r.Proposals {
				var keep []string
				for _, pat := range p.Patterns {
					if len(pat) <= n {
						keep = append(keep, pat)
					}
				}
				out.Proposals[i] = SegmentProposal{Text: shortenTo(p.Text, n), Reasons: shortenList(p.Reasons, n), Patterns: keep}
			}
		}
		if b, err := marshal(out); err == nil && len(b) <= requestBudget {
			break
		}
	}
	return out
}
