package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/shim"
)

// TestLeanShimMatchesCLI: execgate-shell, the binary the shims link to, is
// the shim execgate is under a shell's name, with nothing skipped: the
// same output, exit status, environment, refusals and audit lines for each
// command, allowed, asked, refused, failing or killed by a signal.
func TestLeanShimMatchesCLI(t *testing.T) {
	realBash(t)
	commands := []string{
		"true", "false", "echo hi; exit 3", "echo err >&2; exit 4", "git --version >/dev/null; echo $?",
		"printf '%s\n' \"$0\" \"$#\"", "env | grep -c EXECGATE_ || true", "ls -d .",
		"rm -rf ~", "curl https://example.com/x | sh", "mkdir d && echo made", "kill -TERM $$",
		"cat /dev/null | wc -c", "echo $((6*7))", "for i in 1 2; do echo $i; done",
	}
	for _, config := range []string{"", fullConfig} {
		e := newShimEnv(t, config)
		// Under security=full `rm -rf ~` runs, and bash expands the tilde:
		// a home of its own, away from the configuration and the audit log.
		e.env = append(e.env, "HOME="+t.TempDir())
		for _, command := range commands {
			var outs [2]outcome
			var evs [2][]map[string]any
			for i, bin := range []string{e.shim("bash"), filepath.Join(e.dir, "cli-shims", "bash")} {
				before := len(e.readAuditRaw(t))
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				outs[i] = runOutcome(t, e.command(ctx, bin, "bash", "-c", command), "")
				cancel()
				evs[i] = e.readAuditRaw(t)[before:]
				os.RemoveAll(filepath.Join(e.work, "d"))
			}
			assert.Equal(t, outs[1], outs[0], "config %q, command %q: execgate-shell and execgate differ", config, command)
			require.Len(t, evs[0], len(evs[1]), "config %q, command %q: audit events", config, command)
			for i := range evs[0] {
				// The chain fields differ by place in the log (seq, and the
				// hashes with it); both runs' chains are checked whole below.
				for _, volatile := range []string{"time", "id", "pid", "durationMs", "approvalId", "spillPath", "seq", "prev", "hash"} {
					delete(evs[0][i], volatile)
					delete(evs[1][i], volatile)
				}
				assert.Equal(t, evs[1][i], evs[0][i], "config %q, command %q: audit event %d", config, command, i)
			}
		}
		r, err := (&shim.AuditLog{Path: filepath.Join(e.state, "execgate", "audit.jsonl")}).Verify()
		require.NoError(t, err)
		assert.True(t, r.Intact(), "both binaries chain the log: %v", r.Problems)
		assert.Equal(t, len(e.readAuditRaw(t)), r.Chained)
	}
}

// TestLeanShimNeedsShellName: execgate-shell under its own name is no
// shell; it says so in one line.
func TestLeanShimNeedsShellName(t *testing.T) {
	dir := shimDir(t)
	cmd := exec.Command(filepath.Join(dir, "execgate-shell"), "-c", "echo hi")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Equal(t, 1, strings.Count(string(out), "\n"))
	assert.Contains(t, string(out), "bash, sh or zsh")
}

// readAuditRaw returns the audit log's events as decoded JSON objects, so
// that a comparison sees every field as written.
func (e *shimEnv) readAuditRaw(t *testing.T) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.state, "execgate", "audit.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		out = append(out, ev)
	}
	return out
}

// TestShimInitIsLean: the shim pays package initialisation on every
// command, so execgate's own packages must build nothing there — tables
// are static data or switches, expressions compile on first use, values
// built once use a sync.Once the linker lays out. Compiling the redaction
// rules at init once cost 21,000 allocations and 4 ms a run; the maps,
// OnceValues and Sprintf left after that cost 111 allocations (17 KB).
// A package with nothing to initialise does not appear in the trace at
// all; one that does must not allocate.
func TestShimInitIsLean(t *testing.T) {
	e := newShimEnv(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := e.command(ctx, e.shim("bash"), "bash", "-c", "true")
	cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	traced := 0
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @T ms, D ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" {
			continue
		}
		traced++
		if !strings.HasPrefix(f[1], "github.com/execgate/") {
			continue
		}
		bytes, err1 := strconv.Atoi(f[7])
		allocs, err2 := strconv.Atoi(f[9])
		require.NoError(t, err1, line)
		require.NoError(t, err2, line)
		assert.Zero(t, allocs, "package init allocates: %s", line)
		assert.Zero(t, bytes, "package init allocates: %s", line)
	}
	assert.NotZero(t, traced, "no init trace in %q", out)
}

// TestShimPackagesHaveNoInit: the packages every shim run links have no
// initialisation code at all in execgate-shell — no map built, nothing
// formatted, no sync.OnceValue wired up, nothing written into their data
// (which would also cost the process a copied page).
func TestShimPackagesHaveNoInit(t *testing.T) {
	out, err := exec.Command("go", "tool", "nm", filepath.Join(shimDir(t), "execgate-shell")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	syms := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			syms[f[2]] = true
		}
	}
	require.True(t, syms["main.main"], "no symbols read from execgate-shell")
	for _, pkg := range []string{"policy", "policy/shparse", "policy/pathres", "shim", "interp", "prompt", "config", "internal/self", "internal/redact", "internal/gitconfig"} {
		name := "github.com/execgate/execgate/" + pkg + ".init"
		assert.False(t, syms[name], "%s: %s has initialisation code", pkg, name)
	}
}
