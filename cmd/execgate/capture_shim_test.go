package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The output cap is for what an agent reads, and for nothing else: these
// tests copy 300,000 random bytes through the shim and check where they
// arrive whole and where they are capped.

const captureSize = 300000

// captureEnv is a shim world holding rand.bin (captureSize random bytes)
// and a config with the default cap, no agent named in the environment.
func captureEnv(t *testing.T) (*shimEnv, []byte) {
	t.Helper()
	realBash(t)
	e := newShimEnv(t, fullConfig)
	e.env = slices.DeleteFunc(e.env, func(kv string) bool { return strings.HasPrefix(kv, "EXECGATE_AGENT=") })
	data := make([]byte, captureSize)
	rand.Read(data)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "rand.bin"), data, 0o644))
	return e, data
}

// copyCommand is what the shim runs: the copy, then an exit status to
// check that the shim passes it on.
const copyCommand = "cat rand.bin; exit 3"

// TestShimFileGetsEveryByte: stdout a regular file, with an agent named
// (an agent's own `sh -c … > copy.bin`): every byte, bash's status.
func TestShimFileGetsEveryByte(t *testing.T) {
	e, data := captureEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, agent := range []string{"EXECGATE_AGENT=test-agent", "CLAUDECODE=1"} {
		t.Run(agent, func(t *testing.T) {
			out, err := os.Create(filepath.Join(t.TempDir(), "copy.bin"))
			require.NoError(t, err)
			defer out.Close()
			var stderr bytes.Buffer
			cmd := e.command(ctx, e.shim("sh"), "sh", "-c", copyCommand)
			cmd.Env = append(slices.Clone(e.env), agent)
			cmd.Stdout, cmd.Stderr = out, &stderr
			err = cmd.Run()
			require.Equal(t, 3, cmd.ProcessState.ExitCode(), "%v: %s", err, stderr.String())
			got, err := os.ReadFile(out.Name())
			require.NoError(t, err)
			assert.True(t, bytes.Equal(data, got), "copy differs: %d bytes, want %d", len(got), len(data))
			assert.Empty(t, stderr.String())
		})
	}
	// A device is not an agent either: /dev/null gets the output, the
	// status is bash's and nothing is spilled.
	cmd := e.command(ctx, e.shim("sh"), "sh", "-c", copyCommand)
	cmd.Env = append(slices.Clone(e.env), "CLAUDECODE=1")
	cmd.Stdout = nil // exec.Cmd opens /dev/null
	_ = cmd.Run()
	assert.Equal(t, 3, cmd.ProcessState.ExitCode())
	spills, _ := filepath.Glob(filepath.Join(e.state, "execgate", "output", "*"))
	assert.Empty(t, spills)
}

// TestShimPipeWithoutAgent: stdout a pipe, but no agent recognised (make,
// npm, git, a CI script), or an agent's variables inherited by a program in
// between: every byte.
func TestShimPipeWithoutAgent(t *testing.T) {
	e, data := captureEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, extra := range [][]string{
		nil,                             // make, npm, git or CI with no agent
		{"CI=true"},                     // the same
		{"CLAUDECODE=1", "MAKELEVEL=1"}, // make run by an agent
		{"GEMINI_CLI=1", "npm_lifecycle_event=build"},   // npm run by an agent
		{"CODEX_SANDBOX=seatbelt", "EXECGATE_CAPPED=1"}, // inside a capped command
	} {
		t.Run(strings.Join(extra, " "), func(t *testing.T) {
			cmd := e.command(ctx, e.shim("sh"), "sh", "-c", copyCommand)
			cmd.Env = append(slices.Clone(e.env), extra...)
			o := runOutcome(t, cmd, "")
			assert.Equal(t, 3, o.status, o.stderr)
			assert.True(t, o.stdout == string(data), "output differs: %d bytes, want %d", len(o.stdout), len(data))
			assert.Empty(t, o.stderr)
		})
	}
}

