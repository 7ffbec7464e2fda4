package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
)

// cfgEnv pins the environment the config commands read, so that the
// machine's own settings (or the agent running the tests) cannot leak in.
func cfgEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"EXECGATE_CONFIG", "EXECGATE_AGENT", "CLAUDECODE", "GEMINI_CLI"} {
		t.Setenv(k, "")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

// cfgRun runs execgate with args against the config file path.
func cfgRun(t *testing.T, path string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"execgate", "--config", path}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func cfgPath(t *testing.T) string { return filepath.Join(t.TempDir(), "exec-approvals.json") }

func loadCfg(t *testing.T, path string) *config.Config {
	t.Helper()
	cfg, _, warnings, err := config.Load(path)
	require.NoError(t, err)
	require.Empty(t, warnings)
	return cfg
}

func TestCLIAllowDenyAndList(t *testing.T) {
	cfgEnv(t)
	path := cfgPath(t)

	code, out, errs := cfgRun(t, path, "allow", "git **")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "allowed \"git **\" for agent *\n", out)
	assert.Empty(t, errs)
	code, out, _ = cfgRun(t, path, "allow", "git **")
	require.Equal(t, 0, code)
	assert.Equal(t, "already allowed: \"git **\" for agent *\n", out)
	code, out, _ = cfgRun(t, path, "allow", "--agent", "claude-code", "npm run **")
	require.Equal(t, 0, code)
	assert.Equal(t, "allowed \"npm run **\" for agent claude-code\n", out)
	code, out, _ = cfgRun(t, path, "deny", "terraform destroy **")
	require.Equal(t, 0, code)
	assert.Equal(t, "denied \"terraform destroy **\" for agent *\n", out)
	code, out, _ = cfgRun(t, path, "deny", "terraform destroy **")
	require.Equal(t, 0, code)
	assert.Equal(t, "already denied: \"terraform destroy **\" for agent *\n", out)

	cfg := loadCfg(t, path)
	require.Len(t, cfg.Agents["*"].Allowlist, 1)
	e := cfg.Agents["*"].Allowlist[0]
	assert.Equal(t, "cli", e.Source)
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{12}$`), e.ID)
	assert.Equal(t, "terraform destroy **", cfg.Agents["*"].Denylist[0].Pattern)
	assert.Equal(t, "npm run **", cfg.Agents["claude-code"].Allowlist[0].Pattern)

	code, out, errs = cfgRun(t, path, "allowlist")
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	assert.Regexp(t, `^AGENT +LIST +PATTERN +ID +SOURCE +LAST USED +LAST COMMAND$`, lines[0])
	assert.Regexp(t, `^\* +allow +git \*\* +`+e.ID+` +cli +never +-$`, lines[1])
	assert.Regexp(t, `^\* +deny +terraform destroy \*\* `, lines[2])
	assert.Regexp(t, `^claude-code +allow +npm run \*\* `, lines[3])

	code, out, _ = cfgRun(t, path, "allowlist", "--json", "--agent", "claude-code")
	require.Equal(t, 0, code)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, "claude-code", rows[0]["agent"])
	assert.Equal(t, "allow", rows[0]["list"])
	assert.Equal(t, "npm run **", rows[0]["pattern"])
	assert.Equal(t, "cli", rows[0]["source"])

	code, out, _ = cfgRun(t, path, "allowlist", "--agent", "nobody")
	require.Equal(t, 0, code)
	assert.Equal(t, "no entries for agent nobody in "+path+"\n", out)
	code, out, _ = cfgRun(t, path, "allowlist", "--json", "--agent", "nobody")
	require.Equal(t, 0, code)
	assert.Equal(t, "[]\n", out)
}

func TestCLIPatternMustBeOneArgument(t *testing.T) {
	cfgEnv(t)
	path := cfgPath(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"allow", "git", "push", "**"}, `allow takes one PATTERN but got 3 words; quote it: execgate allow 'git push **'`},
		{[]string{"deny", "rm", "-rf"}, `unknown shorthand flag: 'r' in -rf (quote the PATTERN as one argument: execgate deny 'rm -rf **')`},
		{[]string{"deny", "rm", "/tmp"}, `quote it: execgate deny 'rm /tmp'`},
		{[]string{"allow"}, "allow needs a PATTERN"},
		{[]string{"allow", "   "}, `invalid pattern "   ": empty pattern`},
		{[]string{"allowlist", "extra"}, "allowlist takes no arguments"},
		{[]string{"allowlist", "--remove", ""}, "--remove needs a PATTERN or an ID"},
		{[]string{"policy", "frob"}, `unknown policy subcommand "frob" (want get, set or sandbox)`},
		{[]string{"policy", "set"}, "policy set needs KEY=VALUE arguments"},
	}
	for _, tt := range tests {
		code, out, errs := cfgRun(t, path, tt.args...)
		assert.Equal(t, exitUsage, code, tt.args)
		assert.Empty(t, out)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
		assert.Contains(t, errs, tt.want)
	}
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing written")
}

func TestCLIRemove(t *testing.T) {
	cfgEnv(t)
	path := cfgPath(t)
	for _, args := range [][]string{
		{"allow", "git **"}, {"deny", "git **"}, {"allow", "--agent", "codex", "git **"}, {"allow", "make **"},
	} {
		code, _, errs := cfgRun(t, path, args...)
		require.Equal(t, 0, code, errs)
	}
	cfg := loadCfg(t, path)
	makeID := cfg.Agents["*"].Allowlist[1].ID

	// By pattern, one agent only: both lists.
	code, out, errs := cfgRun(t, path, "allowlist", "--agent", "*", "--remove", "git **")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, 2, strings.Count(out, "\n"), out)
	assert.Contains(t, out, `removed "git **" (id `)
	assert.Contains(t, out, "from the allowlist of agent *")
	assert.Contains(t, out, "from the denylist of agent *")
	cfg = loadCfg(t, path)
	assert.Empty(t, cfg.Agents["*"].Denylist)
	assert.Len(t, cfg.Agents["codex"].Allowlist, 1, "other agents untouched")

	// By ID, any agent.
	code, out, _ = cfgRun(t, path, "allowlist", "--remove", makeID)
	require.Equal(t, 0, code)
	assert.Equal(t, "removed \"make **\" (id "+makeID+") from the allowlist of agent *\n", out)

	before, err := os.ReadFile(path)
	require.NoError(t, err)
	code, out, errs = cfgRun(t, path, "allowlist", "--remove", "make **")
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	assert.Equal(t, "execgate: no entry with pattern or ID \"make **\" for any agent\n", errs)
	code, _, errs = cfgRun(t, path, "allowlist", "--agent", "*", "--remove", "git **")
	assert.Equal(t, exitError, code)
	assert.Equal(t, "execgate: no entry with pattern or ID \"git **\" for agent *\n", errs)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a failed removal writes nothing")
}

func writeCfg(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

func TestCLIPolicyGet(t *testing.T) {
	cfgEnv(t)
	path := cfgPath(t)
	writeCfg(t, path, `{"version": 1,
		"defaults": {"security": "deny"},
		"agents": {"*": {"ask": "always"}, "claude-code": {"timeoutMs": 5000, "ask": "off"}}}`)

	code, out, errs := cfgRun(t, path, "policy", "get", "--agent", "claude-code")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^policy for agent claude-code \(`+regexp.QuoteMeta(path)+`\)
security +deny +\(defaults\)
ask +off +\(agent\)
askFallback +deny +\(built-in\)
timeoutMs +5000 +\(agent\)
autoAllowSafe +true +\(built-in\)
autoAllowWorkspaceRunners +false +\(built-in\)
$`, out)

	// Detected from the environment the agent sets; "policy" alone is get.
	t.Setenv("CLAUDECODE", "1")
	code, out2, _ := cfgRun(t, path, "policy")
	require.Equal(t, 0, code)
	assert.Equal(t, out, out2)

	// EXECGATE_AGENT beats detection; an agent without settings gets "*".
	t.Setenv("EXECGATE_AGENT", "codex")
	code, out, _ = cfgRun(t, path, "policy", "get", "--json")
	require.Equal(t, 0, code)
	var view struct {
		Agent   string            `json:"agent"`
		Config  string            `json:"config"`
		Policy  config.Policy     `json:"policy"`
		Sources map[string]string `json:"sources"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &view))
	assert.Equal(t, "codex", view.Agent)
	assert.Equal(t, path, view.Config)
	assert.Equal(t, config.Policy{Security: "deny", Ask: "always", AskFallback: "deny", TimeoutMs: 60000, AutoAllowSafe: true}, view.Policy)
	assert.Equal(t, map[string]string{"security": "defaults", "ask": "*", "askFallback": "built-in",
		"timeoutMs": "built-in", "autoAllowSafe": "built-in", "autoAllowWorkspaceRunners": "built-in"}, view.Sources)
}

func TestCLIPolicyWarnings(t *testing.T) {
	cfgEnv(t)
	path := cfgPath(t)
	writeCfg(t, path, `{"defaults": {"security": "ful"}}`)
	code, out, errs := cfgRun(t, path, "policy", "get", "--agent", "x")
	require.Equal(t, 0, code, "warnings alone do not fail")
	assert.Equal(t, "execgate: warning: "+path+`: defaults.security: unknown value "ful" (want deny, allowlist or full); using "deny"`+"\n", errs)
	assert.Regexp(t, `security +deny +\(defaults\)`, out)
}

func TestCLIPolicySet(t *testing.T) {
	cfgEnv(t)
	path := cfgPath(t)
	code, out, errs := cfgRun(t, path, "policy", "set", "security=deny", "ask=always", "timeoutMs=+030000")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "defaults: security = deny (was unset)\ndefaults: ask = always (was unset)\ndefaults: timeoutMs = 30000 (was unset)\n", out)
	code, out, _ = cfgRun(t, path, "policy", "set", "--agent", "codex", "autoAllowSafe=false", "askFallback=allowlist")
	require.Equal(t, 0, code)
	assert.Equal(t, "agent codex: autoAllowSafe = false (was unset)\nagent codex: askFallback = allowlist (was unset)\n", out)
	code, out, _ = cfgRun(t, path, "policy", "set", "ask=off")
	require.Equal(t, 0, code)
	assert.Equal(t, "defaults: ask = off (was always)\n", out)

	cfg := loadCfg(t, path)
	assert.Equal(t, config.Policy{Security: "deny", Ask: "off", AskFallback: "allowlist", TimeoutMs: 30000, AutoAllowSafe: false},
		cfg.Resolve("codex").Policy)

	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"colour=blue"}, `unknown policy key "colour"`},
		{[]string{"security=ful"}, `security: unknown value "ful" (want deny, allowlist or full)`},
		{[]string{"timeoutMs=soon"}, `timeoutMs: want a whole number of milliseconds from 1 to 2147483647, got "soon"`},
		{[]string{"autoAllowSafe=yes"}, `autoAllowSafe: want true or false, got "yes"`},
		{[]string{"ask=always", "security=ful"}, `unknown value "ful"`},
		{[]string{"ask"}, `"ask" is not KEY=VALUE`},
		{[]string{"ask=off", "ask=always"}, "ask given twice"},
	} {
		code, out, errs := cfgRun(t, path, append([]string{"policy", "set"}, tt.args...)...)
		assert.Equal(t, exitUsage, code, tt.args)
		assert.Empty(t, out)
		assert.Contains(t, errs, tt.want)
		assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "all or nothing")

	// An empty value unsets the field.
	code, out, _ = cfgRun(t, path, "policy", "set", "ask=")
	require.Equal(t, 0, code)
	assert.Equal(t, "defaults: ask unset (was off)\n", out)
	assert.Empty(t, loadCfg(t, path).Defaults.Ask)
}

func TestCLICorruptConfig(t *testing.T) {
	cfgEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "exec-approvals.json")
	corrupt := "{\n  \"agents\": {\n    \"*\": {\"denylist\": [}\n"
	writeCfg(t, path, corrupt)
	problem := "line 3, column 24: invalid JSON: invalid character '}' looking for beginning of value"
	wantErr := "execgate: config " + path + ": " + problem + " — fix it or run 'execgate config check'\n"

	code, out, errs := cfgRun(t, path, "policy", "get", "--agent", "x")
	assert.Equal(t, exitError, code)
	assert.Equal(t, wantErr, errs)
	assert.Regexp(t, `security +deny`, out, "what applies: everything refused")

	code, out, errs = cfgRun(t, path, "allowlist")
	assert.Equal(t, exitError, code)
	assert.Equal(t, wantErr, errs)
	assert.Equal(t, "no entries in "+path+"\n", out)

	code, _, errs = cfgRun(t, path, "allowlist", "--remove", "x")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errs, "not removing anything from a damaged file")

	// An edit refuses too: it never starts the file over.
	code, out, errs = cfgRun(t, path, "allow", "ls **")
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	assert.Equal(t, "execgate: config "+path+": "+problem+"; not changing it (nothing was written): fix it, or run 'execgate config edit'\n", errs)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, corrupt, string(got))
	copies, _ := filepath.Glob(path + ".*")
	for _, c := range copies {
		assert.Equal(t, path+".lock", c, "no copy kept aside")
	}
}

func TestCLIDefaultConfigPath(t *testing.T) {
	cfgEnv(t)
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	var out, errb bytes.Buffer
	code := run([]string{"execgate", "allow", "git **"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	path := filepath.Join(home, "execgate", "exec-approvals.json")
	for p, mode := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, mode, fi.Mode().Perm(), p)
	}

	other := filepath.Join(t.TempDir(), "other.json")
	t.Setenv("EXECGATE_CONFIG", other)
	code = run([]string{"execgate", "deny", "rm **"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	assert.Equal(t, "rm **", loadCfg(t, other).Agents["*"].Denylist[0].Pattern)
	assert.Empty(t, loadCfg(t, path).Agents["*"].Denylist)
}

func TestLastUsed(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.Local)
	ms := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	assert.Equal(t, "never", lastUsed(0, now))
	assert.Equal(t, "just now", lastUsed(ms(10*time.Second), now))
	assert.Equal(t, "5m ago", lastUsed(ms(5*time.Minute+10*time.Second), now))
	assert.Equal(t, "3h ago", lastUsed(ms(3*time.Hour), now))
	assert.Equal(t, "2d ago", lastUsed(ms(50*time.Hour), now))
	assert.Equal(t, "2026-02-24 12:00", lastUsed(ms(14*24*time.Hour), now))
	assert.Equal(t, "2026-03-10 13:00", lastUsed(ms(-time.Hour), now), "future times are shown as dates")
}
