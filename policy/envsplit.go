package policy

import "strings"

// envSplit splits the string of `env -S STRING` (--split-string) into the
// words env runs, by GNU env's own rules, checked against coreutils' env:
// blanks separate words; '…' keeps everything but \' and \\; "…" takes the
// escapes; outside quotes \_ separates too and # at the start of a word
// ends the string; \c ends it anywhere; \f \n \r \t \v are those
// characters, \# \$ \" \' \\ themselves; ${NAME} is the variable's value.
// ok is false for what env refuses (an unknown escape, $NAME, an open
// quote) and for what only the environment decides (${NAME}): the words
// are then not known.
func envSplit(s string) (words []string, ok bool) {
	var cur strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
				continue
			}
			if c == '\\' && i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '\\') {
				i++
				c = s[i]
			}
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			if quote == c {
				quote = 0
				continue
			}
			if quote == 0 {
				quote, inWord = c, true
				continue
			}
			cur.WriteByte(c) // ' inside "…"
		case c == '$':
			return nil, false // ${NAME} is the environment's; $NAME an error
		case c == '\\':
			if i+1 == len(s) {
				return nil, false
			}
			i++
			switch e := s[i]; e {
			case 'c':
				if quote != 0 {
					return nil, false
				}
				end()
				return words, true
			case '_':
				if quote == 0 {
					end()
					continue
				}
				cur.WriteByte(' ')
			case 'f':
				cur.WriteByte('\f')
			case 'n':
				cur.WriteByte('\n')
			case 'r':
				cur.WriteByte('\r')
			case 't':
				cur.WriteByte('\t')
			case 'v':
				cur.WriteByte('\v')
			case '#', '$', '"', '\'', '\\':
				cur.WriteByte(e)
			default:
				return nil, false
			}
			inWord = true
		case quote == '"':
			cur.WriteByte(c)
		case c == ' ' || c == '\t' || c == '\n':
			end()
		case c == '#' && !inWord:
			return words, true // a comment to the end of the string
		case c < ' ' || c == 0x7f:
			return nil, false // a control byte env may read otherwise
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, false
	}
	end()
	return words, true
}
