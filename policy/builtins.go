package policy

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// builtinOperands says which operands of a bash builtin bash reads as
// variable names or evaluates as arithmetic. Both run the command
// substitutions of a subscript: read 'a[$(cmd)]', shift "$n" with
// n='a[$(cmd)]'. (Checked against bash 5.2; test/[ are handled apart.)
type builtinOperands struct {
	// names: which operands are variable names: "all" or "second".
	names string
	// nameOptions take a variable name as their value.
	nameOptions []string
	// numbers is set when every operand is arithmetic.
	numbers bool
	// numberOptions take an arithmetic value.
	numberOptions []string
	// codeOptions take code that the builtin runs (mapfile -C).
	codeOptions []string
	// withValue lists every option that takes a value.
	withValue []string
	// assigns is set when the names are assigned, not only read.
	assigns bool
}

// builtinTable holds the builtins whose operands are names or
// arithmetic, sorted by name (see table). readarray is mapfile under
// another name: both entries point at mapfileOperands.
var builtinTable = table[*builtinOperands]{
	{"break", &builtinOperands{numbers: true}},
	{"caller", &builtinOperands{numbers: true}},
	{"continue", &builtinOperands{numbers: true}},
	{"declare", &builtinOperands{names: "all", assigns: true}},
	{"exit", &builtinOperands{numbers: true}},
	{"export", &builtinOperands{names: "all", assigns: true}},
	{"getopts", &builtinOperands{names: "second", assigns: true}},
	{"history", &builtinOperands{numbers: true}},
	{"let", &builtinOperands{numbers: true}},
	{"local", &builtinOperands{names: "all", assigns: true}},
	{"mapfile", mapfileOperands},
	{"printf", &builtinOperands{nameOptions: []string{"-v"}, withValue: []string{"-v"}, assigns: true}},
	{"read", &builtinOperands{names: "all", nameOptions: []string{"-a"}, numberOptions: []string{"-n", "-N", "-t", "-u"},
		withValue: []string{"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"}, assigns: true}},
	{"readarray", mapfileOperands},
	{"readonly", &builtinOperands{names: "all", assigns: true}},
	{"return", &builtinOperands{numbers: true}},
	{"shift", &builtinOperands{numbers: true}},
	{"typeset", &builtinOperands{names: "all", assigns: true}},
	{"ulimit", &builtinOperands{numbers: true}},
	{"unset", &builtinOperands{names: "all"}},
	{"wait", &builtinOperands{nameOptions: []string{"-p"}, withValue: []string{"-p"}, assigns: true, numbers: true}},
}

// mapfileOperands are the operands of mapfile and of readarray, its other
// name.
var mapfileOperands = &builtinOperands{names: "all", numberOptions: []string{"-n", "-O", "-s", "-u", "-c"}, codeOptions: []string{"-C"},
	withValue: []string{"-d", "-n", "-O", "-s", "-u", "-C", "-c"}, assigns: true}

// builtinWords checks the operands of a builtin that bash reads as names
// or arithmetic. words[0] is the builtin.
func (a *analyzer) builtinWords(seg *Segment, name string, words []word, f frame) {
	if strings.Contains(words[0].text, "/") {
		return // the program of that name, not the builtin
	}
	switch name {
	case "test", "[":
		a.testWords(seg, words[1:], f)
		return
	case "trap":
		a.trapSignals(seg, words[1:])
		return
	}
	spec := builtinTable.get(name)
	if spec == nil {
		return
	}
	var operands []word
	args := words[1:]
	knownOperand := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.known && w.text == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		// bash's builtins stop reading options at the first operand
		// (printf '%s' -vPATH prints -vPATH). After a word only known
		// at run time, later words are still read as options: that word
		// may itself be an option.
		if !w.known || !isOption(w.text) || knownOperand || len(operands) > 0 && spec.numbers {
			knownOperand = knownOperand || w.known
			operands = append(operands, w)
			continue
		}
		opt := w.text
		value, hasValue := word{}, false
		if m := matchingSpec(spec.withValue, opt); m != "" {
			value, hasValue = optionArgument(args, &i, m)
		}
		switch {
		case !hasValue:
		case matchesAny(spec.nameOptions, opt):
			a.nameOperand(seg, value, f, spec.assigns)
		case matchesAny(spec.numberOptions, opt):
			a.arithWord(seg, value, f)
		case matchesAny(spec.codeOptions, opt):
			seg.Opaque = true
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s runs the code %s for each line it reads", name, opt, quoteWord(value.shown())), Rule: "builtin-callback"})
		}
	}
	switch {
	case spec.numbers:
		for _, w := range operands {
			if name == "ulimit" && w.known && (w.text == "unlimited" || w.text == "soft" || w.text == "hard") {
				continue
			}
			if w.known && strings.HasPrefix(w.text, "%") && (name == "wait" || name == "kill") {
				continue // a job: %1, %+, %name
			}
			a.arithWord(seg, w, f)
		}
	case spec.names == "all":
		for _, w := range operands {
			a.nameOperand(seg, w, f, spec.assigns)
		}
	case spec.names == "second" && len(operands) > 1:
		a.nameOperand(seg, operands[1], f, spec.assigns)
	}
	if name == "printf" {
		a.printfNumbers(seg, operands, f)
	}
}

