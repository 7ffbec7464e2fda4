package approve

import (
	"strings"
	"unicode/utf8"
)

// Control bytes with a meaning of their own.
const (
	keyCtrlC = 0x03
	keyCtrlD = 0x04
	keyEsc   = 0x1b
)

// arrowKey names the cursor key whose sequence (CSI A or SS3 A...) ends
// in b, or returns "".
func arrowKey(b byte) string {
	const finals = "ABCD"
	names := [...]string{"up", "down", "right", "left"}
	if i := strings.IndexByte(finals, b); i >= 0 {
		return names[i]
	}
	return ""
}

// parseKeys splits what one read from a raw terminal returned into key
// names: a printable rune is itself ("a", "é"), cursor keys are "up",
// "down", "left" and "right", Ctrl-C and Ctrl-D "ctrl+c" and "ctrl+d",
// Return "enter", Backspace "backspace".
// Other escape sequences (function keys, Alt+key, mouse or focus reports)
// and control bytes become "" so that none of their bytes is taken for a
// key of its own: the "a" of Alt-a must not allow anything.
func parseKeys(b []byte) []string {
	var keys []string
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == keyEsc:
			name, n := escapeKey(b[i:])
			keys = append(keys, name)
			i += n
		case c == keyCtrlC:
			keys = append(keys, "ctrl+c")
			i++
		case c == keyCtrlD:
			keys = append(keys, "ctrl+d")
			i++
		case c == '\r' || c == '\n':
			keys = append(keys, "enter")
			i++
		case c == 0x7f || c == 0x08:
			keys = append(keys, "backspace")
			i++
		case c < 0x20:
			keys = append(keys, "")
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError {
				keys = append(keys, "")
			} else {
				keys = append(keys, string(r))
			}
			i += n
		}
	}
	return keys
}

// escapeKey reads the sequence at the start of b (b[0] is ESC) and returns
// its name and length.
func escapeKey(b []byte) (string, int) {
	if len(b) == 1 {
		return "esc", 1
	}
	switch b[1] {
	case '[':
		// CSI: parameter and intermediate bytes, then one final byte.
		for j := 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				if j == 2 {
					return arrowKey(b[j]), j + 1
				}
				return "", j + 1
			}
		}
		return "", len(b)
	case 'O':
		// SS3: one byte follows (cursor keys in application mode, F1-F4).
		if len(b) < 3 {
			return "", len(b)
		}
		return arrowKey(b[2]), 3
	}
	// Alt+key: ESC then the key (a whole rune).
	_, n := utf8.DecodeRune(b[1:])
	return "", 1 + n
}
