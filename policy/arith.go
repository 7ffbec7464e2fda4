package policy

import (
	"fmt"
	"maps"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/policy/shparse"
)

// Arithmetic is code. When bash evaluates a string as arithmetic it expands
// every subscript in it, and so runs the command substitutions a subscript
// holds: with x='a[$(rm -rf ~)]', `(( x ))`, `[ "$x" -eq 1 ]`,
// `printf -v "$x" …` and `read "$x"` all delete the home directory. So an
// arithmetic operand is trusted only when its value is known to be a number:
// a literal number, an arithmetic result, a special parameter that is
// always a number, or a variable this program assigned only such values
// before the use, unconditionally. Anything else is needs-review, and a
// literal string in arithmetic is parsed as the expression it is, so that
// the commands in its subscripts are judged like any other.

// numericParams are parameters whose value is always a number.
var numericParams = nameSet{
	"!",
	"#",
	"$",
	"?",
	"BASHPID",
	"EPOCHSECONDS",
	"EUID",
	"LINENO",
	"OPTIND",
	"PPID",
	"RANDOM",
	"SECONDS",
	"SRANDOM",
	"UID",
}

// arithNumber matches an integer constant in any base bash accepts.
var arithNumber = &lazyRegexp{expr: `^[+-]?(0[xX][0-9a-fA-F]+|[0-9]+|[0-9]+#[0-9a-zA-Z@_]+)$`}

// identifier matches a shell variable name.
var identifier = &lazyRegexp{expr: `^[A-Za-z_][A-Za-z0-9_]*$`}

// arithUse is a read of a variable in arithmetic that was numeric when
// read; Analyze checks at the end that no other assignment anywhere in the
// program (a loop's later iteration, a trap) can give it another value.
type arithUse struct {
	seg  *Segment
	name string
}

// varState is what the analysis knows of the shell variables of one run.
type varState struct {
	// numeric holds the variables assigned only numbers so far, in the
	// order bash runs the program; it is scoped like the variables are
	// (subshells, conditional branches and function bodies restore it).
	numeric map[string]bool
	// poisoned holds every variable given a value that is not known to be
	// a number anywhere in the program; poisonAll is set when a name that
	// is assigned is itself only known at run time.
	poisoned  map[string]bool
	poisonAll bool
	// assigned holds every variable the program may give any value.
	assigned map[string]bool
	// integer holds the variables declared -i, whose assignments are
	// arithmetic.
	integer map[string]bool
	// assoc holds the variables declared -A: their subscripts are keys.
	assoc map[string]bool
	// namerefs maps a nameref to its target ("" when unknown).
	namerefs map[string]string
	uses     []arithUse
}

// saveNumeric returns the numeric set, to be restored when a scope ends.
func (a *analyzer) saveNumeric() map[string]bool {
	if len(a.vars.numeric) == 0 {
		return nil
	}
	return maps.Clone(a.vars.numeric)
}

func (a *analyzer) restoreNumeric(saved map[string]bool) { a.vars.numeric = saved }

// assigned records an assignment of name; numeric says whether the value
// is known to be a number.
func (a *analyzer) assigned(name string, numeric bool) {
	if a.vars.assigned == nil {
		a.vars.assigned = map[string]bool{}
	}
	a.vars.assigned[name] = true
	if numeric {
		if a.vars.numeric == nil {
			a.vars.numeric = map[string]bool{}
		}
		a.vars.numeric[name] = true
		return
	}
	delete(a.vars.numeric, name)
	if a.vars.poisoned == nil {
		a.vars.poisoned = map[string]bool{}
	}
	a.vars.poisoned[name] = true
}

// resolveArithUses adds the late findings: a variable read in arithmetic
// that some assignment elsewhere gives a value not known to be a number.
func (a *analyzer) resolveArithUses() {
	for _, u := range a.vars.uses {
		if a.vars.poisonAll || a.vars.poisoned[u.name] {
			u.seg.add(arithReason(fmt.Sprintf("uses %s in arithmetic, and the program also gives it a value that is not known to be a number", u.name)))
			if !u.seg.pushed {
				a.push(u.seg)
			}
		}
	}
}

func arithReason(text string) Reason {
	return Reason{Risk: NeedsReview, Text: text + " (bash runs any $(…) in a subscript of a value it evaluates as arithmetic)", Rule: "arithmetic-value"}
}

