package policy

import (
	"fmt"
	"io/fs"
	"strings"
)

// A program that recurses through a directory and follows the links it
// finds there (grep -R, rg -L, find -L, cp -rL, tar -h, zip -r …) reads or
// copies what those links lead to: a tree that holds notes -> ~/.ssh is,
// to grep -R, a tree that holds the key. The analysis walks such a
// directory, with a budget of maxWalkEntries entries for the whole
// command, and judges each link that leads out of the workspace by its
// target. Past the budget what the program reaches is not known, and the
// command is not proven safe.
//
// Programs that follow only the links named on their command line (grep
// -r, find -H, du -D, cp -rH) and those that follow none (cp -r, tar
// without -h, rsync without -L, rg, chmod -R) are judged by their operands
// alone, resolved on disk like every path.

// linkFollowers says, per program, when it follows links met while it
// recurses: the options that make it do so (follow), or always unless one
// of the options that stop it (always, unless). Sources: each program's
// manual (grep(1), rg(1), helm's chart loader, ag(1), ack(1), find(1), du(1), ls(1), tree(1),
// cp(1), tar(1), rsync(1), zip(1), scp(1), diff(1), chmod(1), chown(1)).
var linkFollowers = table[linkFollow]{
	{"ack", linkFollow{follow: []string{"--follow"}}},
	{"ag", linkFollow{follow: []string{"-f", "--follow"}}},
	{"chgrp", linkFollow{follow: []string{"-L"}}},
	{"chmod", linkFollow{follow: []string{"-L"}}},
	{"chown", linkFollow{follow: []string{"-L"}}},
	{"cp", linkFollow{follow: []string{"-L", "--dereference"}, recursive: []string{"-r", "-R", "-a", "--recursive", "--archive"}}},
	{"diff", linkFollow{always: true, unless: []string{"--no-dereference"}, recursive: []string{"-r", "--recursive"}}},
	{"du", linkFollow{follow: []string{"-L", "--dereference"}}},
	{"egrep", linkFollow{follow: []string{"-R", "--dereference-recursive"}}},
	{"fgrep", linkFollow{follow: []string{"-R", "--dereference-recursive"}}},
	{"find", linkFollow{follow: []string{"-L", "-follow"}}},
	// -S, --dereference: ugrep's, which Claude Code's grep runs: with -r
	// it follows every link, like -R.
	{"grep", linkFollow{follow: []string{"-R", "--dereference-recursive", "-S", "--dereference"}}},
	// helm loads a chart directory following every link in it (its
	// loader walks with sympath.Walk, warning about each link), and
	// template and show print what the chart's files hold.
	{"helm", linkFollow{always: true}},
	{"ls", linkFollow{follow: []string{"-L", "--dereference"}, recursive: []string{"-R", "--recursive"}}},
	{"rg", linkFollow{follow: []string{"-L", "--follow"}}},
	{"rsync", linkFollow{follow: []string{"-L", "--copy-links", "--copy-unsafe-links", "-k", "--copy-dirlinks"}}},
	{"scp", linkFollow{always: true, recursive: []string{"-r"}}},
	{"tar", linkFollow{follow: []string{"-h", "--dereference"}}},
	{"tree", linkFollow{follow: []string{"-l"}}},
	{"zgrep", linkFollow{follow: []string{"-R", "--dereference-recursive"}}},
	{"zip", linkFollow{always: true, unless: []string{"-y", "--symlinks"}, recursive: []string{"-r", "-R", "--recurse-paths", "--recurse-patterns"}}},
}

// searchesHere are the link followers that search the current directory
// when given no file or directory.
var searchesHere = nameSet{
	"ack",
	"ag",
	"du",
	"egrep",
	"fgrep",
	"find",
	"grep",
	"ls",
	"rg",
	"tree",
	"zgrep",
}

// patternFirst are the link followers whose first operand is the pattern
// they search for, unless an option gives it.
var patternFirst = nameSet{
	"ack",
	"ag",
	"egrep",
	"fgrep",
	"grep",
	"rg",
	"zgrep",
}

// linkFollow is how one program follows links while it recurses.
type linkFollow struct {
	follow    []string // options that make it follow every link
	always    bool     // it follows links unless told not to
	unless    []string // options that stop it (with always)
	recursive []string // options without which it does not recurse at all; none: it always does
}

