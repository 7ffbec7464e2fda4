package policy

import (
	"regexp"
	"strings"
)

// awkRedirect finds output redirections in an awk program (print > file),
// not comparisons (NR > 1).
var awkRedirect = regexp.MustCompile(`\bprintf?\b[^;{}\n]*>`)

// sedUnsafe returns why a sed invocation is not read-only, or "". sed is
// read-only unless it edits in place, reads its script from a file, or its
// script uses the commands that write files or run programs (w, W, e, and
// the w and e flags of s).
//
// When the script runs its pattern space (s///e), code is the replacement
// text: the command it will run, as far as it is known.
func sedUnsafe(v argView) (why, code string) {
	if v.has("-i", "--in-place*", "-s") {
		return "edits files in place", ""
	}
	if v.has("-f", "--file*") {
		return "runs a script file that is not checked", ""
	}
	var scripts []string
	for _, i := range v.options {
		if optionMatches("-e", v.words[i].text) || optionMatches("--expression", v.words[i].text) {
			if w, ok := optionWordValue(v.words, i); ok {
				scripts = append(scripts, w.text)
			}
		}
	}
	ops := v.operands()
	if len(scripts) == 0 && len(ops) > 0 {
		scripts = append(scripts, ops[0].text)
	}
	for _, s := range scripts {
		if why, code := sedScriptUnsafe(s); why != "" {
			return why, code
		}
	}
	return "", ""
}

// sedScriptUnsafe scans a sed script for commands that write or execute.
// It is conservative: anything it cannot follow counts as unsafe.
func sedScriptUnsafe(script string) (why, code string) {
	i := 0
	next := func() byte {
		if i < len(script) {
			c := script[i]
			i++
			return c
		}
		return 0
	}
	skipRegex := func(delim byte) bool {
		for i < len(script) {
			c := next()
			if c == '\\' {
				next()
				continue
			}
			if c == delim {
				return true
			}
		}
		return false
	}
	for i < len(script) {
		c := next()
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!' || c == ',' || c == '$' ||
			(c >= '0' && c <= '9') || c == '~' || c == '+':
			continue
		case c == '/':
			if !skipRegex('/') {
				return "has a script it cannot follow", ""
			}
		case c == '\\':
			if !skipRegex(next()) {
				return "has a script it cannot follow", ""
			}
		case c == 's' || c == 'y':
			delim := next()
			if delim == 0 || delim == '\\' || delim == '\n' {
				return "has a script it cannot follow", ""
			}
			if !skipRegex(delim) {
				return "has a script it cannot follow", ""
			}
			replStart := i
			if !skipRegex(delim) {
				return "has a script it cannot follow", ""
			}
			repl := script[replStart : i-1]
			if c == 'y' {
				continue
			}
			for i < len(script) && strings.IndexByte("gpiImM0123456789ew", script[i]) >= 0 {
				switch next() {
				case 'w':
					return "writes to a file (s///w)", ""
				case 'e':
					return "runs the pattern space as a command (s///e)", repl
				}
			}
		case c == 'w' || c == 'W':
			return "writes to a file (w)", ""
		case c == 'e':
			return "runs a command (e)", ""
		case c == 'r' || c == 'R':
			return "reads a file named in its script (r)", ""
		case c == 'a' || c == 'i' || c == 'c' || c == 'b' || c == 't' || c == 'T' || c == ':' || c == 'q' || c == 'Q' || c == 'l' || c == 'L':
			// The rest of the line is text or a label.
			for i < len(script) && script[i] != '\n' && (c == 'a' || c == 'i' || c == 'c' || script[i] != ';') {
				i++
			}
		case strings.IndexByte("pdDnNgGhHxPz=F", c) >= 0:
			continue
		default:
			return "has a script it cannot follow", ""
		}
	}
	return "", ""
}

// awkUnsafe returns why an awk invocation is not read-only, or "": awk
// programs can run commands (system, pipes to or from commands) and write
// files (print > file).
func awkUnsafe(v argView) string {
	if v.has("-f", "--file*", "-i", "--include*", "-l", "--load*", "-E", "--exec*") {
		return "runs a program file that is not checked"
	}
	ops := v.operands()
	if len(ops) == 0 {
		return "reads its program from nowhere it can check"
	}
	prog := ops[0].text
	switch {
	case strings.Contains(prog, "system"):
		return "runs commands (system)"
	case strings.Contains(prog, "|"):
		return "pipes to or from a command"
	case awkRedirect.MatchString(prog):
		return "may write to a file (print >)"
	case strings.Contains(prog, "getline"):
		return "reads input it names itself (getline)"
	case strings.Contains(prog, "ENVIRON"):
		return "reads the environment, which may hold secrets"
	}
	return ""
}
