package display

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis ends text that Line or Shorten cut.
const Ellipsis = "…"

// Line shows s as one line of at most max bytes (no bound when max <= 0):
// runs of white space, line breaks included, become one space, the rest is
// escaped as by Escape, and text over the bound is cut between two displayed
// characters (never inside an escape) and ends in Ellipsis. The result never
// holds a control character, so a message built from it is one line on any
// terminal and in any log.
func Line(s string, max int) string {
	return Clip(strings.Join(strings.Fields(s), " "), max)
}

// Clip is Escape(s) bounded to max bytes (no bound when max <= 0): text over
// the bound is cut between two displayed characters, never inside an
// escape, and ends in Ellipsis. Unlike Line it keeps white space as it is
// (a newline shows as \n).
func Clip(s string, max int) string {
	if max <= 0 {
		return Escape(s)
	}
	var b strings.Builder
	var ends []int // where each displayed token ends in b
	for tok := range Tokens(s) {
		if b.Len()+len(tok.Text) > max {
			// Drop whole tokens until the ellipsis fits.
			out := b.String()
			for len(ends) > 0 && ends[len(ends)-1]+len(Ellipsis) > max {
				ends = ends[:len(ends)-1]
			}
			if len(ends) == 0 {
				return Ellipsis
			}
			return out[:ends[len(ends)-1]] + Ellipsis
		}
		b.WriteString(tok.Text)
		ends = append(ends, b.Len())
	}
	return b.String()
}

// Flatten puts s on one line of at most max bytes (no bound when max <= 0)
// without escaping it: runs of white space, line breaks included, become one
// space and text over the bound is shortened (Shorten). For text that whoever
// shows it escapes in turn, such as a prompt's reasons; anything else that
// shows text uses Line.
func Flatten(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if max <= 0 || len(s) <= max {
		return s
	}
	return Shorten(s, max-len(Ellipsis))
}

// Cut returns the longest prefix of s of at most n bytes that does not end
// inside a UTF-8 character. It adds nothing: for bounds on stored data.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Shorten returns s, or when it is longer than n bytes its Cut to n bytes
// followed by Ellipsis: for text a person reads.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Cut(s, n) + Ellipsis
}
