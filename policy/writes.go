package policy

import (
	"fmt"
	"strings"
)

// writerSpec says which operands of a program name files it creates,
// overwrites or changes.
type writerSpec struct {
	// last: the last operand is the destination (cp, mv) when there are
	// two or more.
	last bool
	// all: every operand is written (touch, tee).
	all bool
	// targetOptions take the destination as their value (cp -t DIR).
	targetOptions []string
	// assignOptions are KEY=VALUE operands whose value is written (dd of=).
	assignOptions []string
	// withValue lists the other options that take a value.
	withValue []string
}

// fileWriters are the programs whose operands are files they write. Their
// writes are judged like redirections: outside the workspace, to a path the
// analysis cannot resolve, or to a file that runs code later, no wildcard
// pattern covers them.
var fileWriters = table[writerSpec]{
	{"cp", writerSpec{last: true, targetOptions: []string{"-t", "--target-directory"}, withValue: []string{"-S", "--suffix", "--backup", "--sparse", "--reflink"}}},
	{"csplit", writerSpec{targetOptions: []string{"-f", "--prefix"}}},
	{"dd", writerSpec{assignOptions: []string{"of="}}},
	{"install", writerSpec{last: true, targetOptions: []string{"-t", "--target-directory"}, withValue: []string{"-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix"}}},
	{"link", writerSpec{last: true}},
	{"ln", writerSpec{last: true, targetOptions: []string{"-t", "--target-directory"}, withValue: []string{"-S", "--suffix"}}},
	{"mkdir", writerSpec{all: true, withValue: []string{"-m", "--mode"}}},
	{"mkfifo", writerSpec{all: true, withValue: []string{"-m", "--mode"}}},
	{"mv", writerSpec{last: true, targetOptions: []string{"-t", "--target-directory"}, withValue: []string{"-S", "--suffix", "--backup"}}},
	{"sort", writerSpec{targetOptions: []string{"-o", "--output"}, withValue: []string{"-k", "--key", "-t", "--field-separator", "-S", "--buffer-size", "-T", "--temporary-directory", "--parallel", "--batch-size", "--files0-from", "--compress-program", "--random-source"}}},
	{"split", writerSpec{last: true, withValue: []string{"-a", "-b", "-C", "-l", "-n", "-t", "--additional-suffix", "--filter"}}},
	{"sponge", writerSpec{all: true}},
	{"tee", writerSpec{all: true}},
	{"touch", writerSpec{all: true, withValue: []string{"-d", "--date", "-r", "--reference", "-t"}}},
	{"tree", writerSpec{targetOptions: []string{"-o"}, withValue: []string{"-L", "-P", "-I", "--filelimit", "--timefmt", "--sort", "-H", "-T", "--charset"}}},
	{"truncate", writerSpec{all: true, withValue: []string{"-s", "--size", "-r", "--reference"}}},
	{"uniq", writerSpec{last: true, withValue: []string{"-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars", "--group", "--all-repeated"}}},
}

// fileWrites judges the files a program's operands name as writes.
func (a *analyzer) fileWrites(seg *Segment, name string, words []word) {
	spec, ok := fileWriters.lookup(name)
	if !ok {
		return
	}
	var operands []word
	args := words[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.known && w.text == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if w.known && isOption(w.text) {
			if m := matchingSpecIn(spec.targetOptions, w.text, spec.withValue); m != "" {
				if v, ok := optionArgument(args, &i, m); ok {
					a.writeTarget(seg, v, name)
				}
				continue
			}
			if takesValue(w.text, spec.withValue) {
				i++
			}
			continue
		}
		for _, o := range spec.assignOptions {
			if v, ok := strings.CutPrefix(w.text, o); ok {
				w.text = v
				a.writeTarget(seg, w, name)
			}
		}
		operands = append(operands, w)
	}
	switch {
	case spec.all:
		for _, w := range operands {
			a.writeTarget(seg, w, name)
		}
	case spec.last && len(operands) >= 2:
		a.writeTarget(seg, operands[len(operands)-1], name)
	}
}

// codeFileOptions are options whose value is a file of code the program
// runs (make -f), beside the script operands interpreters take.
var codeFileOptions = table[[]string]{
	{"gmake", []string{"-f", "--file", "--makefile", "-I", "--include-dir"}},
	{"make", []string{"-f", "--file", "--makefile", "-I", "--include-dir"}},
	{"sed", []string{"-f", "--file"}},
}

// codeFiles judges the code files a program is told to run: from a pipe,
// a process substitution or a name only known at run time the code cannot
// be seen (and from the network it is dangerous); from outside the
// workspace, the temporary directories included, a wildcard does not cover
// it.
func (a *analyzer) codeFiles(seg *Segment, name string, words []word) {
	specs := codeFileOptions.get(name)
	if len(specs) == 0 {
		return
	}
	args := words[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known && !strings.HasPrefix(w.text, "-") {
			continue
		}
		m := matchingSpec(specs, w.text)
		if m == "" {
			continue
		}
		v, ok := optionArgument(args, &i, m)
		if !ok {
			continue
		}
		label := name + " " + m
		switch {
		case w.procSubst || v.procSubst || !w.known || !v.known && !v.pathKnown():
			seg.Opaque = true
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs code only known at run time (%s)", label, quoteWord(v.shown())), Rule: "dynamic-payload"})
			if fetch, _ := a.substitutionSources(append(w.subst, v.subst...)); fetch {
				seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("%s runs code downloaded from the network", label), Rule: "network-code"})
			}
		case v.text == "-" || strings.HasPrefix(v.text, "/dev/") || strings.HasPrefix(v.text, "/proc/"):
			seg.Opaque = true
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs code from its input (%s)", label, v.text), Rule: "dynamic-payload"})
		default:
			if abs := a.resolve(v.text); abs == "" || !a.insideWorkspace(abs) {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs code from %s, outside the workspace", label, v.text), Rule: "script-file"})
			}
		}
	}
}

// sensitiveArgs flags a program that is not read-only given a start-up,
// credential, system or execgate path anywhere among its words (pip
// --log-file ~/.bashrc, kubectl --cache-dir ~/.ssh): what it does with the
// path is not known, so no wildcard pattern covers it.
func (a *analyzer) sensitiveArgs(seg *Segment, name string, words []word) {
	for _, w := range words[1:] {
		if !w.pathKnown() {
			continue
		}
		cands := []string{w.text}
		if _, v, ok := strings.Cut(w.text, "="); ok {
			cands = append(cands, v)
		}
		for _, c := range cands {
			if c == "" || !(strings.HasPrefix(c, "/") || strings.HasPrefix(c, "~") || strings.Contains(c, "..")) {
				continue
			}
			if c == "/" || strings.HasPrefix(c, "~") && !w.tilde && c == w.text {
				continue
			}
			n := a.normPath(c)
			for _, set := range []string{"persistence", "self", "credentials"} {
				if a.pathIn(set, n) {
					seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("gives %s the path %s (a start-up, credential or execgate file), which it may read or write", name, c), Rule: "sensitive-path-argument"})
					return
				}
			}
		}
	}
}
