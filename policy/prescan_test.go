package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	files, err := filepath.Glob("../testdata/corpus/*.tsv")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []string
	for _, file := range files {
		readTSV(t, file, func(_ int, cols []string) {
			for _, col := range cols {
				var s string
				if json.Unmarshal([]byte(col), &s) == nil {
					out = append(out, s)
				}
			}
		})
	}
	raw, err := os.ReadFile("../testdata/check/commands.txt")
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

// adversarial are inputs that crash the parser or make it take seconds or
// gigabytes without the pre-scan, each at most maxInput long.
func adversarial() map[string]func() string {
	const mb = maxInput
	fill := func(prefix, unit, suffix string) string { // as many units as fit in 1 MB
		return prefix + strings.Repeat(unit, (mb-len(prefix)-len(suffix))/len(unit)) + suffix
	}
	nested := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	edge := MaxNesting/prescanNest - 4
	return map[string]func() string{
		"150k nested arithmetic parens": func() string { return "echo $((" + nested("(", "1", ")", 150_000) + "))" },
		"65k (":                         func() string { return strings.Repeat("(", 65_000) },
		"65k nested arithmetic parens":  func() string { return "echo $((" + nested("(", "1", ")", 65_000) + "))" },
		"300k $(":                       func() string { return "echo " + strings.Repeat("$(", 300_000) },
		"1 MB of {":                     func() string { return fill("", "{ ", "") },
		"nested subshells":              func() string { return nested("(", "ls", ")", mb/2-2) },
		"nested array index":            func() string { return "echo ${a[" + nested("a[", "1", "]", mb/3-4) + "]}" },
		"pipeline":                      func() string { return fill("a", "|a", "") },
		"&& chain":                      func() string { return fill("a", "&&a", "") },
		"|| chain":                      func() string { return fill("a", "||a", "") },
		"many ;":                        func() string { return fill("a", ";a", "") },
		"many lines":                    func() string { return fill("a", "\na", "") },
		"deep $( in double quotes":      func() string { return "echo " + nested(`"$(`, "ls", `)"`, mb/5-2) },
		"nested ${x:-":                  func() string { return "echo " + nested("${x:-", "y", "}", mb/6-2) },
		"nested if":                     func() string { return nested("if a; then ", "b", "; fi", mb/15-1) },
		"nested while":                  func() string { return nested("while a; do ", "b", "; done", mb/18-1) },
		"nested <(":                     func() string { return "cat " + nested("<(", "ls", ")", mb/3-3) },
		"nested [[ (":                   func() string { return "[[ " + nested("( ", "a", " )", mb/4-3) + " ]]" },
		"[[ ! chain":                    func() string { return fill("[[ ", "! ", "a ]]") },
		"[[ && chain":                   func() string { return fill("[[ a", " && a", " ]]") },
		"arithmetic + chain":            func() string { return fill("echo $((", "1+", "1))") },
		"arithmetic = chain":            func() string { return fill("echo $((", "a=", "1))") },
		"arithmetic ternary chain":      func() string { return fill("echo $((", "a?b:", "1))") },
		"time chain":                    func() string { return fill("", "time ", "ls") },
		"function chain":                func() string { return fill("", "f() ", "{ :; }") },
		"many heredocs":                 func() string { return strings.Repeat("cat <<E;", mb/24) + "\n" + strings.Repeat("x\nE\n", mb/24) },
		"heredoc of $(":                 func() string { return "cat <<E\n" + strings.Repeat("$(", mb/2-8) + "\nE\n" },
		"bash -c of escaped parens":     func() string { return fill("bash -c $'", `\x28`, "'") },
		"eval of escaped $(":            func() string { return fill("eval $'", `\x24\x28`, "'") },
		"edge: arithmetic parens":       func() string { return "echo $((" + nested("(", "1", ")", edge) + "))" },
	}
}

