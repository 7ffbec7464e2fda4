package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/pattern"
)

// configGolden is what a test vector in testdata/config expects of
// ParseConfig: the error, the warnings, the typed (normalised) config and the
// effective policy of every agent it names, of "*" and of an agent it does
// not name.
type configGolden struct {
	Error     string               `json:"error,omitempty"`
	Warnings  []string             `json:"warnings"`
	Config    *Config              `json:"config,omitempty"`
	Effective map[string]Effective `json:"effective,omitempty"`
}

// Set EXECGATE_UPDATE_GOLDEN=1 to rewrite the .want.json files (then review
// the diff: the goldens are the specification).
const updateGoldenEnv = "EXECGATE_UPDATE_GOLDEN"

func TestParseConfigVectors(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "config", "*.json"))
	require.NoError(t, err)
	inputs = slices.DeleteFunc(inputs, func(p string) bool { return strings.HasSuffix(p, ".want.json") })
	require.GreaterOrEqual(t, len(inputs), 20, "test vectors missing")

	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			require.NoError(t, err)
			got := runVector(raw)

			wantPath := strings.TrimSuffix(in, ".json") + ".want.json"
			if os.Getenv(updateGoldenEnv) == "1" {
				b, err := json.MarshalIndent(got, "", "  ")
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(wantPath, append(b, '\n'), 0o644))
			}
			wantRaw, err := os.ReadFile(wantPath)
			require.NoError(t, err, "golden file missing (run with %s=1 and review it)", updateGoldenEnv)
			var want configGolden
			require.NoError(t, json.Unmarshal(wantRaw, &want))
			gotRaw, err := json.Marshal(got)
			require.NoError(t, err)
			wantNorm, err := json.Marshal(want)
			require.NoError(t, err)
			assert.JSONEq(t, string(wantNorm), string(gotRaw))

			// Every message is one line, whatever the input held.
			for _, w := range append(slices.Clone(got.Warnings), got.Error) {
				assert.NotContains(t, w, "\n")
			}
		})
	}
}

func runVector(raw []byte) configGolden {
	cfg, warnings, err := ParseConfig(raw)
	g := configGolden{Warnings: warnings}
	if g.Warnings == nil {
		g.Warnings = []string{}
	}
	if err != nil {
		g.Error = err.Error()
		return g
	}
	g.Config = cfg
	g.Effective = map[string]Effective{}
	for _, a := range append(slices.Sorted(maps.Keys(cfg.Agents)), WildcardAgent, "not-configured") {
		g.Effective[a] = cfg.Resolve(a)
	}
	return g
}

// The field table must agree with the enums in types.go, and its strictest
// values must be the strictest ones.
func TestPolicyFieldTable(t *testing.T) {
	for _, s := range policyFieldSpecs {
		for _, v := range s.values {
			switch s.key {
			case "security", "askFallback":
				assert.True(t, Security(v).Valid(), "%s: %s", s.key, v)
			case "ask":
				assert.True(t, Ask(v).Valid(), "%s: %s", s.key, v)
			}
		}
	}
	f := strictestFields()
	assert.Equal(t, SecurityDeny, f.Security)
	assert.Equal(t, AskAlways, f.Ask)
	assert.Equal(t, SecurityDeny, f.AskFallback)
	assert.Nil(t, f.TimeoutMs)
	require.NotNil(t, f.AutoAllowSafe)
	assert.False(t, *f.AutoAllowSafe)
}

func TestParseConfigSyntaxErrorPosition(t *testing.T) {
	raw := []byte("{\n  \"version\": 1,\n  \"defaults\": {\n    \"security\" \"deny\"\n  }\n}\n")
	_, _, err := ParseConfig(raw)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 4, column 16")
}

func TestConfigPath(t *testing.T) {
	env := func(kv map[string]string) func(string) string {
		return func(k string) string { return kv[k] }
	}
	tests := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{"flag wins", "/f.json", map[string]string{"EXECGATE_CONFIG": "/e.json", "XDG_CONFIG_HOME": "/x"}, "/f.json"},
		{"env next", "", map[string]string{"EXECGATE_CONFIG": "/e.json", "XDG_CONFIG_HOME": "/x"}, "/e.json"},
		{"xdg home", "", map[string]string{"XDG_CONFIG_HOME": "/x"}, "/x/execgate/exec-approvals.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ConfigPath(tt.flag, env(tt.env)))
		})
	}
	// Neither set, or a relative XDG_CONFIG_HOME (invalid per the spec):
	// the xdg library's default, which is absolute.
	for _, v := range []string{"", "relative/dir"} {
		p := ConfigPath("", env(map[string]string{"XDG_CONFIG_HOME": v}))
		assert.True(t, filepath.IsAbs(p), p)
		assert.Equal(t, filepath.Join("execgate", "exec-approvals.json"), filepath.Join(filepath.Base(filepath.Dir(p)), filepath.Base(p)))
		assert.NotContains(t, p, "relative/dir")
	}
}

