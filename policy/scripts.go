package policy

import (
	"strings"
)

// awkRedirect finds output redirections in an awk program (print > file),
// not comparisons (NR > 1).
var awkRedirect = &lazyRegexp{expr: `\bprintf?\b[^;{}\n]*>`}

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
	var programs []word
	for _, i := range v.options {
		t := v.words[i].text
		switch {
		case matchesAny([]string{"-f", "--file*", "-i", "--include*", "-l", "--load*", "-E", "--exec*"}, t):
			return "runs a program file that is not checked"
		case strings.HasPrefix(t, "--profile") || strings.HasPrefix(t, "--pretty-print") || strings.HasPrefix(t, "--dump-variables") ||
			len(t) >= 2 && t[0] == '-' && t[1] != '-' && strings.ContainsAny(t[1:2], "pod"):
			return "writes a file (" + t + ")"
		case t == "-e" || strings.HasPrefix(t, "-e") && !strings.HasPrefix(t, "--") || strings.HasPrefix(t, "--source") || strings.HasPrefix(t, "--exec"):
			if prog, ok := optionWordValue(v.words, i); ok {
				programs = append(programs, prog)
			}
		case awkFlag(t):
		default:
			return "takes an option execgate does not know (" + t + ")"
		}
	}
	if len(programs) == 0 {
		ops := v.operands()
		if len(ops) == 0 {
			return "reads its program from nowhere it can check"
		}
		programs = ops[:1]
	}
	for _, p := range programs {
		if why := awkProgramUnsafe(p); why != "" {
			return why
		}
	}
	return ""
}

// awkFlag reports whether t is an awk option that changes only how the
// program reads and prints: -F and -v with their values, and gawk's
// compatibility, lint and numeric switches.
func awkFlag(t string) bool {
	if strings.HasPrefix(t, "-F") || strings.HasPrefix(t, "-v") || strings.HasPrefix(t, "--field-separator") || strings.HasPrefix(t, "--assign") {
		return true
	}
	switch t {
	case "--", "-b", "-c", "-n", "-N", "-P", "-r", "-s", "-S", "-t", "-M", "-O", "-L", "-g",
		"--characters-as-bytes", "--traditional", "--copyright", "--version", "--help",
		"--non-decimal-data", "--use-lc-numeric", "--posix", "--re-interval", "--no-optimize",
		"--sandbox", "--lint", "--lint-old", "--bignum", "--optimize", "--gen-pot", "--csv", "-k":
		return true
	}
	return strings.HasPrefix(t, "--lint=")
}

// awkProgramUnsafe reports why an awk program's text is not read-only.
func awkProgramUnsafe(w word) string {
	if !w.known {
		return "runs a program only known at run time"
	}
	prog := w.text
	switch {
	case strings.Contains(prog, "system"):
		return "runs commands (system)"
	case strings.Contains(strings.ReplaceAll(prog, "||", ""), "|"):
		// || is awk's "or"; a | left is a pipe (print | "cmd", |&).
		return "pipes to or from a command"
	case awkRedirect.get().MatchString(prog):
		return "may write to a file (print >)"
	case strings.Contains(prog, "getline"):
		return "reads input it names itself (getline)"
	case strings.Contains(prog, "ENVIRON"):
		return "reads the environment, which may hold secrets"
	case strings.Contains(prog, "@load") || strings.Contains(prog, "@include") || strings.Contains(prog, "@namespace"):
		return "loads more program text or a library (@load, @include)"
	case strings.Contains(prog, "PROCINFO") || strings.Contains(prog, "ARGV") || strings.Contains(prog, "ARGC"):
		return "changes what it reads or how it runs (PROCINFO, ARGV)"
	}
	return ""
}

// awkOutputFiles returns the files gawk's --profile, --pretty-print and
// --dump-variables write (their values are attached, or a default name in
// the current directory).
func awkOutputFiles(v argView) []word {
	var out []word
	for _, i := range v.options {
		t := v.words[i].text
		for _, o := range []struct{ long, short, def string }{
			{"--profile", "-p", "awkprof.out"}, {"--pretty-print", "-o", "awkprof.out"}, {"--dump-variables", "-d", "awkvars.out"},
		} {
			switch {
			case strings.HasPrefix(t, o.long+"="):
				out = append(out, word{text: strings.TrimPrefix(t, o.long+"="), known: v.words[i].known})
			case t == o.long || t == o.short:
				out = append(out, word{text: o.def, known: true})
			case strings.HasPrefix(t, o.short) && !strings.HasPrefix(t, "--"):
				out = append(out, word{text: t[2:], known: v.words[i].known})
			}
		}
	}
	return out
}