// followsLinks reports whether program, given args, recurses and follows
// the links it finds.
func followsLinks(program string, args []word) bool {
	spec, ok := linkFollowers.lookup(program)
	if !ok {
		return false
	}
	has := func(opts []string) bool {
		for i, w := range args {
			if w.known && matchesAny(opts, w.text) {
				return true
			}
			if program == "tar" && w.known && !isOption(w.text) && i == 0 {
				// tar's first word may be its options without a dash: czhf.
				for _, o := range opts {
					if len(o) == 2 && strings.Contains(w.text, o[1:]) {
						return true
					}
				}
			}
		}
		return false
	}
	if len(spec.recursive) > 0 && !has(spec.recursive) {
		return false
	}
	if spec.always {
		return !has(spec.unless)
	}
	return has(spec.follow)
}

// walkResult is what a walk of one directory found.
type walkResult struct {
	// targets are the paths (on disk) that links under the directory lead
	// to outside the workspace, with the link that leads there.
	targets []linkTarget
	// unknown says why the walk could not finish ("" when it did).
	unknown string
}

type linkTarget struct {
	link, target string
}

// walkLinks walks the directory root (absolute, on disk) as a program
// that follows links would, and returns the links that lead out of the
// workspace. Links that stay inside are followed like directories; each
// directory is walked once.
func (a *analyzer) walkLinks(root string) walkResult {
	d := a.fs()
	if res, ok := d.walks[root]; ok {
		return res
	}
	var res walkResult
	visited := map[string]bool{root: true}
	stack := []string{root}
	for len(stack) > 0 && res.unknown == "" {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d.entries >= maxWalkEntries {
			res.unknown = fmt.Sprintf("it has more than %d entries to look through", maxWalkEntries)
			break
		}
		ents, err := d.readDir(dir)
		d.entries += len(ents)
		if err != nil {
			res.unknown = fmt.Sprintf("%s cannot be read", dir)
			break
		}
		for _, e := range ents {
			p := dir + "/" + e.Name()
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				r := d.Resolve(p, "")
				switch {
				case r.Path == "":
					res.unknown = fmt.Sprintf("the link %s leads where execgate cannot follow: %s", p, r.Why)
				case r.Dangling || !r.Exists:
					// A link to nothing: the program reads nothing there.
				case !a.insideWorkspace(r.Path) && !a.scratch(r.Path):
					res.targets = append(res.targets, linkTarget{p, r.Path})
					if r.Mode.IsDir() && !visited[r.Path] {
						visited[r.Path] = true
						stack = append(stack, r.Path)
					}
				case r.Mode.IsDir() && !visited[r.Path]:
					visited[r.Path] = true
					stack = append(stack, r.Path)
				}
			case e.IsDir():
				if !visited[p] {
					visited[p] = true
					stack = append(stack, p)
				}
			}
		}
	}
	if d.walks == nil {
		d.walks = map[string]walkResult{}
	}
	d.walks[root] = res
	return res
}

// linkReach judges a program that recurses and follows links by the
// places its directory operands' links lead: credentials there are a
// credential read, and anything else outside the workspace is outside it,
// which no wildcard covers.
func (a *analyzer) linkReach(seg *Segment, name string, args []word) {
	if !followsLinks(name, args) {
		return
	}
	v := viewArgs(args, a.r.optionsWithValue(name))
	positional := v.positional
	if patternFirst.has(name) && len(positional) > 0 && !v.has("-e", "--regexp", "-f", "--file") {
		positional = positional[1:] // grep PATTERN [FILE…]
	}
	var dirs []string
	operand := false
	for _, i := range positional {
		w := args[i]
		if !w.pathKnown() {
			continue
		}
		paths, exact := a.wordPaths(w, w.text)
		if !exact {
			operand = true
			continue // an unexpandable glob: judged by the pattern elsewhere
		}
		for _, p := range paths {
			r := a.lookup(p)
			operand = operand || r.Exists
			if r.Path != "" && r.Exists && r.Mode.IsDir() {
				dirs = append(dirs, p)
			}
		}
	}
	if !operand && searchesHere.has(name) {
		// rg -L PATTERN, grep -R PATTERN, find -L: the current directory.
		if a.cwd == "" {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s follows the links under a directory execgate cannot follow", name), Rule: "follows-links"})
			return
		}
		dirs = append(dirs, ".")
	}
	for _, p := range dirs {
		r := a.lookup(p)
		res := a.walkLinks(r.Path)
		if res.unknown != "" {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s follows the links under %s, and %s: what it reaches is not known", name, p, res.unknown), Rule: "follows-links"})
		}
		for _, t := range res.targets {
			if a.pathIn("credentials", a.homeForm(t.target)) || a.holdsCredentials(t.target) {
				seg.flags.readsCreds = true
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s reads credentials (%s, through the link %s)", name, a.homeForm(t.target), t.link), Rule: "reads-credentials"})
				continue
			}
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s follows the link %s out of the workspace, to %s", name, t.link, a.homeForm(t.target)), Rule: "follows-links"})
		}
	}
}