// isAssignOp reports whether op assigns to its left operand.
func isAssignOp(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
		syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// arithExpr checks an arithmetic expression evaluated by bash, walking the
// commands of its substitutions, and records the variables it assigns.
func (a *analyzer) arithExpr(seg *Segment, x syntax.ArithmExpr, f frame) {
	if x == nil {
		return
	}
	a.visitedArith(x)
	switch x := x.(type) {
	case *syntax.BinaryArithm:
		if isAssignOp(x.Op) {
			a.arithExpr(seg, x.Y, f)
			name := arithTarget(x.X)
			if x.Op != syntax.Assgn || name == "" {
				a.arithExpr(seg, x.X, f) // x += y reads x too
			} else {
				a.visitedArith(x.X)
			}
			if name != "" {
				a.assigned(a.nameref(name), true)
				// (( PATH = 1 )) makes PATH the relative directory 1.
				a.checkVar(seg, a.nameref(name))
			}
			return
		}
		a.arithExpr(seg, x.X, f)
		a.arithExpr(seg, x.Y, f)
	case *syntax.UnaryArithm:
		a.arithExpr(seg, x.X, f)
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			if name := arithTarget(x.X); name != "" {
				a.assigned(a.nameref(name), true)
				a.checkVar(seg, a.nameref(name))
			}
		}
	case *syntax.ParenArithm:
		a.arithExpr(seg, x.X, f)
	case *syntax.Word:
		a.arithOperand(seg, x, f)
	default:
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("uses an arithmetic form (%T) execgate cannot check", x), Rule: "unknown-construct"})
	}
}

// arithTarget returns the variable an arithmetic operand names, or "".
func arithTarget(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok {
		return ""
	}
	if lit := w.Lit(); identifier.get().MatchString(lit) {
		return lit
	}
	if len(w.Parts) == 1 {
		if p, ok := w.Parts[0].(*syntax.ParamExp); ok && p.Param != nil && !p.Excl && !p.Length && p.Exp == nil && p.Slice == nil && p.Repl == nil {
			return p.Param.Value
		}
	}
	return ""
}

// arithOperand checks one operand of an arithmetic expression.
func (a *analyzer) arithOperand(seg *Segment, w *syntax.Word, f frame) {
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			switch {
			case arithNumber.get().MatchString(p.Value):
				return
			case identifier.get().MatchString(p.Value):
				a.arithVar(seg, p.Value)
				return
			}
		case *syntax.ParamExp:
			a.arithParam(seg, p, f)
			return
		case *syntax.ArithmExp:
			a.arithExpr(seg, p.X, f)
			return
		}
	}
	ev := evalWord(w)
	a.expansions(seg, ev, f)
	if ev.known {
		a.arithString(seg, ev.text, f)
		return
	}
	seg.add(arithReason(fmt.Sprintf("evaluates %s as arithmetic, and its value is only known at run time", quoteWord(ev.shown()))))
}

// arithParam checks a parameter expansion used as an arithmetic operand.
func (a *analyzer) arithParam(seg *Segment, p *syntax.ParamExp, f frame) {
	ev := word{known: true}
	paramExpansions(p, &ev)
	a.expansions(seg, ev, f)
	if ev.indirect || ev.promptExpand {
		return // the reason is already there
	}
	if p.Param == nil {
		seg.add(arithReason("evaluates an expansion as arithmetic whose value is only known at run time"))
		return
	}
	name := p.Param.Value
	switch {
	case p.Length:
		return // ${#x} is a number
	case p.Index != nil || p.Slice != nil || p.Repl != nil || p.NestedParam != nil:
	case p.Exp == nil:
		a.arithVar(seg, name)
		return
	case (p.Exp.Op == syntax.DefaultUnset || p.Exp.Op == syntax.DefaultUnsetOrNull) &&
		p.Exp.Word != nil && arithNumber.get().MatchString(p.Exp.Word.Lit()):
		a.arithVar(seg, name) // ${n:-0}
		return
	}
	seg.add(arithReason(fmt.Sprintf("evaluates the value of %s as arithmetic, and that value is not known to be a number", name)))
}

// arithVar checks a variable read in arithmetic.
func (a *analyzer) arithVar(seg *Segment, name string) {
	if numericParams.has(name) {
		return
	}
	name = a.nameref(name)
	if a.vars.numeric[name] {
		a.vars.uses = append(a.vars.uses, arithUse{seg: seg, name: name})
		return
	}
	seg.add(arithReason(fmt.Sprintf("uses %s in arithmetic, and its value is not known to be a number", name)))
}

