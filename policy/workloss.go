package policy

import (
	"path"
	"strings"
)

// Losing uncommitted work: a command that deletes or replaces files of
// the workspace destroys nothing that cannot come back when git holds
// those files in a commit, or when they are build output git ignores.
// What git does not hold — untracked files, changes not committed — is
// gone for good, and the sandbox, which lets a confined command write the
// workspace, cannot tell the two apart. So the analysis records what each
// command deletes or replaces (Segment.Losses), and WorkLoss (in
// workloss_disk.go) asks git, at decision time, whether any of it is work
// it does not hold.

// A Loss is a path a command deletes or replaces whole.
type Loss struct {
	// Path is absolute, its directories resolved on disk and its last
	// part as written (rm removes a link, not what it points to). With
	// Pattern, the parts from the first one holding a pattern on are
	// bash patterns (shellMatch).
	Path    string
	Pattern bool
	// Tree: everything below Path goes too (rm -r).
	Tree bool
}

// lossSpec says how a program destroys what its operands name.
type lossSpec struct {
	// withValue are options that take a value (not operands).
	withValue []string
	// targetDir are options whose value is the destination directory
	// (cp -t DIR): what lands there replaces files of the same names.
	targetDir []string
	// keep are options that make it destroy nothing (cp -n, tee -a).
	keep []string
	// mode: lossAll deletes or replaces every operand; lossLast replaces
	// the last one (the destination of cp and mv).
	mode lossMode
	// tree are options that delete whole trees (rm -r).
	tree []string
}

type lossMode int

const (
	lossAll lossMode = iota
	lossLast
)

// lossPrograms are the programs that delete or replace what they name.
// Editors in place (sed -i, perl -i) are left out: they change a file, as
// the agent's own edits do. Sorted by name.
var lossPrograms = table[lossSpec]{
	// cp(1): the destination is overwritten; -n/--no-clobber and
	// --update=none keep it.
	{"cp", lossSpec{mode: lossLast, withValue: []string{"-S", "--suffix", "--backup", "--sparse", "--reflink", "--preserve", "--no-preserve", "--context", "--update"}, targetDir: []string{"-t", "--target-directory"}, keep: []string{"-n", "--no-clobber", "--update=none", "--update=none-fail", "-b", "--backup"}}},
	// install(1) copies over the destination.
	{"install", lossSpec{mode: lossLast, withValue: []string{"-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix", "--strip-program", "--context"}, targetDir: []string{"-t", "--target-directory"}, keep: []string{"-b", "--backup"}}},
	// ln(1) -f replaces the destination; without it ln refuses.
	{"ln", lossSpec{mode: lossLast, withValue: []string{"-S", "--suffix"}, targetDir: []string{"-t", "--target-directory"}, keep: []string{"-b", "--backup"}}},
	// mv(1) replaces the destination, as cp does.
	{"mv", lossSpec{mode: lossLast, withValue: []string{"-S", "--suffix", "--backup", "--context", "--update"}, targetDir: []string{"-t", "--target-directory"}, keep: []string{"-n", "--no-clobber", "--update=none", "--update=none-fail", "-b", "--backup"}}},
	// rm(1): every operand; -r, -R, --recursive whole trees.
	{"rm", lossSpec{mode: lossAll, withValue: []string{"--interactive", "--preserve-root"}, tree: []string{"-r", "-R", "--recursive"}}},
	// shred(1) overwrites (and with -u removes) every operand.
	{"shred", lossSpec{mode: lossAll, withValue: []string{"-n", "--iterations", "-s", "--size", "--random-source", "--remove"}}},
	// sponge(1) replaces its operand unless -a.
	{"sponge", lossSpec{mode: lossAll, keep: []string{"-a"}}},
	// tee(1) truncates every operand unless -a/--append.
	{"tee", lossSpec{mode: lossAll, withValue: []string{"--output-error"}, keep: []string{"-a", "--append"}}},
	// truncate(1) cuts every operand to its size.
	{"truncate", lossSpec{mode: lossAll, withValue: []string{"-s", "--size", "-r", "--reference"}}},
	// unlink(1) removes its operand.
	{"unlink", lossSpec{mode: lossAll}},
}

// lossRedirect reports whether a redirection operator truncates its file:
// >, >|, &>, >& FILE (not >> or <>).
func lossRedirect(op string) bool {
	switch op {
	case ">", ">|", "&>", ">&", "&>|":
		return true
	}
	return false
}