// TestPrescanAdversarial analyzes each adversarial input in a fresh process
// (a stack overflow would kill the test binary) and asserts that it exits
// cleanly, needs review, and stays within a second and 200 MB.
func TestPrescanAdversarial(t *testing.T) {
	if name := os.Getenv("EXECGATE_PRESCAN_CASE"); name != "" {
		analyzeAdversarial(t, name)
		return
	}
	cases := adversarial()
	for name := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestPrescanAdversarial$", "-test.v")
			cmd.Env = append(os.Environ(), "EXECGATE_PRESCAN_CASE="+name)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "the analysis must not crash:\n%s", tail(out))
			var r adversarialResult
			line := string(out)
			i := strings.Index(line, "RESULT ")
			require.GreaterOrEqual(t, i, 0, "%s", tail(out))
			line, _, _ = strings.Cut(line[i+len("RESULT "):], "\n")
			require.NoError(t, json.Unmarshal([]byte(line), &r))
			t.Logf("%s: %d bytes: %s, %v, %d MB from the OS; %s", name, r.Bytes, r.Risk, r.Took, r.SysMB, r.Reason)
			slow := time.Duration(raceSlowdown)
			assert.LessOrEqual(t, r.Took, slow*time.Second)
			assert.LessOrEqual(t, r.SysMB, uint64(200*raceSlowdown))
			if !strings.HasPrefix(name, "edge: ") {
				assert.Equal(t, NeedsReview.String(), r.Risk)
				assert.Contains(t, r.Reason, "too deeply nested to check")
			}
		})
	}
}

type adversarialResult struct {
	Bytes  int
	Risk   string
	Reason string
	Took   time.Duration
	SysMB  uint64
}

func analyzeAdversarial(t *testing.T, name string) {
	gen, ok := adversarial()[name]
	require.True(t, ok, name)
	src := gen()
	require.LessOrEqual(t, len(src), maxInput, name)
	e := testEngine(t)
	runtime.GC()
	start := time.Now()
	res := e.Analyze(Request{Command: src, Cwd: testWorkspace, Home: testHome})
	took := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	reason := strings.Join(res.Reasons, "; ")
	if len(reason) > 200 {
		reason = reason[:200]
	}
	out, err := json.Marshal(adversarialResult{Bytes: len(src), Risk: res.Risk.String(), Reason: reason, Took: took, SysMB: ms.Sys >> 20})
	require.NoError(t, err)
	fmt.Printf("RESULT %s\n", out)
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// TestPrescanNestedScript: a nested script (bash -c, eval) too deep to
// check needs review with the same reason, and the top level says so too.
func TestPrescanNestedScript(t *testing.T) {
	e := testEngine(t)
	deep := strings.Repeat(`\x28`, MaxNesting/prescanNest)
	for _, src := range []string{"bash -c $'" + deep + "'", "ls && eval $'" + deep + "'"} {
		require.NoError(t, CheckNesting(src), "the outer text is shallow")
		res := e.Analyze(Request{Command: src, Cwd: testWorkspace, Home: testHome})
		assert.Equal(t, NeedsReview, res.Risk, src[:10])
		assert.True(t, res.Opaque)
		assert.Contains(t, strings.Join(res.Reasons, "; "), "too deeply nested to check", src[:10])
	}
	res := e.Analyze(Request{Command: strings.Repeat("(", MaxNesting), Cwd: testWorkspace, Home: testHome})
	assert.Equal(t, NeedsReview, res.Risk)
	assert.Equal(t, []string{"too deeply nested to check"}, res.Reasons)
	require.Len(t, res.Segments, 1)
	assert.Equal(t, "too-deep", res.Segments[0].Reasons[0].Rule)
	assert.True(t, errors.Is(CheckNesting(res.Command), ErrTooDeep))
}

// TestUnwrapTooDeep: an envelope is only looked for in a text that can be
// parsed safely.
func TestUnwrapTooDeep(t *testing.T) {
	deep := "pwd; echo $((" + strings.Repeat("(", 150_000) + "1" + strings.Repeat(")", 150_000) + "))"
	_, ok := Trust{}.Unwrap(deep, nil)
	assert.False(t, ok)
}
