package pattern

import "strings"

// Prefix is argv[:last+1] followed by `**`, or "" if last is out of
// range or a word cannot be written literally.
func Prefix(argv []string, last int) string {
	if last < 0 || last >= len(argv) {
		return ""
	}
	p := Literal(argv[:last+1])
	if p == "" {
		return ""
	}
	return p + " **"
}

// Literal joins argv into a pattern without wildcards, which matches
// argv word for word, or returns "" when a word cannot be written literally.
func Literal(argv []string) string {
	for _, w := range argv {
		if !LiteralWord(w) {
			return ""
		}
	}
	return strings.Join(argv, " ")
}

// LiteralWord reports whether w can stand in a pattern as itself: not empty,
// no space (words are split on it), no glob syntax, and no sign of a value
// only known at run time (policy's Segment.Argv shows those as "$x" or "~").
func LiteralWord(w string) bool {
	return w != "" && !strings.HasPrefix(w, "~") && !strings.ContainsAny(w, " \t\n\r\v\f*?[]{}\\$`\x00")
}

// Exact is Literal(argv) anchored with EndWord: it matches argv word for
// word and nothing longer, or it is "" when a word cannot be written
// literally.
func Exact(argv []string) string {
	p := Literal(argv)
	if p == "" {
		return ""
	}
	return p + " " + EndWord
}