func TestLoadMissing(t *testing.T) {
	cfg, hash, warnings, err := Load(filepath.Join(t.TempDir(), "none", "exec-approvals.json"))
	require.NoError(t, err)
	assert.Empty(t, hash)
	assert.Empty(t, warnings)
	assert.Equal(t, BuiltinPolicy(), cfg.Resolve("claude-code").Policy)
}

func TestLoadValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exec-approvals.json")
	raw := []byte(`{"version": 1, "agents": {"claude-code": {"ask": "always", "allowlist": [{"pattern": "git **"}]}}, "x": 1}`)
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	cfg, hash, warnings, err := Load(path)
	require.NoError(t, err)
	sum := sha256.Sum256(raw)
	assert.Equal(t, hex.EncodeToString(sum[:]), hash)
	assert.Equal(t, []string{"x: unknown field; ignored"}, warnings)
	eff := cfg.Resolve("claude-code")
	assert.Equal(t, AskAlways, eff.Policy.Ask)
	assert.Equal(t, []pattern.Entry{{Pattern: "git **"}}, eff.Allowlist)
}

func TestLoadCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "exec-approvals.json")
	raw := []byte("{\n  \"agents\": {\n    oops\n}\n")
	require.NoError(t, os.WriteFile(path, raw, 0o644))

	cfg, hash, _, err := Load(path)
	require.Error(t, err)
	msg := err.Error()
	assert.NotContains(t, msg, "\n")
	assert.True(t, strings.HasPrefix(msg, "config "+path+": line 3, column 5: invalid JSON: "), msg)
	u, ok := AsUnusable(err)
	require.True(t, ok)
	assert.Equal(t, path, u.Path)
	require.NotNil(t, cfg)
	assert.Equal(t, SecurityDeny, cfg.Resolve("x").Policy.Security, "never the defaults: a caller that ignores the error still denies")
	assert.Equal(t, SecurityDeny, cfg.Resolve("x").Policy.AskFallback)
	assert.NotEmpty(t, hash, "the hash of a corrupt file still lets Update check it is unchanged")

	// Load never writes: the file, its mode and the directory are as before.
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, raw, after)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}

func TestLoadUnusable(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, make([]byte, maxConfigSize+1), 0o600))
	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	version := filepath.Join(dir, "version.json")
	require.NoError(t, os.WriteFile(version, []byte(`{"version": 2}`), 0o600))
	dangling := filepath.Join(dir, "dangling.json")
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere.json"), dangling))
	tests := map[string]string{
		"directory":       dir,
		"too large":       big,
		"empty":           empty,
		"unknown version": version,
		"link to nothing": dangling,
	}
	for name, path := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, _, _, err := Load(path)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "\n")
			_, ok := AsUnusable(err)
			assert.True(t, ok)
			require.NotNil(t, cfg)
			assert.Equal(t, SecurityDeny, cfg.Resolve("x").Policy.Security)
		})
	}
}

// TestLoadMissing: only a file that does not exist means the defaults.
func TestLoadMissingIsDefaults(t *testing.T) {
	cfg, hash, warnings, err := Load(filepath.Join(t.TempDir(), "none", "exec-approvals.json"))
	require.NoError(t, err)
	assert.Empty(t, hash)
	assert.Empty(t, warnings)
	assert.Equal(t, BuiltinPolicy(), cfg.Resolve("x").Policy)
}

func TestUnusableRefusal(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".config", "execgate", "exec-approvals.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte("{\n  \"version\": 1,\n  \"agents\": {,\n}"), 0o600))
	_, _, _, err := Load(path)
	u, ok := AsUnusable(err)
	require.True(t, ok)
	assert.Equal(t, "execgate: config ~/.config/execgate/exec-approvals.json: line 3, column 14: invalid JSON: "+
		"invalid character ',' looking for beginning of object key string — fix it or run 'execgate config check'", u.Refusal(home))
	assert.Equal(t, "execgate: config "+path+": line 3, column 14: invalid JSON: "+
		"invalid character ',' looking for beginning of object key string — fix it or run 'execgate config check'", u.Refusal(""))
	u.Path = "/tmp/a\nb.json"
	assert.NotContains(t, u.Refusal(""), "\n")
}

// TestTimeoutWantNamesMax: the constant text saying what timeoutMs takes
// names the bound checkTimeout enforces, and that bound is accepted while
// the next number is not.
func TestTimeoutWantNamesMax(t *testing.T) {
	assert.True(t, strings.HasSuffix(timeoutWant, " to "+strconv.Itoa(maxTimeoutMs)), timeoutWant)
	_, ok := checkTimeout(json.Number(strconv.Itoa(maxTimeoutMs)))
	assert.True(t, ok)
	_, ok = checkTimeout(json.Number(strconv.Itoa(maxTimeoutMs + 1)))
	assert.False(t, ok)
}
