package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/policy/shparse"
)

// opensToLimit is how many "(" in a row the nesting check still accepts,
// found from shparse.CheckNesting itself so that these tests follow its
// weights: the edge the adversarial cases probe.
func opensToLimit() int {
	lo, hi := 0, shparse.MaxNesting // CheckNesting accepts lo "(" and refuses hi
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if shparse.CheckNesting(strings.Repeat("(", mid)) == nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
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
	edge := opensToLimit() - 2 // the most arithmetic parens accepted inside `echo $((`
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
	deep := strings.Repeat(`\x28`, opensToLimit()+1)
	for _, src := range []string{"bash -c $'" + deep + "'", "ls && eval $'" + deep + "'"} {
		require.NoError(t, shparse.CheckNesting(src), "the outer text is shallow")
		res := e.Analyze(Request{Command: src, Cwd: testWorkspace, Home: testHome})
		assert.Equal(t, NeedsReview, res.Risk, src[:10])
		assert.True(t, res.Opaque)
		assert.Contains(t, strings.Join(res.Reasons, "; "), "too deeply nested to check", src[:10])
	}
	res := e.Analyze(Request{Command: strings.Repeat("(", shparse.MaxNesting), Cwd: testWorkspace, Home: testHome})
	assert.Equal(t, NeedsReview, res.Risk)
	assert.Equal(t, []string{"too deeply nested to check"}, res.Reasons)
	require.Len(t, res.Segments, 1)
	assert.Equal(t, "too-deep", res.Segments[0].Reasons[0].Rule)
	assert.True(t, errors.Is(shparse.CheckNesting(res.Command), shparse.ErrTooDeep))
}

// TestUnwrapTooDeep: an envelope is only looked for in a text that can be
// parsed safely.
func TestUnwrapTooDeep(t *testing.T) {
	deep := "pwd; echo $((" + strings.Repeat("(", 150_000) + "1" + strings.Repeat(")", 150_000) + "))"
	_, ok := Trust{}.Unwrap(deep, nil)
	assert.False(t, ok)
}
