package shim

import "strings"

// A command runs without bash only when bash would pass each of its words
// on exactly as written. Rather than list what bash expands (globs, extended
// globs, braces, tildes, parameters, quotes, escapes, comments, and
// whatever a later bash adds), the shim lists what it surely leaves alone
// and sends every other word to bash.

// plainWord reports whether bash, running `bash -c` in its default
// (non-POSIX, non-interactive) mode, leaves word as it is in any position
// of a simple command: no quote removal, no expansion, no word splitting,
// no pathname expansion. It is the only check between a word of the
// program and an exec without bash, so it errs on the side of bash.
func plainWord(word string) bool {
	if word == "" {
		return false // only quotes make an empty word
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		switch {
		case plainByte(c):
		case c == '~':
			// A tilde prefix starts a word, and in a word that looks like
			// an assignment (bash expands `echo a=~/x` and `a=x:~/y`)
			// it follows '=' or ':'. Anywhere else it is a letter:
			// `HEAD~1` is common.
			if i == 0 || word[i-1] == '=' || word[i-1] == ':' {
				return false
			}
		case c >= 0x80:
			// Part of a multibyte character. In UTF-8 none of a
			// character's bytes is ASCII; in a locale whose characters
			// contain ASCII bytes (Big5, GBK, Shift JIS), those are
			// checked on their own here, so nothing special hides in one.
		default:
			return false
		}
	}
	return true
}

// plainByte reports whether c means itself to bash wherever it stands in
// a word: letters, digits and the punctuation that is neither an operator,
// a quote, an escape, an expansion nor a pattern character (`@` and `+`
// open extended globs only before '(', which is not plain).
func plainByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '.', '/', ',', '+', '%', '@', '=', ':', '^':
		return true
	}
	return false
}

// plainWords reports whether every word of argv is a plainWord and the
// command name is not a job spec: bash runs `%1` and `%name` as `fg %1`,
// whatever program of that name is on PATH.
func plainWords(argv []string) bool {
	if len(argv) > 0 && strings.HasPrefix(argv[0], "%") {
		return false
	}
	for _, w := range argv {
		if !plainWord(w) {
			return false
		}
	}
	return true
}
