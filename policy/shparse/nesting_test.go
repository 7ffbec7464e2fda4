package shparse

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// treeDepth is the depth of the deepest node under n.
func treeDepth(n syntax.Node) int {
	depth, deepest := 0, 0
	syntax.Walk(n, func(n syntax.Node) bool {
		if n == nil {
			depth--
			return true
		}
		depth++
		deepest = max(deepest, depth)
		return true
	})
	return deepest
}

// corpusCommands returns every JSON string in a column of the repository's
// corpora (testdata/corpus/*.tsv) and of check's golden commands.
func corpusCommands(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("../../testdata/corpus/*.tsv")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []string
	for _, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			for _, col := range strings.Split(line, "\t") {
				var s string
				if json.Unmarshal([]byte(col), &s) == nil {
					out = append(out, s)
				}
			}
		}
	}
	raw, err := os.ReadFile("../../testdata/check/commands.txt")
	require.NoError(t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		var s string
		if json.Unmarshal([]byte(line), &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// TestPrescanCorpus: no command of the corpora comes near the limit.
func TestPrescanCorpus(t *testing.T) {
	deepest := 0
	for _, c := range corpusCommands(t) {
		require.NoError(t, CheckNesting(c), "%q", c)
		deepest = max(deepest, nestingEstimate(c, MaxNesting))
	}
	t.Logf("highest estimate in the corpora: %d (limit %d)", deepest, MaxNesting)
	assert.Less(t, deepest, MaxNesting/20, "ordinary commands stay far below the limit")
}

// TestPrescanUnfooled: closing tokens that are literal, quoted or case
// patterns do not hide nesting from the estimate, which never subtracts.
func TestPrescanUnfooled(t *testing.T) {
	n := MaxNesting / prescanNest
	for name, src := range map[string]string{
		"quoted closers":       strings.Repeat("( ')' ", n) + "ls",
		"literal braces":       strings.Repeat("{ echo } ; ", n),
		"literal fi":           strings.Repeat("if a; then echo fi; ", n),
		"case patterns":        strings.Repeat("( case x in a) ;; b) ", n),
		"comment closers":      strings.Repeat("(#)\n", n),
		"line continued if":    strings.Repeat("i\\\nf a; then ", n),
		"escaped backquotes":   "echo `" + strings.Repeat("\\`", n),
		"arithmetic unary not": "echo $((" + strings.Repeat("!", n*prescanNest/prescanOp) + "1))",
	} {
		err := CheckNesting(src)
		assert.ErrorIs(t, err, ErrTooDeep, name)
	}
	assert.NoError(t, CheckNesting(strings.Repeat("(", MaxNesting/prescanNest-4)))
	assert.NoError(t, CheckNesting(strings.Repeat("diff ifs thence fort doing esac fi done } ) ]\n", 5000)), "words that merely contain keywords and closers cost nothing")
}

// FuzzPrescan: the pre-scan never panics; whatever it accepts parses into
// a tree no deeper than its estimate, in every language the analysis reads.
func FuzzPrescan(f *testing.F) {
	for _, c := range corpusCommands(f) {
		f.Add(c)
	}
	for _, s := range []string{
		"echo $((((1+2)*3)))", "a=( [1]=x ); echo ${a[$((1+${#a[@]}))]}", "f() { g() { :; }; }",
		"[[ ! ( a && ! b ) || -n \"$(c <(d) >(e))\" ]]", "cat <<E\n$(a $(b))\nE", "echo `a \\`b\\``",
		"time ! a | b |& c", "coproc x { a; }", "case x in (a) b;; c) d;& esac", "for ((i=0;i<3;i++)); do :; done",
		"let a=b?c:d,e**=2", "echo ${x:-${y:=${z#a}}} ${x:1:2} ${!p} ${x/a/$(b)}", "select x in a; do b; done",
		"if a; then b; elif c; then d; else e; fi", "until a; do b; done", "echo @(a|*(b)) +(c)", "function f { :; }",
		"declare -A m=([k]=\"$(v)\"); local x=$((1<<2))", "i\\\nf a; then b; f\\\ni",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkPrescanBound(t, src)
		// Repeated, a unit that opens a level the estimate undercounts
		// shows past the estimate's constant slack.
		checkPrescanBound(t, strings.Repeat(src, 50))
	})
}

// FuzzPrescanNested checks the bound on texts nested n deep, n times open,
// a middle, n times close, which random mutation alone rarely builds: an
// opening construct the estimate undercounts shows n times over.
func FuzzPrescanNested(f *testing.F) {
	for _, s := range [][3]string{
		{"echo $((", "1", "))"}, {"(", "1", ")"}, {"(", "ls", ")"}, {"echo $(", "ls", ")"}, {`echo "$(`, "ls", `)"`},
		{"${x:-", "y", "}"}, {`"${x:-`, "y", `}"`}, {"{ ", "ls;", " }"}, {"if a; then ", "b", "; fi"},
		{"while a; do ", "b", "; done"}, {"for i in 1; do ", "b", "; done"}, {"case x in x) ", "b", ";; esac"},
		{"cat <(", "ls", ")"}, {"[[ ( ", "a", " ) ]]"}, {"echo $((a[", "1", "]))"}, {"f() ", "{ :; }", ""},
		{"time ", "ls", ""}, {"! ", "ls", ""}, {"echo @(", "a", ")"}, {"a=(", "x", ")"}, {"echo `", "ls", "`"},
		{"bash -c '", "ls", "'"}, {"let a=", "1", ""}, {"echo $((-", "1", "))"}, {"[[ ! ", "a", " ]]"},
	} {
		f.Add(s[0], s[1], s[2], uint8(40))
	}
	f.Fuzz(func(t *testing.T, open, mid, close string, n uint8) {
		checkPrescanBound(t, strings.Repeat(open, int(n))+mid+strings.Repeat(close, int(n)))
	})
}

// checkPrescanBound: the pre-scan never panics, and whatever it accepts
// parses into a tree no deeper than its estimate, in every language the
// analysis reads.
func checkPrescanBound(t *testing.T, src string) {
	est := nestingEstimate(src, MaxNesting)
	if CheckNesting(src) != nil {
		if est <= MaxNesting {
			t.Fatalf("refused with estimate %d under the limit", est)
		}
		return
	}
	for _, lang := range []syntax.LangVariant{syntax.LangBash, syntax.LangPOSIX, syntax.LangZsh, syntax.LangMirBSDKorn} {
		var file *syntax.File
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			file, err = syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: parsing %q takes over 5 s", lang, src)
		}
		if err != nil {
			continue
		}
		if d := treeDepth(file); d > est {
			t.Fatalf("%s: tree depth %d over the estimate %d for %q", lang, d, est, src)
		}
	}
}
