package policy

import "strings"

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
var fileWriters = map[string]writerSpec{
	"cp":       {last: true, targetOptions: []string{"-t", "--target-directory"}, withValue: []string{"-S", "--suffix", "--backup", "--sparse", "--reflink"}},
	"mv":       {last: true, targetOptions: []string{"-t", "--target-directory"}, withValue: []string{"-S", "--suffix", "--backup"}},
	"install":  {last: true, targetOptions: []string{"-t", "--target-directory"}, withValue: []string{"-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix"}},
	"ln":       {last: true, targetOptions: []string{"-t", "--target-directory"}, withValue: []string{"-S", "--suffix"}},
	"link":     {last: true},
	"tee":      {all: true},
	"sponge":   {all: true},
	"touch":    {all: true, withValue: []string{"-d", "--date", "-r", "--reference", "-t"}},
	"mkdir":    {all: true, withValue: []string{"-m", "--mode"}},
	"truncate": {all: true, withValue: []string{"-s", "--size", "-r", "--reference"}},
	"mkfifo":   {all: true, withValue: []string{"-m", "--mode"}},
	"dd":       {assignOptions: []string{"of="}},
	"sort":     {targetOptions: []string{"-o", "--output"}, withValue: []string{"-k", "--key", "-t", "--field-separator", "-S", "--buffer-size", "-T", "--temporary-directory", "--parallel", "--batch-size", "--files0-from", "--compress-program", "--random-source"}},
	"uniq":     {last: true, withValue: []string{"-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars", "--group", "--all-repeated"}},
	"tree":     {targetOptions: []string{"-o"}, withValue: []string{"-L", "-P", "-I", "--filelimit", "--timefmt", "--sort", "-H", "-T", "--charset"}},
	"split":    {last: true, withValue: []string{"-a", "-b", "-C", "-l", "-n", "-t", "--additional-suffix", "--filter"}},
	"csplit":   {targetOptions: []string{"-f", "--prefix"}},
}

// fileWrites judges the files a program's operands name as writes.
func (a *analyzer) fileWrites(seg *Segment, name string, words []word) {
	spec, ok := fileWriters[name]
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