// arithString checks text that bash evaluates as an arithmetic
// expression: it is parsed as one, so that the commands in its subscripts
// are analyzed.
func (a *analyzer) arithString(seg *Segment, text string, f frame) {
	if arithNumber.get().MatchString(strings.TrimSpace(text)) {
		return
	}
	if identifier.get().MatchString(strings.TrimSpace(text)) {
		a.arithVar(seg, strings.TrimSpace(text))
		return
	}
	if f.depth+1 > maxDepth {
		seg.add(arithReason(fmt.Sprintf("evaluates %s as arithmetic, nested too deeply to check", quoteWord(text))))
		return
	}
	src := "$((" + text + "\n))"
	if err := shparse.CheckNesting(src); err != nil {
		seg.add(arithReason(fmt.Sprintf("evaluates %s as arithmetic: %v", quoteWord(text), err)))
		return
	}
	file, err := a.parser(syntax.LangBash).Parse(strings.NewReader(src), "")
	if err != nil || len(file.Stmts) != 1 {
		seg.add(arithReason(fmt.Sprintf("evaluates %s as arithmetic, and execgate cannot read it as an expression", quoteWord(text))))
		return
	}
	ce, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) != 1 || len(ce.Args[0].Parts) != 1 {
		seg.add(arithReason(fmt.Sprintf("evaluates %s as arithmetic, and execgate cannot read it as an expression", quoteWord(text))))
		return
	}
	ae, ok := ce.Args[0].Parts[0].(*syntax.ArithmExp)
	if !ok {
		seg.add(arithReason(fmt.Sprintf("evaluates %s as arithmetic, and execgate cannot read it as an expression", quoteWord(text))))
		return
	}
	inner := frame{src: src, depth: f.depth + 1, via: f.via, lang: syntax.LangBash}
	a.arithExpr(seg, ae.X, inner)
	a.net(file, inner)
}

// nameOperand checks a word that a builtin takes as a variable name
// (read NAME, printf -v NAME, declare NAME=…, test -v NAME): bash evaluates
// a subscript in it as arithmetic. It records the assignment when assign
// is set.
func (a *analyzer) nameOperand(seg *Segment, w word, f frame, assign bool) {
	if !w.known {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("takes a variable name only known at run time (%s), which bash may evaluate as arithmetic", quoteWord(w.shown())), Rule: "dynamic-name"})
		if assign {
			a.vars.poisonAll = true
		}
		return
	}
	name, value, hasValue := strings.Cut(w.text, "=")
	name = strings.TrimSuffix(name, "+")
	base, sub, hasSub := strings.Cut(name, "[")
	if hasSub {
		if !strings.HasSuffix(sub, "]") || !identifier.get().MatchString(base) {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("takes %s as a variable name, which execgate cannot read", quoteWord(w.shown())), Rule: "dynamic-name"})
			return
		}
		a.arithString(seg, strings.TrimSuffix(sub, "]"), f)
	} else if !identifier.get().MatchString(base) {
		// bash refuses the name, and runs nothing.
		return
	}
	if assign {
		a.assigned(a.nameref(base), hasValue && arithNumber.get().MatchString(value) && !hasSub)
		a.checkVar(seg, base)
	}
}

// nameref follows a nameref to the variable it names.
func (a *analyzer) nameref(name string) string {
	for range 8 {
		t, ok := a.vars.namerefs[name]
		if !ok || t == "" {
			return name
		}
		name = t
	}
	return name
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// declarations notes the variables a program declares integer (-i) or
// associative (-A) anywhere, before walking it: the attribute changes how
// every assignment to them and every subscript of them is read.
func (a *analyzer) declarations(file *syntax.File) {
	syntax.Walk(file, func(n syntax.Node) bool {
		c, ok := n.(*syntax.DeclClause)
		if !ok {
			return true
		}
		flags := declFlags(c)
		if !strings.ContainsAny(flags, "iA") {
			return true
		}
		for _, as := range c.Args {
			name := ""
			switch {
			case as.Name != nil:
				name = as.Name.Value
			case as.Naked && as.Value != nil:
				ev := evalWord(as.Value)
				if !ev.known {
					if strings.Contains(flags, "i") {
						a.vars.poisonAll = true
					}
					continue
				}
				name, _, _ = strings.Cut(ev.text, "=")
				name = varName(name)
			}
			if !identifier.get().MatchString(name) {
				continue
			}
			if strings.Contains(flags, "i") {
				if a.vars.integer == nil {
					a.vars.integer = map[string]bool{}
				}
				a.vars.integer[name] = true
			}
			if strings.Contains(flags, "A") {
				if a.vars.assoc == nil {
					a.vars.assoc = map[string]bool{}
				}
				a.vars.assoc[name] = true
			}
		}
		return true
	})
}
