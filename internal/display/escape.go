package display

import (
	"fmt"
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape renders s so that every character a terminal would not show as
// itself becomes a visible escape: C0 and C1 controls and DEL (so no ANSI
// sequence, carriage return or newline takes effect), bidi controls,
// zero-width and other invisible or blank-looking runes, private-use and
// unassigned code points, and invalid UTF-8. Ordinary printable text (é,
// 你好, emoji) and the ASCII space are kept as they are.
//
// The escapes are those of a Go string literal (\n, \t, \x1b, \u202e,
// \U000e0041; invalid bytes as \xNN) and a backslash becomes \\, so the
// result read as the body of a Go "..." literal is exactly s: two different
// inputs never look the same. Escape puts no newline in its result; callers
// that want a multi-line command on several lines split it first.
//
// Zero-width joiners are escaped even inside emoji sequences, since they
// also splice look-alike names; the emoji variation selectors U+FE0E and
// U+FE0F are kept only right after a symbol, where they change how it looks.
func Escape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for tok := range Tokens(s) {
		b.WriteString(tok.Text)
	}
	return b.String()
}

// Token is one input rune (or invalid byte) as displayed.
type Token struct {
	// Text is the rune itself or its escape.
	Text string
	// Cells is a conservative display width: exact for ASCII, and 2 for any
	// other rune, so lines wrapped by it never overflow the terminal.
	Cells int
}

// Tokens yields the display tokens of s, one per rune or invalid byte; their
// texts joined are Escape(s).
func Tokens(s string) iter.Seq[Token] {
	return func(yield func(Token) bool) {
		prev := rune(-1) // last rune shown as itself, -1 after an escape
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			raw := s[i : i+size]
			i += size
			var t Token
			switch {
			case r == utf8.RuneError && size == 1:
				t.Text = fmt.Sprintf(`\x%02x`, raw[0])
			case needsEscape(r, prev):
				t.Text = escapeRune(r)
			default:
				t.Text = raw
			}
			if t.Text == raw {
				prev = r
				t.Cells = 2
				if r < utf8.RuneSelf {
					t.Cells = 1
				}
			} else {
				prev = -1
				t.Cells = len(t.Text)
			}
			if !yield(t) {
				return
			}
		}
	}
}

// needsEscape reports whether r, following the shown rune prev, must be
// escaped.
func needsEscape(r, prev rune) bool {
	switch {
	case r == '\\':
		return true
	case r == '\uFE0E' || r == '\uFE0F':
		// Text/emoji presentation selectors are visible in effect after a
		// symbol (❤️); anywhere else they only make two names differ.
		return prev < utf8.RuneSelf || !unicode.Is(unicode.So, prev)
	case r == '\u2800':
		// Braille blank is printable but looks like a space.
		return true
	}
	// IsPrint rejects controls, format characters (bidi, zero-width, BOM,
	// soft hyphen, tags), separators other than ' ', private use and
	// unassigned code points. Default-ignorable letters and marks (Hangul
	// fillers, U+034F) and variation selectors render as nothing.
	return !unicode.IsPrint(r) ||
		unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// escapeRune spells r as a Go string literal escape.
func escapeRune(r rune) string {
	switch r {
	case '\\':
		return `\\`
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\v':
		return `\v`
	}
	switch {
	case r < utf8.RuneSelf:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xFFFF:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}
