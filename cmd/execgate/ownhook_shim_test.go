package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/hookproto"
)

// TestShimRunsOwnHook: Gemini CLI runs its hook command with the bash on
// its PATH. With the shims first there, the shim must run execgate's own
// hook (which then judges the tool call) instead of refusing it — even
// under security=deny, since an agent whose hook fails runs the tool. Only
// the exact command naming this binary counts.
func TestShimRunsOwnHook(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, `{"version":1,"defaults":{"security":"deny"}}`)
	exe, err := filepath.EvalSymlinks(filepath.Join(e.dir, "execgate"))
	require.NoError(t, err)
	q, err := syntax.Quote(exe, syntax.LangBash)
	require.NoError(t, err)
	p, ok := hookproto.ByName("gemini")
	require.True(t, ok)
	input := string(p.Input("rm -rf ~/precious", e.work))

	run := func(src string) outcome {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := e.command(ctx, e.shim("bash"), "bash", "-c", src)
		cmd.Env = append(cmd.Env, "GEMINI_CLI=1")
		return runOutcome(t, cmd, input)
	}
	// A script named hook beside the command: /proc/self/exe is bash when
	// bash runs it, and would run the script unjudged.
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "hook"), []byte("touch pwned\n"), 0o755))
	o := run(q + " hook gemini")
	assert.Equal(t, 0, o.status, o.stderr)
	assert.True(t, strings.HasPrefix(o.stdout, `{"decision":"deny"`), "the hook answered: %q", o.stdout)

	for _, src := range []string{
		q + " hook gemini; touch x",       // more than the hook
		q + " hook gemini > out",          // a redirection
		"X=1 " + q + " hook gemini",       // an assignment
		q + " hook gemini extra",          // another argument
		q + " allow '**'",                 // another subcommand
		"/bin/echo hook gemini",           // another program
		`"$(echo ` + q + `)" hook gemini`, // not literal
	} {
		o := run(src)
		denyLine(t, o, "execgate: denied: ")
	}
	assert.NoFileExists(t, filepath.Join(e.work, "pwned"))
}

// TestShimAgentHubRefusedFailsClosed: with the agent's own variables set
// (only the hub is asked), a hub socket that lets nobody in still fails the
// ask: askFallback=full must not run the command.
func TestShimAgentHubRefusedFailsClosed(t *testing.T) {
	realBash(t)
	dir, err := os.MkdirTemp("", "egh")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "hub.sock")
	ln, err := net.Listen("unix", socket)
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close() // refused without a word
		}
	}()
	e := newShimEnv(t, `{"version":1,"socket":{"path":"`+socket+`"},"defaults":{"askFallback":"full"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := e.command(ctx, e.shim("bash"), "bash", "-c", "mkdir ~/d9") // more than any sandbox grants
	cmd.Env = append(cmd.Env, "CLAUDECODE=1")
	o := runOutcome(t, cmd, "")
	denyLine(t, o, "execgate: denied: ")
	assert.Contains(t, o.stderr, "asking failed")
	assert.NoDirExists(t, filepath.Join(e.home(), "d9"))
}
