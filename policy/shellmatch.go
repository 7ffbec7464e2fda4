package policy

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"syscall"

	"mvdan.cc/sh/v3/pattern"
)

// nameMatcher compiles a pattern matched against one name, as bash's
// globbing and fnmatch(3) read it (find -name): [!x] and [^x] negate,
// [[:alpha:]] is a class, a backslash quotes. path.Match reads neither
// [!x] nor classes, and took .[!x]nv not to match .env. Every option that
// could widen the match is on (a leading dot matches, extended globs);
// nil is a pattern it cannot read, which matches every name.
func nameMatcher(pat string, fold bool) *regexp.Regexp {
	mode := pattern.EntireString | pattern.GlobLeadingDot | pattern.ExtendedOperators | pattern.NoGlobStar
	if fold {
		mode |= pattern.NoGlobCase
	}
	expr, err := pattern.Regexp(pat, mode)
	if err != nil {
		return nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil
	}
	return re
}

// shellMatch reports whether name matches the shell pattern pat; a
// pattern it cannot read, or one malformed as path.Match reads it (an
// unclosed [), matches (fail closed).
func shellMatch(pat, name string) bool { return shellMatcher(pat)(name) }

// shellMatcher is shellMatch for one pattern and many names: the pattern
// is compiled once.
func shellMatcher(pat string) func(name string) bool {
	if _, err := path.Match(pat, ""); err != nil {
		return func(string) bool { return true }
	}
	re := nameMatcher(pat, false)
	if re == nil {
		return func(string) bool { return true }
	}
	return re.MatchString
}

// globLoss lists the paths on disk that the absolute pattern p names, as
// bash expands it (shellMatch, part by part; hidden names included, which
// only widens). A directory that cannot be read is an error.
func globLoss(p string) ([]string, error) {
	cur := []string{string(filepath.Separator)}
	for _, part := range splitPath(p) {
		var next []string
		if !pattern.HasMeta(part, pattern.ExtendedOperators) {
			for _, c := range cur {
				next = append(next, filepath.Join(c, part))
			}
			cur = next
			continue
		}
		match := shellMatcher(part)
		for _, c := range cur {
			entries, err := os.ReadDir(c)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
					continue
				}
				return nil, err
			}
			for _, e := range entries {
				if match(e.Name()) {
					next = append(next, filepath.Join(c, e.Name()))
				}
			}
		}
		cur = next
	}
	return cur, nil
}

// findGlobalOptions counts the words of args (find's, after its name)
// that are its options before the starting points: -H, -L, -P, -D with
// its value, -O with its level. find -L ../other -exec cat {} + starts in
// ../other, not in the current directory.
func findGlobalOptions(args []word) int {
	i := 0
	for i < len(args) && args[i].known {
		switch t := args[i].text; {
		case t == "-H" || t == "-L" || t == "-P":
			i++
		case t == "-D":
			i += 2
		case len(t) > 2 && t[:2] == "-O" || t == "-O":
			i++
		default:
			return min(i, len(args))
		}
	}
	return min(i, len(args))
}
