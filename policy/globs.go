package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/policy/pathres"
)

// A glob in a command is judged by bash's own rules, not by a look-alike:
// bash expands `cat ~/.ss[!g]/id_rs[^b]` to ~/.ssh/id_rsa before cat runs,
// with [!…] and [^…] both negations, POSIX classes ([[:alpha:]]), a ]
// first in a bracket taken literally, and a leading dot matched only by a
// literal dot. So the analysis expands the glob on the real disk, in the
// command's current directory, with mvdan.cc/sh's expand package (bash's
// rules: no match leaves the word as written, since nullglob and failglob
// are off), and judges every path it names. Where it cannot expand it —
// an unknown directory, an unreadable one, more entries than
// maxWalkEntries, shell options a command of the program may have changed
// (shopt, GLOBIGNORE) — it asks whether the pattern, read by bash's
// pattern rules with every option that could widen it, can name a
// sensitive path at all.

// globOptions are the shell options that decide how bash expands a glob,
// as the program starts: bash's defaults, and those BASHOPTS turns on.
type globOptions struct {
	dotGlob, noCase, globStar, nullGlob bool
	// unknown is set when a command may change them (shopt, GLOBIGNORE).
	unknown bool
}

// globOptions are the options a glob is expanded with here.
func (a *analyzer) globOptions() globOptions {
	var o globOptions
	for opt := range strings.SplitSeq(a.env("BASHOPTS"), ":") {
		switch opt {
		case "dotglob":
			o.dotGlob = true
		case "nocaseglob":
			o.noCase = true
		case "globstar":
			o.globStar = true
		case "nullglob":
			o.nullGlob = true
		}
	}
	if a.env("GLOBIGNORE") != "" {
		o.unknown = true // it also turns dotglob on
	}
	if a.globsChanged || a.vars.poisonAll || a.vars.assigned["GLOBIGNORE"] || a.vars.assigned["BASHOPTS"] {
		o.unknown = true
	}
	return o
}

// globOptionWords are the words that change how later globs expand:
// scanned in the whole command before it is walked, since a loop runs a
// later shopt before an earlier glob.
var globOptionWords = [...]string{"shopt", "GLOBIGNORE", "BASHOPTS"}

// mayChangeGlobs reports whether src may change how bash expands globs.
func mayChangeGlobs(src string) bool {
	for _, w := range globOptionWords {
		if strings.Contains(src, w) {
			return true
		}
	}
	return false
}

// noteShellOptions marks the glob options unknown once a command may
// change them (shopt -s nocaseglob, shopt -s "$opt", …).
func (a *analyzer) noteShellOptions(name string, words []word) {
	if name != "shopt" {
		return
	}
	for _, w := range words[1:] {
		if !w.known || w.text == "-s" || w.text == "-u" || strings.HasPrefix(w.text, "-") && strings.ContainsAny(w.text, "su") {
			a.globsChanged = true
			return
		}
	}
}

// expandGlob expands the glob word w as bash would, on disk, in the
// current directory. It returns the words bash passes (the word as
// written when nothing matches) and whether it could tell.
func (a *analyzer) expandGlob(w word) (fields []string, ok bool) {
	if w.node == nil {
		return nil, false
	}
	d := a.fs()
	if e, seen := d.globs[w.node]; seen {
		return e.fields, e.ok
	}
	fields, ok = a.expandGlobOnDisk(w)
	if d.globs == nil {
		d.globs = map[*syntax.Word]expansion{}
	}
	d.globs[w.node] = expansion{fields, ok}
	return fields, ok
}

// expansion is what expandGlob found for one word.
type expansion struct {
	fields []string
	ok     bool
}

