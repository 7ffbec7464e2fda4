package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/prompt"
	"github.com/execgate/execgate/shim"
)

// TestWriteEventWidth: a 5 KB command (an unrecognised prologue) is one
// screen line in `execgate log`, saying how much was cut; --full (width 0)
// shows it whole; a newline shows as \n either way.
func TestWriteEventWidth(t *testing.T) {
	long := "SNAPSHOT_FILE=/tmp/x\n" + strings.Repeat("echo abc; ", 500)
	ev := shim.Event{Time: time.Unix(0, 0), Event: shim.EventDenied, Agent: "claude-code", Command: long, Risk: "needs-review", DecidedBy: "fallback"}
	var b bytes.Buffer
	require.NoError(t, writeEvent(&b, ev, logWidth))
	line := b.String()
	assert.Equal(t, 1, strings.Count(line, "\n"))
	assert.Less(t, len(line), 400)
	assert.Contains(t, line, `SNAPSHOT_FILE=/tmp/x\necho abc;`)
	assert.Contains(t, line, "… (5021 bytes; --full shows all)")

	b.Reset()
	require.NoError(t, writeEvent(&b, ev, 0))
	assert.Contains(t, b.String(), strings.Repeat("echo abc; ", 500))
	assert.NotContains(t, b.String(), "--full")

	b.Reset()
	ev.Command = "git status"
	require.NoError(t, writeEvent(&b, ev, logWidth))
	assert.True(t, strings.HasSuffix(b.String(), "git status\n"), b.String())
}

// logWorld is an audit log with events of two agents, one a minute, the
// newest a minute ago.
func logWorld(t *testing.T) *globals {
	t.Helper()
	state := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}
	path, err := shim.DefaultAuditPath(getenv)
	require.NoError(t, err)
	audit := shim.AuditLog{Path: path}
	now := time.Now()
	for i := range 30 {
		agent := "claude-code"
		if i%3 == 0 {
			agent = "codex"
		}
		require.NoError(t, audit.Append(shim.Event{
			Time: now.Add(time.Duration(i-30) * time.Minute), Event: shim.EventDenied, ID: fmt.Sprint(i),
			Agent: agent, Command: fmt.Sprintf("cmd-%02d", i), Risk: "dangerous", DecidedBy: "policy",
		}))
	}
	return &globals{getenv: getenv}
}

func logCommands(t *testing.T, g *globals, f logFlags) []string {
	t.Helper()
	var out, errb bytes.Buffer
	g.stdout, g.stderr = &out, &errb
	require.NoError(t, runLog(context.Background(), g, f))
	return regexp.MustCompile(`cmd-\d\d`).FindAllString(out.String(), -1)
}

func TestLogFilters(t *testing.T) {
	g := logWorld(t)
	all := logCommands(t, g, logFlags{lines: -1})
	require.Len(t, all, 30)
	assert.Equal(t, []string{"cmd-27", "cmd-28", "cmd-29"}, logCommands(t, g, logFlags{lines: 3}))
	codex := logCommands(t, g, logFlags{lines: -1, agent: "codex"})
	assert.Len(t, codex, 10)
	assert.Equal(t, []string{"cmd-24", "cmd-27"}, logCommands(t, g, logFlags{lines: 2, agent: "codex"}))
	assert.Len(t, logCommands(t, g, logFlags{lines: -1, since: "10m"}), 9)
	assert.Len(t, logCommands(t, g, logFlags{lines: -1, since: "1d"}), 30)
	assert.Empty(t, logCommands(t, g, logFlags{lines: 0}))
	for _, bad := range []string{"yesterday", "-1d", "1.5d"} {
		err := runLog(context.Background(), g, logFlags{lines: -1, since: bad})
		assert.ErrorContains(t, err, "--since", bad)
	}
}

