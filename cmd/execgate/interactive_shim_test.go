package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/shim"
)

// gateRC is the ~/.bashrc of the interactive tests: an alias, a
// PROMPT_COMMAND of its own (which the gate must leave working) and a
// prompt to wait for.
const gateRC = `alias hi='echo rc-alias-$((40+2))'
PROMPT_COMMAND='rc_prompts=$((rc_prompts+1))'
PS1='gated$ '
`

// tmuxPane drives one shell in a private tmux server, as an agent drives a
// terminal pane.
type tmuxPane struct {
	t    *testing.T
	sock string
	env  []string
}

func (p *tmuxPane) tmux(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-S", p.sock}, args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// screen is the pane's whole text, wrapped lines joined.
func (p *tmuxPane) screen() string {
	out, _ := p.tmux("capture-pane", "-p", "-J", "-S", "-500", "-t", "gate")
	return out
}

// typeLine types line and Enter, as send-keys does for an agent.
func (p *tmuxPane) typeLine(line string) {
	p.t.Helper()
	_, err := p.tmux("send-keys", "-t", "gate", "-l", line)
	require.NoError(p.t, err)
	_, err = p.tmux("send-keys", "-t", "gate", "Enter")
	require.NoError(p.t, err)
}

// waitFor waits until the screen shows want n times.
func (p *tmuxPane) waitFor(want string, n int) string {
	p.t.Helper()
	var s string
	require.Eventually(p.t, func() bool {
		s = p.screen()
		return strings.Count(s, want) >= n
	}, 10*time.Second, 20*time.Millisecond, "waiting for %d× %q; screen:\n%s", n, want, s)
	return s
}

// TestShimInteractiveGate drives the shim as an interactive bash in a tmux
// pane: every typed line is judged before any of it runs, the shell keeps
// working after a refusal, and rc files, aliases, job control and exit
// behave as in bash.
func TestShimInteractiveGate(t *testing.T) {
	bash := realBash(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	e := newShimEnv(t, "") // built-in defaults: echo is safe, rm needs review, askFallback=deny
	home := filepath.Dir(filepath.Dir(e.config))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte(gateRC), 0o644))
	victim := filepath.Join(e.work, "victim")
	require.NoError(t, os.Mkdir(victim, 0o755))
	sockDir, err := os.MkdirTemp("", "gate-tmux-") // short: socket paths are limited
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	p := &tmuxPane{t: t, sock: filepath.Join(sockDir, "sock"), env: append(e.env, "TERM=xterm", "SHELL="+bash)}
	t.Cleanup(func() { p.tmux("kill-server") })
	_, err = p.tmux("-f", "/dev/null", "new-session", "-d", "-s", "gate", "-x", "200", "-y", "50", "-c", e.work, e.shim("bash"))
	require.NoError(t, err)
	p.waitFor("gated$ ", 1)

	start := time.Now()
	p.typeLine("echo safe-$((6*7))")
	p.waitFor("safe-42", 1)
	lineTime := time.Since(start)

	p.typeLine("rm -rf " + victim)
	s := p.waitFor("execgate: denied: ", 1)
	assert.DirExists(t, victim)
	assert.Contains(t, s, "askFallback=deny")

	p.typeLine("echo next-$((1+1)) status-$?")
	p.waitFor("next-2 status-130", 1) // the refused line ended as ^C ends one

	// Nothing of a refused line runs, not even what comes before the
	// refused command.
	p.typeLine("echo a-$((1+1)); rm -rf " + victim + "; echo b-$((2+1))")
	s = p.waitFor("execgate: denied: ", 2)
	assert.NotContains(t, s, "a-2")
	assert.NotContains(t, s, "b-3")
	assert.DirExists(t, victim)

	p.typeLine("trap - DEBUG")
	p.waitFor("(it would disarm the interactive gate)", 1)
	p.typeLine("rm -rf " + victim)
	p.waitFor("execgate: denied: ", 4)
	assert.DirExists(t, victim, "the gate still stands")

	// The rc file's alias and PROMPT_COMMAND, and job control.
	p.typeLine("hi")
	p.waitFor("rc-alias-42", 1)
	// (Arithmetic on a variable the gate cannot see would be asked about:
	// its value could hold a subscript that runs a command.)
	p.typeLine("case $rc_prompts in [4-9]|[1-9][0-9]*) echo prompts-1;; esac")
	p.waitFor("prompts-1", 1)
	p.typeLine("sleep 30 &")
	p.typeLine("jobs; echo jobs-$((3*3))")
	s = p.waitFor("jobs-9", 1)
	assert.Regexp(t, `\[1\]\+\s+Running\s+sleep 30 &`, s)
	p.typeLine("echo sleeper=$(jobs -p)")
	s = p.waitFor("sleeper=", 2)
	if i := strings.LastIndex(s, "sleeper="); i >= 0 {
		if pid, err := strconv.Atoi(strings.Fields(s[i+len("sleeper="):])[0]); err == nil {
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		}
	}

	p.typeLine("exit")
	require.Eventually(t, func() bool {
		_, err := p.tmux("has-session", "-t", "gate")
		return err != nil
	}, 10*time.Second, 20*time.Millisecond, "the pane's shell did not end; screen:\n%s", p.screen())
	t.Logf("first allowed line shown after %v", lineTime)

	// The audit log has each line's decision, from the interactive source.
	var denied, allowed []string
	for _, ev := range e.readAudit() {
		switch {
		case ev.Event == shim.EventDenied && ev.Source == "interactive":
			denied = append(denied, ev.Command)
		case ev.Event == shim.EventAllowed && ev.Source == "interactive":
			allowed = append(allowed, ev.Command)
		}
	}
	assert.Equal(t, []string{"rm -rf " + victim, "echo a-$((1+1)); rm -rf " + victim + "; echo b-$((2+1))", "trap - DEBUG", "rm -rf " + victim}, denied)
	assert.Contains(t, allowed, "echo safe-$((6*7))")
	assert.Contains(t, allowed, "echo rc-alias-$((40+2))", "judged with the alias expanded")
	assert.Contains(t, allowed, "exit")
}

// TestShimInteractiveGatePiped: an interactive bash reading a pipe (how
// some harnesses drive it) is gated too.
func TestShimInteractiveGatePiped(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, "")
	victim := filepath.Join(e.work, "victim")
	require.NoError(t, os.Mkdir(victim, 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-i"),
		"echo one-$((0+1))\nrm -rf "+victim+"; echo after-$((1+1))\necho two-$((1+1)) $?\n")
	assert.Equal(t, 0, o.status, o.stderr)
	assert.Contains(t, o.stdout, "one-1\n")
	assert.Contains(t, o.stdout, "two-2 130\n")
	assert.NotContains(t, o.stdout, "after-2")
	assert.Equal(t, 1, strings.Count(o.stderr, "execgate: denied: "), o.stderr)
	assert.DirExists(t, victim)
}

// TestShimInteractiveNoGate: when the gate cannot be set up (nowhere to
// write it), the shell is judged as a whole, as before: needs review,
// refused without anyone to ask.
func TestShimInteractiveNoGate(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, "")
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := e.command(ctx, e.shim("bash"), "bash", "-i")
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+filepath.Join(file, "state"))
	o := runOutcome(t, cmd, "echo ran-$((1+1))\n")
	assert.Equal(t, 126, o.status)
	assert.NotContains(t, o.stdout, "ran-2")
	assert.Contains(t, o.stderr, "execgate: denied: starts an interactive shell")
}