// expandGlobOnDisk is expandGlob without the memo.
func (a *analyzer) expandGlobOnDisk(w word) (fields []string, ok bool) {
	opts := a.globOptions()
	if w.node == nil || opts.unknown || !expandable(w.node) {
		return nil, false
	}
	home := a.home
	if a.tildeHome != nil {
		home = *a.tildeHome
	}
	if first, isLit := w.node.Parts[0].(*syntax.Lit); isLit && strings.HasPrefix(first.Value, "~") {
		if home == "" || first.Value != "~" && !strings.HasPrefix(first.Value, "~/") {
			return nil, false // ~user, ~+, ~-: see pathres.Normalize
		}
	}
	if a.cwd == "" && !a.globAbsolute(w) {
		return nil, false
	}
	d := a.fs()
	failed, nonASCII := false, false
	cfg := &expand.Config{
		Env:        expand.ListEnviron("HOME="+home, "PWD="+a.cwd),
		DotGlob:    opts.dotGlob,
		NoCaseGlob: opts.noCase,
		GlobStar:   opts.globStar,
		NullGlob:   opts.nullGlob,
		ExtGlob:    true,
		ReadDir2: func(dir string) ([]fs.DirEntry, error) {
			if d.entries >= maxWalkEntries {
				failed = true
				return nil, pathres.ErrBudget
			}
			ents, err := d.readDir(dir)
			d.entries += len(ents)
			for _, e := range ents {
				nonASCII = nonASCII || !isASCII(e.Name())
			}
			a.seedEntries(dir, ents)
			if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				failed = true // bash may see what this could not
			}
			return ents, err
		},
	}
	fields, err := safeFields(cfg, w.node)
	if err != nil || failed {
		return nil, false
	}
	if nonASCII && strings.Contains(w.text, "[") {
		// bash's classes and ranges follow the locale ([[:alpha:]] is ä
		// in a UTF-8 one); the pattern package's are ASCII.
		return nil, false
	}
	return fields, true
}

// isASCII reports whether s is plain ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// globAbsolute reports whether the glob word starts at / or ~.
func (a *analyzer) globAbsolute(w word) bool {
	return strings.HasPrefix(w.text, "/") || w.tilde && strings.HasPrefix(w.text, "~")
}

// safeFields is expand.Fields, which must not panic on a word it does not
// expect: a panic is an error here.
func safeFields(cfg *expand.Config, w *syntax.Word) (fields []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			fields, err = nil, fmt.Errorf("expanding the glob: %v", r)
		}
	}()
	return expand.Fields(cfg, w)
}

// expandable reports whether w is made only of parts expanding it runs
// nothing for: literal text, quotes, $HOME and extended globs.
func expandable(w *syntax.Word) bool {
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit, *syntax.ExtGlob:
		case *syntax.SglQuoted:
			if p.Dollar {
				return false // $'…' is decoded by words.go; not repeated here
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return false
			}
			for _, in := range p.Parts {
				if pe, isParam := in.(*syntax.ParamExp); isParam && isHomeParam(pe) {
					continue
				}
				if _, isLit := in.(*syntax.Lit); !isLit {
					return false
				}
			}
		case *syntax.ParamExp:
			if !isHomeParam(p) {
				return false
			}
		default:
			return false
		}
	}
	return len(w.Parts) > 0
}

// wordPaths are the paths the candidate c of word w names once bash has
// expanded it: c itself, or for a glob the files it matches (the word as
// written when none does). exact is false when a glob could not be
// expanded here: the caller then asks globCouldName.
func (a *analyzer) wordPaths(w word, c string) (paths []string, exact bool) {
	if !w.glob {
		return []string{c}, true
	}
	if c != w.text {
		return nil, false // --file=~/.s*: the program is given the pattern
	}
	fields, ok := a.expandGlob(w)
	return fields, ok
}

// globRegexp is the glob word w (or the candidate c within it) as an
// anchored regular expression over absolute paths, by bash's pattern
// rules with every option that could make it match more: a sound
// over-approximation of what bash's expansion may name. ok is false when
// the pattern cannot be read; it may then name anything.
func (a *analyzer) globRegexp(w word, c string) (*regexp.Regexp, bool) {
	pat := c
	if w.node != nil && c == w.text && expandable(w.node) {
		pat = globPattern(w.node)
	}
	home := a.home
	if a.tildeHome != nil {
		home = *a.tildeHome
	}
	anywhere := false
	switch {
	case pat == "~" || strings.HasPrefix(pat, "~/"):
		if home == "" {
			anywhere = true
			pat = strings.TrimPrefix(strings.TrimPrefix(pat, "~"), "/")
		} else {
			pat = pattern.QuoteMeta(home, 0) + pat[1:]
		}
	case strings.HasPrefix(pat, "~"):
		user, rest, _ := strings.Cut(pat[1:], "/")
		pat = pathres.OtherHome + user + "/" + rest
	case !strings.HasPrefix(pat, "/"):
		if a.cwd == "" {
			anywhere = true
		} else {
			pat = pattern.QuoteMeta(a.cwd, 0) + "/" + pat
		}
	}
	if !anywhere {
		pat = path.Clean(pat)
	}
	// Every option that could widen the match: a command may have set
	// them, and a pattern that cannot match with them cannot without.
	mode := pattern.Filenames | pattern.EntireString | pattern.ExtendedOperators | pattern.NoGlobCase | pattern.GlobLeadingDot
	expr, err := pattern.Regexp(pat, mode)
	if err != nil {
		return nil, false // !(…) and malformed patterns: anything
	}
	if anywhere {
		expr = `(?i)^(.*/)?` + strings.TrimPrefix(strings.TrimPrefix(expr, "(?i)"), "^")
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, false
	}
	return re, true
}