// arithWord checks an evaluated word that bash evaluates as arithmetic.
func (a *analyzer) arithWord(seg *Segment, w word, f frame) {
	if w.known {
		a.arithString(seg, w.text, f)
		return
	}
	if w.node != nil && len(w.node.Parts) == 1 {
		part := w.node.Parts[0]
		if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
			part = dq.Parts[0]
		}
		switch p := part.(type) {
		case *syntax.ArithmExp:
			return // a number; its expression was checked with the word
		case *syntax.ParamExp:
			if p.Param != nil && !p.Excl && p.Index == nil && p.Slice == nil && p.Repl == nil && p.NestedParam == nil {
				if p.Length {
					return
				}
				if p.Exp == nil || (p.Exp.Op == syntax.DefaultUnset || p.Exp.Op == syntax.DefaultUnsetOrNull) && p.Exp.Word != nil && arithNumber.get().MatchString(p.Exp.Word.Lit()) {
					a.arithVar(seg, p.Param.Value)
					return
				}
			}
		}
	}
	seg.add(arithReason(fmt.Sprintf("evaluates %s as arithmetic, and its value is only known at run time", quoteWord(w.shown()))))
}

// testArithOps are the test operators that compare integers.
var testArithOps = nameSet{
	"-eq",
	"-ge",
	"-gt",
	"-le",
	"-lt",
	"-ne",
}

// testWords checks test/[ operands: arithmetic comparisons evaluate both
// sides, and -v and -R take a variable name.
func (a *analyzer) testWords(seg *Segment, args []word, f frame) {
	if n := len(args); n > 0 && args[n-1].known && args[n-1].text == "]" {
		args = args[:n-1]
	}
	for i, w := range args {
		if !w.known {
			continue
		}
		switch {
		case testArithOps.has(w.text):
			if i > 0 {
				a.arithWord(seg, args[i-1], f)
			}
			if i+1 < len(args) {
				a.arithWord(seg, args[i+1], f)
			}
		case (w.text == "-v" || w.text == "-R") && i+1 < len(args):
			a.nameOperand(seg, args[i+1], f, false)
		}
	}
}

// trapSignals checks the signal operands of trap: bash evaluates one that
// is not a signal name as arithmetic.
func (a *analyzer) trapSignals(seg *Segment, args []word) {
	// The first operand is the handler (or -, -p, -l).
	for _, w := range args[min(1, len(args)):] {
		if w.known && (identifier.get().MatchString(w.text) || arithNumber.get().MatchString(w.text)) {
			continue
		}
		seg.add(arithReason(fmt.Sprintf("trap is given the signal %s, which bash evaluates as arithmetic", quoteWord(w.shown()))))
	}
}

// printfConversion matches a printf conversion; group 1 holds the flags,
// width and precision, group 2 the conversion letter.
var printfConversion = &lazyRegexp{expr: `%([-+ #0'*0-9.]*)(\([^)]*\)T|[a-zA-Z%])`}

// printfNumbers checks the arguments printf converts as integers: bash
// evaluates them as arithmetic.
func (a *analyzer) printfNumbers(seg *Segment, operands []word, f frame) {
	if len(operands) < 2 {
		return
	}
	format := operands[0]
	if !format.known {
		for _, w := range operands[1:] {
			a.arithWord(seg, w, f)
		}
		return
	}
	// Each conversion takes the next argument, and a * width or
	// precision one more; the format is reused until the arguments run out.
	var integer []bool
	for _, m := range printfConversion.get().FindAllStringSubmatch(format.text, -1) {
		if m[2] == "%" {
			continue
		}
		for range strings.Count(m[1], "*") {
			integer = append(integer, true)
		}
		// %(fmt)T takes a time in seconds, an integer too.
		integer = append(integer, strings.Contains("diouxX", m[2]) || strings.HasSuffix(m[2], "T"))
	}
	if len(integer) == 0 {
		return
	}
	for j, w := range operands[1:] {
		if integer[j%len(integer)] {
			a.arithWord(seg, w, f)
		}
	}
}