// TestLogFollowFromTheEnd: --follow shows the last events, not the whole
// history, then the new ones, filtered.
func TestLogFollowFromTheEnd(t *testing.T) {
	g := logWorld(t)
	var out syncBuffer
	g.stdout, g.stderr = &out, io.Discard
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runLog(ctx, g, logFlags{follow: true, lines: -1, agent: "claude-code"}) }()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "cmd-29") }, 10*time.Second, 10*time.Millisecond)
	path, err := shim.DefaultAuditPath(g.getenv)
	require.NoError(t, err)
	audit := shim.AuditLog{Path: path}
	require.NoError(t, audit.Append(shim.Event{Time: time.Now(), Event: shim.EventDenied, Agent: "codex", Command: "cmd-98"}))
	require.NoError(t, audit.Append(shim.Event{Time: time.Now(), Event: shim.EventDenied, Agent: "claude-code", Command: "cmd-99"}))
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "cmd-99") }, 10*time.Second, 10*time.Millisecond)
	cancel()
	<-done
	got := regexp.MustCompile(`cmd-\d\d`).FindAllString(out.String(), -1)
	assert.Equal(t, []string{"cmd-16", "cmd-17", "cmd-19", "cmd-20", "cmd-22", "cmd-23", "cmd-25", "cmd-26", "cmd-28", "cmd-29", "cmd-99"}, got)
}

// TestWriteEventWho (issue 15): the log names the person who decided, with
// the surface they used, and whether they allowed once or always; a
// decision nobody made names the policy or the fallback as before.
func TestWriteEventWho(t *testing.T) {
	for _, tt := range []struct {
		ev   shim.Event
		want string
	}{
		{shim.Event{Event: shim.EventStarted, Risk: "needs-review", DecidedBy: shim.ByHub, Scope: "once",
			Approver: &prompt.Approver{Uid: 1000, User: "ada", Kind: "web", Host: "laptop"}}, "needs-review, allowed once by ada (web)"},
		{shim.Event{Event: shim.EventStarted, Risk: "needs-review", DecidedBy: shim.ByTTY, Scope: "always", Allowlisted: []string{"make test **"},
			Approver: &prompt.Approver{Uid: 1000, User: "ada", Kind: "tty"}}, "allowed always by ada (tty), now allowlisted: make test **"},
		{shim.Event{Event: shim.EventDenied, Risk: "dangerous", DecidedBy: shim.ByHub,
			Approver: &prompt.Approver{Uid: 1001, Kind: "cli"}}, "dangerous, by uid 1001 (cli)"},
		{shim.Event{Event: shim.EventStarted, Risk: "safe", DecidedBy: shim.ByPolicy}, "safe, allowed by policy"},
	} {
		var b bytes.Buffer
		tt.ev.Time, tt.ev.Agent, tt.ev.Command = time.Unix(0, 0), "claude-code", "make test"
		require.NoError(t, writeEvent(&b, tt.ev, logWidth))
		assert.Contains(t, b.String(), tt.want)
	}
}

// The log says what a confined command left running, and what was paused
// while an unconfined one ran (shim/leftovers.go), each on a line of its
// own, escaped as any text a command chose.
func TestWriteEventLeftovers(t *testing.T) {
	var b bytes.Buffer
	status := 0
	ev := shim.Event{Time: time.Unix(0, 0), Event: shim.EventFinished, Agent: "codex", Command: "python3 serve.py",
		ExitStatus: &status, LeftRunning: []string{"4242 python3", "4250 evil\x1b[2J"}}
	require.NoError(t, writeEvent(&b, ev, logWidth))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 2, b.String())
	assert.Contains(t, lines[1], "left running, confined: 4242 python3, 4250 evil")
	assert.NotContains(t, b.String(), "\x1b")

	b.Reset()
	ev = shim.Event{Time: time.Unix(0, 0), Event: shim.EventFinished, Agent: "codex", Command: "git push", ExitStatus: &status,
		Paused: []string{"4242 python3"}}
	require.NoError(t, writeEvent(&b, ev, logWidth))
	assert.Contains(t, b.String(), "\n"+strings.Repeat(" ", 22)+"paused while it ran: 4242 python3\n")
}
