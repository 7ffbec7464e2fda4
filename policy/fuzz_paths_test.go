package policy

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/internal/treetest"
)

// FuzzExpandGlob expands arbitrary words over the link fixture: never a
// panic, and an expansion it trusts names only paths (or the word).
func FuzzExpandGlob(f *testing.F) {
	for _, s := range []string{"*", "a/*/*", "[!a]*", "a/b/[[:alpha:]]*", "[]a]*", "~/*", "\"$HOME\"/.*", "@(a|x)/*", "a/up/*/b", "**/*", "[", "x\\*"} {
		f.Add(s)
	}
	root := treetest.Links(f)
	e := testEngine(f)
	f.Fuzz(func(t *testing.T, s string) {
		file, err := syntax.NewParser().Parse(strings.NewReader("x "+s), "")
		if err != nil || len(file.Stmts) != 1 {
			return
		}
		call, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) != 2 {
			return
		}
		a := &analyzer{r: e.rules, home: root + "/home", cwd: root}
		w := evalWord(call.Args[1])
		fields, ok := a.expandGlob(w)
		if ok && len(fields) == 0 && !a.globOptions().nullGlob {
			t.Fatalf("%q expanded to nothing without nullglob", s)
		}
		_, _ = a.globRegexp(w, w.text)
	})
}

// FuzzPrintedText: what echo and printf print is computed without a
// panic for any arguments.
func FuzzPrintedText(f *testing.F) {
	f.Add("%s%b\\x3a", "::set-env")
	f.Add("%*.*d%q%c", "\\0101")
	f.Fuzz(func(t *testing.T, format, arg string) {
		words := []word{{text: format, known: true}, {text: arg, known: true}}
		printedText("printf", words)
		printedText("echo", words)
		workflowCommand(format + arg)
	})
}
