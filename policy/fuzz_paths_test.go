package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// linkFixture is a tree full of links: into the tree, out of it, to
// nothing, in loops, through "..".
func linkFixture(t testing.TB) string {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b/c", "home/.ssh", "x"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/b/c/f", "home/.ssh/id_rsa", "x/y"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"a/up":       "..",
		"a/b/key":    "../../home/.ssh/id_rsa",
		"a/b/dir":    "../../home/.ssh",
		"a/abs":      root + "/x",
		"a/nothing":  "missing/deeper",
		"loop1":      "loop2",
		"loop2":      "loop1",
		"a/b/c/self": ".",
		"a/chain":    "b/dir",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// FuzzExpandGlob expands arbitrary words over the link fixture: never a
// panic, and an expansion it trusts names only paths (or the word).
func FuzzExpandGlob(f *testing.F) {
	for _, s := range []string{"*", "a/*/*", "[!a]*", "a/b/[[:alpha:]]*", "[]a]*", "~/*", "\"$HOME\"/.*", "@(a|x)/*", "a/up/*/b", "**/*", "[", "x\\*"} {
		f.Add(s)
	}
	root := linkFixture(f)
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
