package policy

import (
	"path"
	"strings"
)

// pathContext is what normalizePath needs to know about where a program
// runs: the user's home, what ~ means now (HOME may have been assigned),
// and the current directory ("" when the program moved somewhere the
// analysis cannot follow).
type pathContext struct {
	home      string
	tildeHome *string
	cwd       string
}

// normalizePath turns a path as written into an absolute, lexically clean
// path, the spelling the path sets are matched against. It resolves ~,
// ~+, another user's ~user (as that user's home, which the path sets treat
// like a home: see otherHome), /proc/self/root and /proc/self/cwd, and
// relative paths against the current directory. It returns "" when the
// path cannot be known: relative to an unknown directory, ~- (the previous
// directory), or another process's current directory.
func normalizePath(p string, c pathContext) string {
	raw := joinPath(p, c)
	if raw == "" {
		return ""
	}
	return resolveProc(raw, c.cwd)
}

// joinPath is p made absolute as normalizePath makes it, before cleaning:
// on disk, a ".." after a link climbs from the link's target.
func joinPath(p string, c pathContext) string {
	if p == "" {
		return ""
	}
	home := c.home
	if c.tildeHome != nil {
		home = *c.tildeHome
	}
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return ""
		}
		p = home + p[1:]
	case p == "~+" || strings.HasPrefix(p, "~+/"):
		if c.cwd == "" {
			return ""
		}
		p = c.cwd + p[2:]
	case p == "~-" || strings.HasPrefix(p, "~-/"):
		return ""
	case strings.HasPrefix(p, "~"):
		user, rest, _ := strings.Cut(p[1:], "/")
		if user == "root" {
			p = "/root/" + rest
		} else {
			p = otherHome + user + "/" + rest
		}
	case !strings.HasPrefix(p, "/"):
		if c.cwd == "" {
			return ""
		}
		p = c.cwd + "/" + p
	}
	return p
}

// resolveProc cleans an absolute path component by component, following
// /proc/PID/root and /proc/PID/cwd where they appear: they are links, so
// a ".." after them climbs from their target, not from /proc/PID.
func resolveProc(p, cwd string) string {
	if !strings.Contains(p, "/proc/") && !strings.HasSuffix(p, "/proc") {
		return path.Clean(p) // no links to follow: lexical cleaning is exact
	}
	var stack []string
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		stack = append(stack, c)
		if len(stack) != 3 || stack[0] != "proc" || (stack[2] != "root" && stack[2] != "cwd") {
			continue
		}
		self := stack[1] == "self" || stack[1] == "thread-self"
		switch {
		case stack[2] == "root":
			stack = stack[:0] // every process here shares the root
		case self && cwd != "":
			stack = strings.Split(strings.TrimPrefix(path.Clean(cwd), "/"), "/")
			if stack[0] == "" {
				stack = stack[:0]
			}
		default:
			return "" // another process's directory, or an unknown one
		}
	}
	return "/" + strings.Join(stack, "/")
}

// otherHome is where normalizePath puts ~user for a user other than root:
// its home is unknown, and the path sets match it as a home.
const otherHome = "/~"

// homeForm writes an absolute path the way the path sets are written: ~ for
// the user's home and for any other user's home (/root, /home/NAME,
// /Users/NAME, ~user), because a start-up file or key in any home is as
// sensitive as in one's own.
func homeForm(p, home string) string {
	if home != "" && home != "/" && (p == home || strings.HasPrefix(p, home+"/")) {
		return "~" + strings.TrimPrefix(p, home)
	}
	for _, prefix := range []string{otherHome, "/home/", "/Users/"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			_, sub, found := strings.Cut(rest, "/")
			if !found {
				return "~"
			}
			return "~/" + sub
		}
	}
	if p == "/root" {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, "/root/"); ok {
		return "~/" + rest
	}
	return p
}
