package policy

import (
	"strings"
	"testing"
	"time"
)

// TestAdversarialInputsStayFast guards against inputs that would make the
// analysis (and so the shim) hang: deep nesting, long chains, huge scripts.
func TestAdversarialInputsStayFast(t *testing.T) {
	e := testEngine(t)
	cases := map[string]string{
		"nested subst":   strings.Repeat("$(", 300) + "ls" + strings.Repeat(")", 300),
		"braces":         strings.Repeat("{a,b}", 40) + " x",
		"long pipeline":  strings.Repeat("ls | ", 3000) + "ls",
		"eval chain":     strings.Repeat("eval ", 2000) + "ls",
		"bash -c nest":   strings.Repeat("bash -c '", 1) + strings.Repeat("x", 100000) + "'",
		"many funcs":     strings.Repeat("f(){ g; }; g(){ f; }; ", 500) + "f",
		"sed script":     "sed '" + strings.Repeat("s/a/b/;", 20000) + "' f",
		"big heredoc":    "bash <<EOF\n" + strings.Repeat("echo hi\n", 20000) + "EOF",
		"python code":    "python -c \"" + strings.Repeat("os.system('ls');", 5000) + "\"",
		"deep subshell":  strings.Repeat("(", 500) + "ls" + strings.Repeat(")", 500),
		"quoted nest":    "bash -c " + strings.Repeat("\"", 1) + strings.Repeat("eval ", 200) + "ls\"",
		"find exec many": "find . " + strings.Repeat("-exec rm {} \\; ", 2000),
	}
	for name, c := range cases {
		start := time.Now()
		res := e.Analyze(Request{Command: c, Cwd: testWorkspace, Home: testHome})
		d := time.Since(start)
		t.Logf("%-15s %6d bytes %4d segs %-12s %v", name, len(c), len(res.Segments), res.Risk, d)
		if d > 2*time.Second*raceSlowdown {
			t.Errorf("%s took %v", name, d)
		}
	}
}
