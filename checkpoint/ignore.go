package checkpoint

import (
	"bufio"
	"bytes"
	"strings"
)

// This file reads git's ignore rules (gitignore(5)) for the walk: a
// checkpoint of a git workspace leaves out what git leaves out. It is a
// reader of the ignore files' lines and git's wildmatch, written here
// because the Go implementations at hand either pull a configuration
// parser and its dependencies into every shim process (go-git) or are
// unmaintained; TestIgnoreMatchesGit holds it to the real git.

// ignorePattern is one line of an ignore file.
type ignorePattern struct {
	// base is the directory of the file, relative to the workspace ("" at
	// the top): the pattern applies below it.
	base     string
	glob     string
	negate   bool
	dirOnly  bool
	anchored bool // matched against the path below base, not the name
}

// ignoreRules are the patterns in force in one directory, lowest
// precedence first: the global excludes file, .git/info/exclude, then each
// .gitignore from the top down.
type ignoreRules struct {
	patterns []ignorePattern
}

// with returns the rules with the lines of an ignore file in directory
// base added (on a copy: sibling directories do not see each other's).
func (r *ignoreRules) with(base string, data []byte) *ignoreRules {
	ps := parseIgnore(base, data)
	if len(ps) == 0 {
		return r
	}
	out := &ignoreRules{patterns: make([]ignorePattern, 0, len(r.patterns)+len(ps))}
	out.patterns = append(append(out.patterns, r.patterns...), ps...)
	return out
}

// maxIgnoreFile bounds an ignore file read (git reads any size; one this
// large is not a list of patterns anyone maintains).
const maxIgnoreFile = 1 << 20

// parseIgnore reads the lines of an ignore file.
func parseIgnore(base string, data []byte) []ignorePattern {
	var out []ignorePattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxIgnoreFile)
	for sc.Scan() {
		if p, ok := parseIgnoreLine(base, sc.Text()); ok {
			out = append(out, p)
		}
	}
	return out
}

func parseIgnoreLine(base, line string) (ignorePattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return ignorePattern{}, false
	}
	p := ignorePattern{base: base}
	if line[0] == '!' {
		p.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignorePattern{}, false
	}
	if strings.Contains(line, "/") {
		p.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	p.glob = line
	return p, line != ""
}

// trimTrailingSpaces drops the spaces at the end of a line, except one
// escaped with a backslash.
func trimTrailingSpaces(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		if end >= 2 && s[end-2] == '\\' {
			break
		}
		end--
	}
	return s[:end]
}

// ignored reports whether the entry rel (relative to the workspace) is
// ignored: the last pattern that matches decides, and a negated one
// re-includes.
func (r *ignoreRules) ignored(rel string, isDir bool) bool {
	if r == nil {
		return false
	}
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	for i := len(r.patterns) - 1; i >= 0; i-- {
		p := &r.patterns[i]
		if p.dirOnly && !isDir {
			continue
		}
		sub := rel
		if p.base != "" {
			if !strings.HasPrefix(rel, p.base+"/") {
				continue
			}
			sub = rel[len(p.base)+1:]
		}
		var hit bool
		if p.anchored {
			hit = wildmatch(p.glob, sub)
		} else {
			hit = wildmatch(p.glob, name)
		}
		if hit {
			return !p.negate
		}
	}
	return false
}

// wildmatch matches text against a gitignore glob as git's wildmatch does
// with WM_PATHNAME: '*' and '?' stop at '/', "**" as a whole path name
// crosses them, brackets hold sets, ranges and [:classes:], and a
// backslash quotes the next byte.
func wildmatch(pat, text string) bool {
	return wm(pat, 0, text) == wmMatch
}

type wmResult int

const (
	wmMatch wmResult = iota
	wmNoMatch
	wmAbortAll        // no later start of the text can match either
	wmAbortToStarStar // only a "**" further back can still match
)