// globPattern writes the word w as a bash pattern: quoted parts escaped,
// $HOME as ~.
func globPattern(w *syntax.Word) string {
	var sb strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			sb.WriteString(p.Value)
		case *syntax.ExtGlob:
			sb.WriteString(p.Op.String() + p.Pattern.Value + ")")
		case *syntax.SglQuoted:
			sb.WriteString(pattern.QuoteMeta(p.Value, 0))
		case *syntax.DblQuoted:
			for _, in := range p.Parts {
				switch q := in.(type) {
				case *syntax.Lit:
					sb.WriteString(pattern.QuoteMeta(unescapeBackslashes(q.Value, "$`\"\\"), 0))
				case *syntax.ParamExp:
					sb.WriteString("~") // $HOME, the only parameter expandable allows
				}
			}
		case *syntax.ParamExp:
			sb.WriteString("~")
		}
	}
	return sb.String()
}

// globCouldName reports whether the glob word w (candidate c) could name
// one of the paths of the listed sets' plain entries (those without
// wildcards of their own), in any home. A pattern that cannot be read
// could name anything.
func (a *analyzer) globCouldName(w word, c string, sets ...string) (string, bool) {
	re, ok := a.globRegexp(w, c)
	if !ok {
		return c, true
	}
	for _, set := range sets {
		for _, p := range a.r.Paths.get(set) {
			if strings.ContainsAny(p, "*?[{") {
				continue
			}
			for _, abs := range a.homeSpellings(p) {
				if re.MatchString(abs) {
					return p, true
				}
			}
		}
	}
	return "", false
}

// homeSpellings are the absolute paths a path-set entry in the ~ form may
// be spelt as: in the user's home (as written and on disk) and in any
// other user's.
func (a *analyzer) homeSpellings(p string) []string {
	rest, inHome := strings.CutPrefix(p, "~")
	if !inHome {
		return []string{p}
	}
	out := []string{"/root" + rest, "/home/user" + rest, "/Users/user" + rest, pathres.OtherHome + "user" + rest}
	if a.home != "" {
		out = append(out, a.home+rest)
	}
	if a.tildeHome != nil && *a.tildeHome != "" {
		out = append(out, *a.tildeHome+rest)
	}
	if real := a.realHome(); real != "" && real != a.home {
		out = append(out, real+rest)
	}
	return out
}

// globReads returns what the glob word w (candidate c) reads among the
// credential files, "" for none: a credential path the pattern could name
// by bash's rules (decided by the text alone, the same on every machine:
// the file may appear before the command runs), else a credential file
// bash would expand it to now. The answer names the pattern, so that a
// glob is graded as a credential read, not as the literal path it
// matched on this machine.
func (a *analyzer) globReads(w word, c string) string {
	if p, ok := a.globCouldName(w, c, "credential-samples"); ok {
		return fmt.Sprintf("%s%s, which can name %s", globRead, c, p)
	}
	if paths, exact := a.wordPaths(w, c); exact {
		for _, p := range paths {
			if a.pathInAny("credentials", p) {
				return fmt.Sprintf("%s%s, which names %s", globRead, c, p)
			}
		}
	}
	return ""
}

// globRead starts what credentialArg says of a glob: the pattern, not a
// path (printsSecretStore grades only a literal path).
const globRead = "the pattern "