// noteLosses records what a program deletes or replaces among the words
// it is given.
func (a *analyzer) noteLosses(seg *Segment, name string, words []word) {
	spec, ok := lossPrograms.lookup(name)
	if !ok {
		return
	}
	var operands []word
	var targetDir *word
	tree, force := false, false
	args := words[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known && isOptionShape(w) && !w.fromStdin {
			// An option only known at run time may be any of them.
			tree, force = true, true
			seg.LossUnknown = true
			continue
		}
		if w.known && w.text == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if w.known && isOption(w.text) {
			if m := matchingSpecIn(spec.targetDir, w.text, spec.withValue); m != "" {
				if v, ok := optionArgument(args, &i, m); ok {
					targetDir = &v
				}
				continue
			}
			if matchesAny(spec.keep, w.text) {
				return
			}
			if matchesAny(spec.tree, w.text) {
				tree = true
			}
			if matchesAny([]string{"-f", "--force"}, w.text) {
				force = true
			}
			if takesValue(w.text, spec.withValue) {
				i++
			}
			continue
		}
		operands = append(operands, w)
	}
	if name == "ln" && !force {
		return // ln refuses to replace what exists
	}
	var targets []word
	switch {
	case spec.mode == lossAll:
		targets = operands
	case targetDir != nil:
		targets = landing(*targetDir, operands)
	case len(operands) >= 2:
		dest := operands[len(operands)-1]
		targets = []word{dest}
		if r := a.lookup(dest.text); dest.literal() && r.Exists && r.Mode.IsDir() {
			// cp a b dir/ replaces dir/a and dir/b.
			targets = landing(dest, operands[:len(operands)-1])
		}
	}
	for _, t := range targets {
		a.noteLoss(seg, t, tree)
	}
}

// landing is where the sources land in directory dir: dir/BASE of each.
func landing(dir word, sources []word) []word {
	out := make([]word, 0, len(sources))
	for _, s := range sources {
		t := word{text: unknownShape, known: false}
		if dir.known && s.known {
			t = word{text: strings.TrimSuffix(dir.text, "/") + "/" + path.Base(s.text), known: true, glob: dir.glob || s.glob, brace: dir.brace || s.brace}
		}
		out = append(out, t)
	}
	return out
}

// noteLoss records that w is deleted or replaced (with what is below it,
// for tree).
func (a *analyzer) noteLoss(seg *Segment, w word, tree bool) {
	t := w.text
	if !w.pathKnown() || w.brace || strings.Contains(t, unknownShape) || t == "" {
		seg.LossUnknown = true
		return
	}
	if strings.HasPrefix(t, "~") && !w.tilde {
		t = "./" + t // a quoted ~ is a file named ~
	}
	if !w.glob && a.pathIn("harmless", a.normPath(t)) {
		return // 2>/dev/null
	}
	pattern := w.glob
	if pattern {
		// Extended patterns and classes path.Match does not read the
		// way bash does stop at the directory before them: all of it.
		if i := strings.IndexAny(t, "()"); i >= 0 {
			t = t[:i] + "*"
		}
	}
	abs := a.logical(t)
	if abs == "" {
		seg.LossUnknown = true
		return
	}
	if raw := a.rawPath(t); hasDotDot(raw) {
		a.noteClimbingLoss(seg, raw, pattern, tree)
		return
	}
	dir, base := path.Split(abs)
	fixed := dir
	if pattern {
		if i := strings.IndexAny(dir, "*?["); i >= 0 {
			fixed = path.Dir(dir[:i] + "x")
		}
	}
	r := a.lookup(fixed)
	if r.Path == "" {
		seg.LossUnknown = true
		return
	}
	rest := strings.TrimPrefix(path.Join(dir, base), path.Clean(fixed))
	seg.Losses = append(seg.Losses, Loss{Path: path.Clean(r.Path + "/" + rest), Pattern: pattern, Tree: tree})
}

// noteClimbingLoss records the loss of the absolute path raw, which
// climbs with "..": the kernel climbs from where a link leads (link/..
// is the parent of the link's target, not the directory holding the
// link), so raw is resolved on disk as written, never cleaned first.
// A pattern is followed up to its first name holding one; a ".." after
// it makes all of it unknown.
func (a *analyzer) noteClimbingLoss(seg *Segment, raw string, pattern, tree bool) {
	trimmed := strings.TrimRight(raw, "/")
	dir, base := path.Split(trimmed)
	var r resolved
	switch {
	case pattern:
		// Up to the last "/" before it, not path.Dir: that would clean.
		i := strings.IndexAny(trimmed, "*?[")
		j := strings.LastIndexByte(trimmed[:max(i, 0)], '/')
		if i < 0 || j < 0 || hasDotDot(trimmed[j:]) {
			break
		}
		if r = a.fs().Resolve(trimmed[:j+1], a.cwd); r.Path != "" {
			seg.Losses = append(seg.Losses, Loss{Path: path.Clean(r.Path + "/" + trimmed[j+1:]), Pattern: true, Tree: tree})
			return
		}
	case base == "." || base == "..":
		// A directory itself (cp x dir/..): wherever it leads.
		r = a.fs().Resolve(trimmed, a.cwd)
		base = ""
	default:
		r = a.fs().Resolve(dir, a.cwd)
	}
	if r.Path == "" {
		seg.LossUnknown = true
		return
	}
	seg.Losses = append(seg.Losses, Loss{Path: path.Join(r.Path, base), Tree: tree})
}

// hasDotDot reports whether the path p has a name "..".
func hasDotDot(p string) bool {
	for name := range strings.SplitSeq(p, "/") {
		if name == ".." {
			return true
		}
	}
	return false
}