// wm matches pat[i:] against t; pat whole is needed to look behind a star.
func wm(pat string, i int, t string) wmResult {
	for ; i < len(pat); i++ {
		pc := pat[i]
		if len(t) == 0 && pc != '*' {
			return wmAbortAll
		}
		switch pc {
		case '?':
			if t[0] == '/' {
				return wmNoMatch
			}
		case '*':
			return wmStar(pat, i, t)
		case '[':
			next, r := wmBracket(pat, i, t[0])
			if r != wmMatch {
				return r
			}
			i = next
		case '\\':
			i++
			if i >= len(pat) || t[0] != pat[i] {
				return wmNoMatch
			}
		default:
			if t[0] != pc {
				return wmNoMatch
			}
		}
		t = t[1:]
	}
	if len(t) == 0 {
		return wmMatch
	}
	return wmNoMatch
}

// wmStar matches from the star at pat[i].
func wmStar(pat string, i int, t string) wmResult {
	matchSlash := false
	j := i + 1
	if j < len(pat) && pat[j] == '*' {
		for j < len(pat) && pat[j] == '*' {
			j++
		}
		// "**" is special only as a whole path name.
		if (i == 0 || pat[i-1] == '/') && (j == len(pat) || pat[j] == '/' || (pat[j] == '\\' && j+1 < len(pat) && pat[j+1] == '/')) {
			if j < len(pat) && pat[j] == '/' && wm(pat, j+1, t) == wmMatch {
				return wmMatch // "**/" standing for no directory
			}
			matchSlash = true
		}
	}
	if j == len(pat) {
		if !matchSlash && strings.IndexByte(t, '/') >= 0 {
			return wmNoMatch
		}
		return wmMatch
	}
	if !matchSlash && pat[j] == '/' {
		// One star before a slash matches the rest of this name.
		k := strings.IndexByte(t, '/')
		if k < 0 {
			return wmNoMatch
		}
		return wm(pat, j, t[k:])
	}
	for len(t) > 0 {
		r := wm(pat, j, t)
		if r != wmNoMatch {
			if !matchSlash || r != wmAbortToStarStar {
				return r
			}
		} else if !matchSlash && t[0] == '/' {
			return wmAbortToStarStar
		}
		t = t[1:]
	}
	return wmAbortAll
}

// wmBracket matches c against the bracket expression at pat[i] and
// returns the index of its closing ']'.
func wmBracket(pat string, i int, c byte) (int, wmResult) {
	i++
	if i >= len(pat) {
		return i, wmAbortAll
	}
	negated := false
	if pat[i] == '!' || pat[i] == '^' {
		negated = true
		i++
	}
	matched := false
	var prev byte
	for first := true; ; first = false {
		if i >= len(pat) {
			return i, wmAbortAll // not closed
		}
		pc := pat[i]
		if pc == ']' && !first {
			break
		}
		switch {
		case pc == '\\':
			i++
			if i >= len(pat) {
				return i, wmAbortAll
			}
			pc = pat[i]
			if c == pc {
				matched = true
			}
		case pc == '-' && prev != 0 && i+1 < len(pat) && pat[i+1] != ']':
			i++
			hi := pat[i]
			if hi == '\\' {
				i++
				if i >= len(pat) {
					return i, wmAbortAll
				}
				hi = pat[i]
			}
			if prev <= c && c <= hi {
				matched = true
			}
			pc = 0
		case pc == '[' && i+1 < len(pat) && pat[i+1] == ':':
			end := strings.IndexByte(pat[i+2:], ']')
			if end < 0 {
				return i, wmAbortAll
			}
			name := pat[i+2 : i+2+end]
			if !strings.HasSuffix(name, ":") {
				// Not a class after all: a literal '['.
				if c == '[' {
					matched = true
				}
				break
			}
			ok, known := inClass(strings.TrimSuffix(name, ":"), c)
			if !known {
				return i, wmAbortAll
			}
			if ok {
				matched = true
			}
			i += 2 + end
			pc = 0
		default:
			if c == pc {
				matched = true
			}
		}
		prev = pc
		i++
	}
	if matched == negated || c == '/' {
		return i, wmNoMatch
	}
	return i, wmMatch
}

// inClass tests c against a POSIX class name (ASCII, as git's wildmatch).
func inClass(class string, c byte) (ok, known bool) {
	switch class {
	case "alnum":
		return isAlpha(c) || isDigit(c), true
	case "alpha":
		return isAlpha(c), true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit(c), true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return c >= 'a' && c <= 'z', true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c), true
	case "space":
		return c == ' ' || (c >= '\t' && c <= '\r'), true
	case "upper":
		return c >= 'A' && c <= 'Z', true
	case "xdigit":
		return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
