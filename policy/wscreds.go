package policy

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Bounds on looking through a workspace for credential files: past them,
// the workspace counts as holding some (an answer not found is not
// "none").
const (
	wsCredsMaxEntries = 20000
	wsCredsMaxTime    = 200 * time.Millisecond
)

// errWSCredsDone stops the walk.
var errWSCredsDone = errors.New("done")

// workspaceCredentials names a file of the workspace that the credentials
// path set holds (.env, a key) and whose name matches every one of names,
// or says the workspace was too big to look through; "" when it holds
// none, or when there is no workspace. Looked up on disk, once per
// analysis for an unfiltered listing.
func (a *analyzer) workspaceCredentials(roots []string, names []namePattern) string {
	whole := len(names) == 0 && len(roots) == 0
	if whole && a.wsCreds != nil {
		return *a.wsCreds
	}
	ws := a.realWorkspace()
	if ws == "" {
		return ""
	}
	if len(roots) == 0 {
		roots = []string{ws}
	}
	found := ""
	for _, r := range roots {
		if found = a.lookForCredentials(r, names); found != "" {
			break
		}
	}
	if whole {
		a.wsCreds = &found
	}
	return found
}

// listRoots are where a workspace listing looks: find's starting points,
// grep -l's and ls's operands (a glob's fixed directory); nil for the
// whole workspace (git ls-files, or roots it cannot place).
func (a *analyzer) listRoots(name string, words []word) []string {
	args := words[1:]
	var ops []word
	switch name {
	case "find", "fd", "fdfind":
		if name != "find" {
			return nil
		}
		for _, w := range args[findGlobalOptions(args):] {
			if w.known && (isOption(w.text) || w.text == "(" || w.text == "!") {
				break
			}
			ops = append(ops, w)
		}
	case "grep", "egrep", "fgrep", "rg", "ag":
		if name == "rg" || name == "ag" {
			return nil
		}
		v := viewArgs(args, a.r.optionsWithValue(name))
		ops = v.operands()
		if len(ops) > 0 {
			ops = ops[1:] // the pattern
		}
	case "ls":
		for _, w := range args {
			if !w.known || !isOption(w.text) {
				ops = append(ops, w)
			}
		}
	default:
		return nil
	}
	if len(ops) == 0 {
		return nil // the current directory: where cwd is, below which the walk is the workspace's
	}
	var roots []string
	for _, w := range ops {
		if !w.known {
			return nil
		}
		text := w.text
		if w.glob {
			i := globStart(text)
			if i < 0 {
				return nil
			}
			text = path.Dir(text[:i] + "x")
		}
		abs := a.resolve(text)
		if abs == "" || !a.insideWorkspace(abs) {
			return nil
		}
		roots = append(roots, abs)
	}
	return roots
}

// namePattern is one find -name (or -iname, fold) pattern.
type namePattern struct {
	glob string
	fold bool
	// re matches as fnmatch(3) does (nameMatcher), nil matching all; with
	// fold, lower too, the lowered pattern against the lowered name:
	// glibc folds the name before a class ([![:upper:]] matches e), Go's
	// (?i) folds the class, and either may be the wider.
	re, lower *regexp.Regexp
}

// newNamePattern compiles a find -name (fold: -iname) pattern.
func newNamePattern(glob string, fold bool) namePattern {
	p := namePattern{glob: glob, fold: fold, re: nameMatcher(glob, fold)}
	if fold {
		p.lower = nameMatcher(strings.ToLower(glob), false)
	}
	return p
}

// matches reports whether a file's base name matches p as find matches it
// (a pattern it cannot read matches everything).
func (p namePattern) matches(base string) bool {
	if p.re == nil || p.re.MatchString(base) {
		return true
	}
	return p.fold && (p.lower == nil || p.lower.MatchString(strings.ToLower(base)))
}

// nameFilter returns the name patterns a workspace listing keeps to: find
// with -name/-iname tests joined only by AND (no -o, no parentheses that
// could hold them; a negated test only drops more). Anything else keeps
// every name: nil.
func nameFilter(name string, words []word) []namePattern {
	if name != "find" {
		return nil
	}
	var out []namePattern
	args := words[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			return nil
		}
		switch w.text {
		case "!", "-not":
			// A negated test only drops names (-not -path ./node_modules/*).
			if i+1 >= len(args) || !args[i+1].known {
				return nil
			}
			switch args[i+1].text {
			case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type":
				i += 2
			case "-empty":
				i++
			default:
				return nil
			}
		case "-o", "-or", "(", ")", ",":
			return nil
		case "-name", "-iname":
			if i+1 >= len(args) || !args[i+1].known {
				return nil
			}
			out = append(out, newNamePattern(args[i+1].text, w.text == "-iname"))
			i++
		}
	}
	return out
}

// matchesAll reports whether base matches every pattern of names.
func matchesAll(names []namePattern, base string) bool {
	for _, n := range names {
		if !n.matches(base) {
			return false
		}
	}
	return true
}

// lookForCredentials walks ws for a credential file the names let a
// listing name: "" for none, else what was found or why it cannot be
// known.
func (a *analyzer) lookForCredentials(ws string, names []namePattern) string {
	n := 0
	return a.walkCredentials(ws, names, true, &n, time.Now().Add(wsCredsMaxTime))
}

// walkCredentials is lookForCredentials' walk, counting into n. The
// command given a name may read all below it (grep -r, cp -r, a link
// followed as given, find -L): a directory whose name the filter lets
// through is looked through whole, and, when follow, so is the directory
// a listed link leads to.
func (a *analyzer) walkCredentials(ws string, names []namePattern, follow bool, n *int, deadline time.Time) string {
	found := ""
	open := "" // a listed directory: everything below it counts
	err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				// Not there, or not this user's to list: the listing,
				// run as the same user, cannot name what is below either.
				if d != nil && d.IsDir() && p != ws {
					return fs.SkipDir
				}
				return nil
			}
			found = filepath.Base(p) + ": unreadable"
			return errWSCredsDone
		}
		*n++
		if *n > wsCredsMaxEntries || *n%256 == 0 && time.Now().After(deadline) {
			found = "too many files to look through"
			return errWSCredsDone
		}
		if p == ws && d.IsDir() {
			return nil
		}
		if open != "" && !strings.HasPrefix(p, open+string(filepath.Separator)) {
			open = "" // the walk is depth first: it left that tree
		}
		listed := open != "" || matchesAll(names, d.Name())
		switch {
		case !listed:
		case d.IsDir():
			if open == "" {
				open = p
			}
		case a.pathInAny("credentials", p):
			found, _ = filepath.Rel(ws, p)
			return errWSCredsDone
		case follow && d.Type()&fs.ModeSymlink != 0:
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				target, err := filepath.EvalSymlinks(p)
				if err != nil {
					return nil
				}
				if f := a.walkCredentials(target, nil, false, n, deadline); f != "" {
					rel, _ := filepath.Rel(ws, p)
					found = rel + " → " + f
					return errWSCredsDone
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errWSCredsDone) {
		return "the workspace could not be read"
	}
	return found
}
