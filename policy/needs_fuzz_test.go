package policy

import (
	"testing"

	"github.com/execgate/execgate/config"
)

// FuzzNeeds: whatever the command, deriving its needs never panics, a
// dangerous command never fits the sandbox (nothing dangerous runs
// confined in place of asking), a package manager's download always
// needs the network, what does not parse never fits, and what fits the
// boundary lists no reason beyond it.
func FuzzNeeds(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.command)
	}
	for _, s := range []string{"npm install", "PYTHONPATH=src pytest", "GOFLAGS=-count=1 go test ./...",
		"make CC=clang", "git log > /tmp/x", `out=$(mktemp); ls > "$out"`, "python3 - <<EOF\n$X\nEOF"} {
		f.Add(s)
	}
	e := testEngine(f)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1, AutoAllowSafe: true}
	f.Fuzz(func(t *testing.T, command string) {
		res := e.Evaluate(Request{Command: command, Cwd: testWorkspace, Home: testHome, Policy: pol})
		n := NeedsOf(res, testWorkspace, testHome)
		if res.Risk == Dangerous && n.Within() {
			t.Fatalf("dangerous %q fits the sandbox: %v", command, res.Reasons)
		}
		for _, seg := range res.Segments {
			if what, ok := fetches(seg.Argv); ok && !n.Network {
				t.Fatalf("%q: %s, but needs no network", command, what)
			}
		}
		if n.Within() != (len(n.Beyond) == 0) || (n.Network && n.Within()) || (n.Credentials && n.Within()) {
			t.Fatalf("%q: inconsistent needs %+v", command, n)
		}
		if res.ParseError != "" && n.Within() {
			t.Fatalf("%q does not parse and fits the sandbox", command)
		}
	})
}
