package policy

import (
	"fmt"
	"strings"
)

// What a read-only program reads is judged where it leads on disk: a
// path that cannot be resolved, or a link to nothing, is not proven to be
// what it looks like.

// nameListers print the names of the files they look at, not what is in
// them (find prints names unless told to run something, which its own
// rules judge).
var nameListers = nameSet{
	"fd",
	"find",
	"tree",
}

// unprovenRead returns why one of the files args name is not proven to be
// what it looks like, "" when each is: a path that cannot be resolved or
// a link to nothing. Programs that show only names and sizes (ls, wc,
// find) are not asked.
func (a *analyzer) unprovenRead(program string, spec *safeSpec, args []word) string {
	if spec.Inert || nameListers.has(program) {
		return "" // names and sizes: what the credential check sees is enough
	}
	patternOpts := a.r.Programs.get(program).PatternOptions
	for i, w := range args {
		if i > 0 && args[i-1].known && matchesAny(patternOpts, args[i-1].text) || !w.pathKnown() {
			continue
		}
		for _, c := range pathCandidates(w) {
			if isOption(c) || strings.HasPrefix(c, unknownShape) {
				continue
			}
			paths, exact := a.wordPaths(w, c)
			if !exact {
				paths = []string{globDir(c)} // the directory the pattern looks in
			}
			for _, p := range paths {
				if why := a.readProblem(p); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// globDir is the directory part of a pattern before its first wildcard.
func globDir(pat string) string {
	i := strings.IndexAny(pat, "*?[")
	if i < 0 {
		return pat
	}
	j := strings.LastIndexByte(pat[:i], '/')
	switch {
	case j < 0:
		return "."
	case j == 0:
		return "/"
	}
	return pat[:j]
}

// readProblem says why reading the path p is not proven harmless, "" when
// it is.
func (a *analyzer) readProblem(p string) string {
	r := a.lookup(p)
	switch {
	case r.path == "":
		if a.cwd == "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
			return "" // the credential check says so (in a directory execgate cannot follow)
		}
		return fmt.Sprintf("reads %s, which execgate cannot resolve: %s (unknown)", p, r.why)
	case r.dangling:
		return fmt.Sprintf("reads %s, a link to %s, which does not exist (unknown)", p, a.homeForm(r.path))
	}
	return ""
}
