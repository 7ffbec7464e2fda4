package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/execgate/execgate/config"
)

// TestNeedsOf: what a command needs, in the sandbox's terms, follows
// from what the analysis found; a client of a local daemon needs more
// than the boundary (its socket is closed inside), so it never runs
// confined in place of asking.
func TestNeedsOf(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	cases := []struct {
		command            string
		within, write, run bool
		daemon             bool
	}{
		{command: "ls -la", within: true},
		{command: "python3 repro.py", within: true, write: true, run: true},
		{command: "echo hi > out.txt", within: true, write: true},
		{command: "docker ps", daemon: true},
		{command: "docker build -t x .", run: true, write: true, daemon: true},
		{command: "/usr/bin/docker compose up", run: true, write: true, daemon: true},
		{command: "sudo systemctl restart nginx", daemon: true},
		{command: "tmux new -d 'make'", run: true, write: true, daemon: true},
		{command: "curl https://example.com", run: false},
	}
	for _, c := range cases {
		res := e.Evaluate(Request{Command: c.command, Cwd: testWorkspace, Home: testHome, Policy: pol})
		n := NeedsOf(res, testWorkspace, testHome)
		assert.Equal(t, c.within, n.Within(), "%q: %+v", c.command, n)
		assert.Equal(t, c.daemon, n.Daemon, "%q: %+v", c.command, n)
		if c.within {
			assert.Equal(t, c.write, n.WriteWorkspace, "%q: %+v", c.command, n)
			assert.Equal(t, c.run, n.RunCode, "%q: %+v", c.command, n)
		}
		if c.daemon {
			assert.Contains(t, n.Summary(), "daemon", c.command)
			assert.False(t, CanConfine(pol, res, n, true), "%q would run confined, where it can only fail", c.command)
		}
	}
}
