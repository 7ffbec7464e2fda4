package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hookproto"
)

// corruptConfigs are files that exist but cannot be used, each with the
// problem the refusal must name. Each would, read as the defaults, let
// `ls` run: what they hold is a denylist of it.
var corruptConfigs = []struct{ name, content, problem string }{
	{"missing comma", "{\"version\": 1,\n  \"agents\": {\"*\": {\"denylist\": [{\"pattern\": \"ls **\"}]}}\n  \"defaults\": {}}\n",
		"line 3, column 3: invalid JSON: invalid character '\"' after object key:value pair"},
	{"truncated", "{\"version\": 1,\n  \"agents\": {\"*\": {\"denylist\": [{\"pattern\": \"ls **\"}",
		"line 2, column 53: invalid JSON: unexpected end of input"},
	{"empty", "", "empty file (want a JSON object)"},
	{"unknown version", `{"version": 2, "agents": {"*": {"denylist": [{"pattern": "ls **"}]}}}`, "unsupported version number 2 (want 1)"},
	{"duplicate key", "{\"agents\": {\"*\": {\"denylist\": [{\"pattern\": \"ls **\"}]}},\n \"agents\": {}}",
		`line 2, column 2: ambiguous JSON: duplicate key "agents" at the top level`},
}

// refusalLine is the one line a command gets under an unusable config.
func refusalLine(problem string) string {
	return "execgate: config ~/config/exec-approvals.json: " + problem + " — fix it or run 'execgate config check'\n"
}

// TestShimUnusableConfigRefuses: a config that exists but cannot be used
// refuses every command, a safe one included, with one line naming the file
// and the problem, status 126, and nothing run. Before, the shim fell back to
// the built-in defaults and ran it.
func TestShimUnusableConfigRefuses(t *testing.T) {
	realBash(t)
	type tc struct{ name, content, problem string }
	cases := []tc{}
	for _, c := range corruptConfigs {
		cases = append(cases, tc(c))
	}
	cases = append(cases, tc{"directory", "<dir>", "is a directory, not a file"}, tc{"link to nothing", "<dangling>", "symbolic link to a missing file"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newShimEnv(t, "")
			require.NoError(t, os.MkdirAll(filepath.Dir(e.config), 0o700))
			switch c.content {
			case "<dir>":
				require.NoError(t, os.Mkdir(e.config, 0o700))
			case "<dangling>":
				require.NoError(t, os.Symlink(filepath.Join(e.work, "gone.json"), e.config))
			default:
				require.NoError(t, os.WriteFile(e.config, []byte(c.content), 0o600))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "ls && touch ran"), "")
			assert.Equal(t, 126, o.status)
			assert.Empty(t, o.stdout)
			assert.Equal(t, refusalLine(c.problem), o.stderr)
			assert.NoFileExists(t, filepath.Join(e.work, "ran"))

			// A script on stdin is refused the same way.
			o = runOutcome(t, e.command(ctx, e.shim("sh"), "sh"), "touch ran\n")
			assert.Equal(t, 126, o.status)
			assert.Equal(t, refusalLine(c.problem), o.stderr)
			assert.NoFileExists(t, filepath.Join(e.work, "ran"))

			evs := e.readAudit()
			require.NotEmpty(t, evs)
			assert.Equal(t, "deny", evs[len(evs)-1].Decision)
			assert.Equal(t, strings.TrimSuffix(refusalLine(c.problem), "\n"), evs[len(evs)-1].Message)
		})
	}
}

// TestShimMissingConfigDefaults: no file at all keeps the built-in defaults,
// which run a read-only command.
func TestShimMissingConfigDefaults(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, "")
	require.NoFileExists(t, e.config)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "echo hi"), "")
	assert.Equal(t, 0, o.status, "stderr %q", o.stderr)
	assert.Equal(t, "hi\n", o.stdout)
	assert.Empty(t, o.stderr)
}

// TestHookUnusableConfigDenies: each agent's hook refuses, in its own
// protocol, a command the defaults would allow, giving the refusal line as
// the reason. Before, Claude Code's hook answered "allow".
func TestHookUnusableConfigDenies(t *testing.T) {
	c := corruptConfigs[0]
	e := newHookEnv(t, c.content)
	want := strings.TrimSuffix(refusalLine(c.problem), "\n")
	for _, a := range hookproto.All() {
		t.Run(a.Name, func(t *testing.T) {
			o := e.hook(t, withCommand(t, a.Name, e.work, "ls"), "hook", a.Name)
			assert.Equal(t, "deny", answerOf(t, a.Name, o))
			v := a.Parse(hookproto.Answer{Stdout: o.stdout, Stderr: o.stderr, Exit: o.status})
			assert.Equal(t, hookproto.Verdict{Decision: hookproto.Deny, Reason: want}, v)
		})
	}
	// Under a missing file the same command is allowed (Claude) as before.
	e = newHookEnv(t, "")
	o := e.hook(t, withCommand(t, "claude", e.work, "ls"), "hook", "claude")
	assert.Equal(t, "allow", answerOf(t, "claude", o))
}

// TestCLIWritersLeaveCorruptConfig: every writer refuses a file it cannot
// parse, exits non-zero, says where and why, and leaves it byte for byte.
func TestCLIWritersLeaveCorruptConfig(t *testing.T) {
	cfgEnv(t)
	for _, c := range corruptConfigs {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "exec-approvals.json")
			writeCfg(t, path, c.content)
			for _, args := range [][]string{
				{"deny", "git push --force **"},
				{"allow", "ls **"},
				{"policy", "set", "security=full"},
				{"allowlist", "--remove", "ls **"},
			} {
				code, out, errs := cfgRun(t, path, args...)
				assert.NotEqual(t, 0, code, "%v", args)
				assert.Empty(t, out, "%v", args)
				assert.Contains(t, errs, path, "%v names the file", args)
				assert.Contains(t, errs, c.problem, "%v says what is wrong", args)
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, c.content, string(got), "%v changes nothing", args)
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, en := range entries {
				assert.Contains(t, []string{"exec-approvals.json", "exec-approvals.json.lock"}, en.Name(), "no copy, no temporary file")
			}
		})
	}
}

// TestCheckUnusableConfig: check judges deny, not the defaults' verdict.
func TestCheckUnusableConfig(t *testing.T) {
	checkEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	path := filepath.Join(home, "exec-approvals.json")
	c := corruptConfigs[1]
	writeCfg(t, path, c.content)
	code, out, errs := cfgRun(t, path, "check", "--json", "--exit-code", "--", "ls")
	assert.Equal(t, exitDeny, code)
	assert.Equal(t, "execgate: config ~/exec-approvals.json: "+c.problem+" — fix it or run 'execgate config check'\n", errs)
	var res resultJSON
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "deny", res.Decision)
	assert.Contains(t, res.Reasons[0], c.problem)
}

// TestHubRefusesUnusableConfig: the hub does not start under a config it
// cannot use, and says why in the refusal line.
func TestHubRefusesUnusableConfig(t *testing.T) {
	cfgEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	path := filepath.Join(home, "exec-approvals.json")
	c := corruptConfigs[0]
	writeCfg(t, path, c.content)
	code, _, errs := cfgRun(t, path, "hub")
	assert.Equal(t, exitError, code)
	assert.Equal(t, "execgate: config ~/exec-approvals.json: "+c.problem+" — fix it or run 'execgate config check'\n", errs)
	assert.NoFileExists(t, filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "execgate", "hub.sock"))
}
