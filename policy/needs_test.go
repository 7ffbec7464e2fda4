package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/execgate/execgate/config"
)

// TestNeedsOf: what a command needs, in the sandbox's terms, follows
// from what the analysis found; a client of a local host needs more
// than the boundary (its socket is closed inside), so it never runs
// confined in place of asking.
func TestNeedsOf(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	cases := []struct {
		command            string
		within, write, run bool
		host               bool
	}{
		{command: "ls -la", within: true},
		{command: "python3 repro.py", within: true, write: true, run: true},
		{command: "echo hi > out.txt", within: true, write: true},
		{command: "docker ps", host: true},
		{command: "docker build -t x .", run: true, write: true, host: true},
		{command: "/usr/bin/docker compose up", run: true, write: true, host: true},
		{command: "sudo systemctl restart nginx", host: true},
		{command: "tmux new -d 'make'", run: true, write: true, host: true},
		{command: "curl https://example.com", run: false},
		// git's network subcommands need the network: confined they could
		// only fail, so they ask (as curl does); git status stays within.
		{command: "git fetch"},
		{command: "git push origin main"},
		{command: "git pull --rebase"},
		{command: "git clone https://example.com/x.git"},
		{command: "git status", within: true},
		{command: "journalctl -u nginx", host: true},
		{command: "gh pr list"},
		{command: "gh --version", within: true},
		{command: "echo hi > /tmp/scratch.txt", within: true, write: true},
		{command: "mkdir /tmp/newdir"},
		{command: "rm -f ~/notes.txt"},
		{command: "rm -f notes.txt", within: true, write: true, run: true},
		{command: "frobnicate /usr/share/dict/words", within: true, write: true, run: true},
		{command: "frobnicate ../elsewhere/data"},
		{command: "cp -r src /tmp/copy"},
	}
	for _, c := range cases {
		res := e.Evaluate(Request{Command: c.command, Cwd: testWorkspace, Home: testHome, Policy: pol})
		n := NeedsOf(res, testWorkspace, testHome)
		assert.Equal(t, c.within, n.Within(), "%q: %+v", c.command, n)
		assert.Equal(t, c.host, n.Host, "%q: %+v", c.command, n)
		if c.within {
			assert.Equal(t, c.write, n.WriteWorkspace, "%q: %+v", c.command, n)
			assert.Equal(t, c.run, n.RunCode, "%q: %+v", c.command, n)
		}
		if c.host {
			assert.Contains(t, n.Summary(), "the host's services", c.command)
			assert.False(t, CanConfine(pol, res, n, true), "%q would run confined, where it can only fail", c.command)
		}
	}
}

// TestNeedsStartupFiles: a shell the command starts reads its start-up
// files from the home before the command: a confined run may read those,
// and only those.
func TestNeedsStartupFiles(t *testing.T) {
	e := testEngine(t)
	for command, want := range map[string][]string{
		"bash -lc 'ls'":        {testHome + "/.bash_login", testHome + "/.bash_logout", testHome + "/.bash_profile", testHome + "/.profile"},
		"bash -c 'ls'":         nil,
		"zsh -c 'ls'":          {testHome + "/.zshenv"},
		"sh -l -c 'ls'":        {testHome + "/.profile"},
		"bash -ic 'ls'":        {testHome + "/.bashrc"},
		"git status && ls -la": nil,
	} {
		res := e.Evaluate(Request{Command: command, Cwd: testWorkspace, Home: testHome})
		n := NeedsOf(res, testWorkspace, testHome)
		assert.Equal(t, want, n.Read, "%q: wrappers %q argv %q", command, res.Segments[0].Wrappers, res.Segments[0].Argv)
	}
}