// TestShimAgentPipeCapped: an agent recognised from its environment and
// stdout a pipe (Codex, a Rust program) or a socket (Node, which runs Claude
// Code and Gemini CLI, gives its children socketpairs): head, marker, tail,
// bash's status, and the spill file holds every byte.
func TestShimAgentPipeCapped(t *testing.T) {
	e, data := captureEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	check := func(t *testing.T, want, status int, stdout, stderr string) {
		t.Helper()
		assert.Equal(t, want, status, stderr)
		assert.Less(t, len(stdout), 200000+300)
		assert.True(t, strings.HasPrefix(stdout, string(data[:1000])), "head kept")
		assert.True(t, strings.HasSuffix(stdout, string(data[len(data)-1000:])), "tail kept")
		i := strings.Index(stdout, "[execgate: ")
		require.GreaterOrEqual(t, i, 0, "marker")
		marker := stdout[i:]
		marker = marker[:strings.IndexByte(marker, '\n')]
		require.Contains(t, marker, "bytes omitted; full output: ")
		spill := strings.TrimSuffix(marker[strings.Index(marker, "full output: ")+len("full output: "):], "] …")
		assert.True(t, strings.HasPrefix(spill, e.state), spill)
		full, err := os.ReadFile(spill)
		require.NoError(t, err, marker)
		assert.True(t, bytes.Equal(data, full), "spill differs: %d bytes", len(full))
	}
	t.Run("pipe", func(t *testing.T) {
		cmd := e.command(ctx, e.shim("sh"), "sh", "-c", copyCommand)
		cmd.Env = append(slices.Clone(e.env), "CODEX_SANDBOX=seatbelt")
		o := runOutcome(t, cmd, "")
		check(t, 3, o.status, o.stdout, o.stderr)
	})
	t.Run("envelope", func(t *testing.T) {
		// Claude Code's own envelope says who the caller is, with nothing
		// in the environment (the exit status is the envelope's: it ends
		// with pwd).
		home := envValue(e.env, "HOME")
		snap := filepath.Join(home, ".claude", "shell-snapshots", "snapshot-bash-1763800000000-x1y2z3.sh")
		require.NoError(t, os.MkdirAll(filepath.Dir(snap), 0o700))
		require.NoError(t, os.WriteFile(snap, []byte("export SNAPSHOT_LOADED=1\n"), 0o600))
		cwdFile := filepath.Join(os.TempDir(), "claude-"+filepath.Base(t.TempDir())+"-cwd")
		t.Cleanup(func() { os.Remove(cwdFile) })
		envelope := "source " + snap + " 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval 'cat rand.bin' < /dev/null && pwd -P >| " + cwdFile
		o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", envelope), "")
		check(t, 0, o.status, o.stdout, o.stderr)
	})
	t.Run("socket", func(t *testing.T) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
		defer ours.Close()
		var stderr bytes.Buffer
		cmd := e.command(ctx, e.shim("sh"), "sh", "-c", copyCommand)
		cmd.Env = append(slices.Clone(e.env), "CLAUDECODE=1")
		cmd.Stdout, cmd.Stderr = theirs, &stderr
		require.NoError(t, cmd.Start())
		theirs.Close()
		out, err := io.ReadAll(ours)
		require.NoError(t, err)
		_ = cmd.Wait()
		check(t, 3, cmd.ProcessState.ExitCode(), string(out), stderr.String())
	})
}

// TestShimNestedNotCapped: an agent's command pipes a shim's output into
// another program (`sh -c 'cat rand.bin' | cksum`, the shim installed as
// sh): the inner shim's pipe leads to cksum, not to the agent, so it must
// not be cut; the outer shim's output is what the agent reads.
func TestShimNestedNotCapped(t *testing.T) {
	e, _ := captureEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var err error
	sum := exec.CommandContext(ctx, "cksum")
	sum.Dir = e.work
	sum.Stdin, err = os.Open(filepath.Join(e.work, "rand.bin"))
	require.NoError(t, err)
	want, err := sum.Output()
	require.NoError(t, err)
	cmd := e.command(ctx, e.shim("sh"), "sh", "-c", e.shim("sh")+" -c 'cat rand.bin' | cksum")
	cmd.Env = append(slices.Clone(e.env), "CLAUDECODE=1")
	o := runOutcome(t, cmd, "")
	require.Equal(t, 0, o.status, o.stderr)
	assert.Equal(t, string(want), o.stdout, "cksum of what the inner shim passed on")
}
