// Package redact removes known secret shapes (cloud and forge tokens, API
// keys, private-key blocks, Authorization header values) from what execgate
// stores: the audit log's command text and output tail, and spilled output.
// It never touches what a command shows its caller; it only keeps secrets
// out of files that outlive the command.
//
// Redaction is by shape, from the table in rules.go: a secret with no
// recognisable shape (a password, a random hex string) is not found. It is
// a second line of defence behind not storing credential-reading commands'
// output at all.
package redact

import (
	"bytes"
	"io"
	"slices"
)

// span is one stretch of text to replace, with the rule that found it.
type span struct {
	start, end int
	name       string
	// growing is set for a private-key block whose END line has not been
	// seen: more of it may follow in a stream.
	growing bool
}

// findSpans returns the stretches of text to replace, in order and not
// overlapping (overlapping matches of different rules are merged, named
// after the earliest); stream leaves out the rules that need the whole
// text.
func findSpans(text []byte, stream bool) []span {
	if len(text) == 0 {
		return nil
	}
	at := hints.get().find(text)
	if at == nil {
		return nil // no hint, no secret: the common case
	}
	rules := compiledRules.get()
	var out []span
	for i := range rules {
		r := &rules[i]
		if (stream && r.wholeOnly) || len(at[i]) == 0 {
			continue
		}
		if r.open || r.wholeOnly {
			// Unbounded: searched whole (their expressions start with
			// a literal, which the regexp package finds fast).
			out = r.appendSpans(out, text, 0, r.re.FindAllSubmatchIndex(text, -1))
			continue
		}
		for _, p := range at[i] {
			if r.wordStart && p > 0 && isWord(text[p-1]) {
				continue
			}
			end := min(len(text), p+maxToken)
			m := r.anchored.FindSubmatchIndex(text[p:end])
			if m == nil || (m[1] == end-p && end < len(text)) {
				continue // none, or one that saw a false end of text
			}
			out = r.appendSpans(out, text, p, [][]int{m})
		}
	}
	if len(out) < 2 {
		return out
	}
	slices.SortStableFunc(out, func(a, b span) int { return a.start - b.start })
	merged := out[:1]
	for _, sp := range out[1:] {
		last := &merged[len(merged)-1]
		if sp.start < last.end {
			if sp.end > last.end {
				last.end, last.growing = sp.end, sp.growing
			}
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// maxToken bounds a bounded rule's match: the longest is an
// Authorization header with a 1001-character credential.
const maxToken = 2 << 10

// appendSpans appends the matches ms, found in text[from:], as spans.
func (r *rule) appendSpans(out []span, text []byte, from int, ms [][]int) []span {
	for _, m := range ms {
		s, e := from+m[0], from+m[1]
		if len(m) >= 4 && m[2] >= 0 {
			s, e = from+m[2], from+m[3]
		}
		if s == e || (r.notSecret != nil && r.notSecret.Match(text[s:e])) {
			continue
		}
		growing := r.open && !bytes.Contains(text[s:e], []byte(keyEnd))
		out = append(out, span{start: s, end: e, name: r.name, growing: growing})
	}
	return out
}

// isWord reports whether c is a word character for \b.
func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// hintIndex finds, in one pass over a text, which rules' hints it holds,
// ignoring ASCII case, and where. Most output holds none, and then no
// regular expression runs at all.
type hintIndex struct {
	// byFirst lists the hints by their first byte, in both cases.
	byFirst [256][]hintRef
}

type hintRef struct {
	lit  string // lower case
	rule int
}

// hints is built once, on first use, from the rule table and only read
// after.
var hints = &lazy[*hintIndex]{build: func() *hintIndex { return newHintIndex(ruleTable) }}

func newHintIndex(rs []rule) *hintIndex {
	h := &hintIndex{}
	for i, r := range rs {
		for _, lit := range r.hints {
			ref := hintRef{lit: lit, rule: i}
			c := lit[0]
			h.byFirst[c] = append(h.byFirst[c], ref)
			if up := upper(c); up != c {
				h.byFirst[up] = append(h.byFirst[up], ref)
			}
		}
	}
	return h
}

// find returns, for each rule, the offsets in text where its hints occur.
func (h *hintIndex) find(text []byte) [][]int {
	var at [][]int
	for i, c := range text {
		refs := h.byFirst[c]
		if refs == nil {
			continue
		}
		for _, r := range refs {
			if hasPrefixFold(text[i:], r.lit) {
				if at == nil {
					at = make([][]int, len(ruleTable))
				}
				if k := len(at[r.rule]); k == 0 || at[r.rule][k-1] != i {
					at[r.rule] = append(at[r.rule], i)
				}
			}
		}
	}
	return at
}

// hasPrefixFold reports whether text starts with lit (lower case),
// ignoring ASCII case.
func hasPrefixFold(text []byte, lit string) bool {
	if len(text) < len(lit) {
		return false
	}
	for j := 0; j < len(lit); j++ {
		c := text[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[j] {
			return false
		}
	}
	return true
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// marker is what replaces a secret.
func marker(name string) string { return markerOpen + name + markerClose }

// appendRedacted appends text[from:to] to dst with the spans inside it
// replaced by markers. Spans must lie wholly inside or outside the range.
func appendRedacted(dst, text []byte, spans []span, from, to int) []byte {
	for _, sp := range spans {
		if sp.start < from || sp.start >= to {
			continue
		}
		dst = append(dst, text[from:sp.start]...)
		dst = append(dst, marker(sp.name)...)
		from = sp.end
	}
	return append(dst, text[from:to]...)
}

// Bytes returns text with every known secret shape replaced by a marker
// such as [REDACTED:github-token]. Redacting twice changes nothing.
func Bytes(text []byte) []byte {
	spans := findSpans(text, false)
	if len(spans) == 0 {
		return text
	}
	return appendRedacted(make([]byte, 0, len(text)), text, spans, 0, len(text))
}

// String is Bytes for a string.
func String(s string) string {
	if s == "" {
		return s
	}
	out := Bytes([]byte(s))
	return string(out)
}

// keyEnd starts the line that closes a private-key block.
const keyEnd = "-----END "

// maxKeyEnd bounds the END line: the dashes, the longest label pemLabel
// allows, and the closing dashes.
const maxKeyEnd = len(keyEnd) + 40 + len("PRIVATE KEY BLOCK-----")

// mayEndKey reports whether rest, what follows a key's body, may yet
// become its END line: it is empty, or the start of one still arriving.
func mayEndKey(rest []byte) bool {
	if len(rest) <= len(keyEnd) {
		return bytes.HasPrefix([]byte(keyEnd), rest)
	}
	return bytes.HasPrefix(rest, []byte(keyEnd)) && len(rest) < maxKeyEnd && bytes.IndexByte(rest, '\n') < 0
}

// window is how much of a line the Writer holds back in case a token
// continues in the next write. It exceeds the longest bounded token shape
// (maxToken), so a token cut by a write boundary is always whole in the
// held-back part.
const window = 2 * maxToken

// Writer redacts a stream on its way to w. A secret split across writes is
// still found: the Writer holds back the last incomplete line (at most
// window bytes of it) until more arrives or Close is called. Close must be
// called to write what is held; it does not close w.
type Writer struct {
	w    io.Writer
	held []byte // written to the Writer, not yet passed on
	out  []byte // scratch: what is passed on
	// inKey says a private-key block is being cut: its BEGIN line was
	// replaced, and what follows of it is dropped.
	inKey bool
	err   error
}

// NewWriter returns a Writer that passes the redacted stream on to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write takes the next part of the stream. It reports len(p) unless w
// failed, in which case every later call fails too.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.held = append(w.held, p...)
	if err := w.pass(false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close passes on what is held back.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.pass(true)
}

// pass writes out as much of the held text as is settled: every whole
// line, and all but window bytes of a long one, never cutting a token.
// With final, everything.
func (w *Writer) pass(final bool) error {
	text := w.held
	if w.inKey {
		m := keyCont.get().Find(text)
		text = text[len(m):]
		if !final && !bytes.Contains(m, []byte(keyEnd)) && mayEndKey(text) {
			// All body so far, or an END line not yet whole.
			w.held = append(w.held[:0], text...)
			return nil
		}
		w.inKey = false
	}
	cut := len(text)
	if !final {
		cut = bytes.LastIndexByte(text, '\n') + 1
		if len(text)-cut > window {
			cut = len(text) - window
		}
	}
	spans := findSpans(text, true)
	rest := cut // where the held text starts after this pass
	for i, sp := range spans {
		if sp.start >= cut {
			break
		}
		if sp.growing && !final {
			// A key block still open: replace what there is, and drop
			// the rest of it as it comes.
			spans, cut, rest, w.inKey = spans[:i+1], sp.end, sp.end, true
			break
		}
		if sp.end > cut {
			// A token across the cut may still grow: hold it back whole.
			cut, rest = sp.start, sp.start
			spans = spans[:i]
			break
		}
	}
	w.out = appendRedacted(w.out[:0], text, spans, 0, cut)
	w.held = append(w.held[:0], text[rest:]...)
	if len(w.out) > 0 {
		if _, err := w.w.Write(w.out); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// Example is one rule's sample secret, for tests that check redaction
// end to end.
type Example struct {
	// Name is the rule's name, as in the marker.
	Name string
	// Text holds the secret; Secret is the part that must not survive.
	Text, Secret string
}

// Examples returns a sample of every shape the stream Writer finds (the
// end-of-key shape, found only in whole text, is left out).
func Examples() []Example {
	var out []Example
	for _, r := range compiledRules.get() {
		if r.wholeOnly {
			continue
		}
		m := r.re.FindStringSubmatchIndex(r.example)
		secret := r.example[m[0]:m[1]]
		if len(m) >= 4 && m[2] >= 0 {
			secret = r.example[m[2]:m[3]]
		}
		out = append(out, Example{Name: r.name, Text: r.example, Secret: secret})
	}
	return out
}

// Marker returns what replaces a secret found by the rule name.
func Marker(name string) string { return marker(name) }
