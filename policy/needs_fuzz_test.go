package policy

import (
	"slices"
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
		"make CC=clang", "git log > /tmp/x", "pip install -r r.txt && pytest", "python3 -Im pip install --user x", "python3 -W x -mpip install y", "npm ci --registry=x", `out=$(mktemp); ls > "$out"`, "python3 - <<EOF\n$X\nEOF"} {
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
		// Allowing every registry's hosts takes out downloads and
		// nothing else.
		w := n.WithHosts([]string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org"}, nil)
		if w.Within() && !n.Within() {
			if res.Risk == Dangerous || n.Credentials || n.Host || res.ParseError != "" {
				t.Fatalf("%q fits the sandbox through the proxy: %+v", command, n)
			}
			for _, b := range n.Beyond {
				if !slices.ContainsFunc(n.Downloads, func(d Download) bool { return d.Reason == b }) {
					t.Fatalf("%q: %q is not a download, and fits through the proxy", command, b)
				}
			}
			if !w.Proxied || w.Network || !w.RunCode {
				t.Fatalf("%q: %+v through the proxy", command, w)
			}
		}
	})
}
