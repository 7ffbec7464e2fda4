// Package pathres says where a path leads: as written, made absolute the
// way bash spells it (~, ~user, ~+, a directory relative to the current
// one, /proc/self/cwd), and on disk, as the kernel resolves it (every link
// followed, a ".." after a link climbing from the link's target).
//
// Paths are judged by where they lead, never by how they are spelt, and
// what cannot be known is "" — unknown, never safe. The package knows
// nothing of which paths matter; package policy's path sets say that, in
// the ~ form HomeForm writes.
package pathres

import (
	"path"
	"strings"
)

// Context is what Normalize needs to know about where a program runs.
type Context struct {
	// Home is the user's home.
	Home string
	// TildeHome is what ~ means now, when HOME was assigned (nil when it
	// was not).
	TildeHome *string
	// Cwd is the current directory, "" when the program moved somewhere
	// the analysis cannot follow.
	Cwd string
}

// Normalize turns a path as written into an absolute, lexically clean
// path, the spelling the path sets are matched against. It resolves ~,
// ~+, another user's ~user (as that user's home, which the path sets treat
// like a home: see OtherHome), /proc/self/root and /proc/self/cwd, and
// relative paths against the current directory. It returns "" when the
// path cannot be known: relative to an unknown directory, ~- (the previous
// directory), or another process's current directory.
func Normalize(p string, c Context) string {
	raw := Join(p, c)
	if raw == "" {
		return ""
	}
	return resolveProc(raw, c.Cwd)
}

// Join is p made absolute as Normalize makes it, before cleaning: on
// disk, a ".." after a link climbs from the link's target (see
// Disk.Resolve). It returns "" when the path cannot be known.
func Join(p string, c Context) string {
	if p == "" {
		return ""
	}
	home := c.Home
	if c.TildeHome != nil {
		home = *c.TildeHome
	}
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return ""
		}
		p = home + p[1:]
	case p == "~+" || strings.HasPrefix(p, "~+/"):
		if c.Cwd == "" {
			return ""
		}
		p = c.Cwd + p[2:]
	case p == "~-" || strings.HasPrefix(p, "~-/"):
		return ""
	case strings.HasPrefix(p, "~"):
		user, rest, _ := strings.Cut(p[1:], "/")
		if user == "root" {
			p = "/root/" + rest
		} else {
			p = OtherHome + user + "/" + rest
		}
	case !strings.HasPrefix(p, "/"):
		if c.Cwd == "" {
			return ""
		}
		p = c.Cwd + "/" + p
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

// OtherHome is where Normalize puts ~user for a user other than root: its
// home is unknown, and HomeForm writes it as a home.
const OtherHome = "/~"

// HomeForm writes an absolute path the way the path sets are written: ~ for
// the user's home and for any other user's home (/root, /home/NAME,
// /Users/NAME, ~user), because a start-up file or key in any home is as
// sensitive as in one's own.
func HomeForm(p, home string) string {
	if home != "" && home != "/" && (p == home || strings.HasPrefix(p, home+"/")) {
		return "~" + strings.TrimPrefix(p, home)
	}
	for _, prefix := range []string{OtherHome, "/home/", "/Users/"} {
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
