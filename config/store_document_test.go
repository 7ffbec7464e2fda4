package config

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/pattern"
)

func docFrom(t *testing.T, raw string) *Document {
	t.Helper()
	root, err := decodeObject([]byte(raw))
	require.NoError(t, err)
	return &Document{root: root}
}

func docConfig(t *testing.T, d *Document) *Config {
	t.Helper()
	require.NoError(t, d.err)
	out, err := encodeDocument(d.tree())
	require.NoError(t, err)
	cfg, warnings, err := ParseConfig(out)
	require.NoError(t, err)
	require.Empty(t, warnings)
	return cfg
}

func TestDocumentAddEntries(t *testing.T) {
	d := newDocument()
	assert.True(t, d.AddAllowlist("", pattern.Entry{Pattern: "git **", Source: "cli"}), `"" means "*" for lists`)
	assert.False(t, d.AddAllowlist("*", pattern.Entry{Pattern: "git **"}), "duplicate")
	assert.True(t, d.AddAllowlist("claude-code", pattern.Entry{Pattern: "git **"}), "other agent")
	assert.True(t, d.AddDenylist("*", pattern.Entry{Pattern: "git **", ID: "myid"}), "the denylist is separate")
	assert.False(t, d.AddDenylist("*", pattern.Entry{Pattern: "git **"}))
	assert.False(t, d.AddAllowlist("*", pattern.Entry{Pattern: "  "}), "invalid pattern")

	cfg := docConfig(t, d)
	star := cfg.Agents["*"]
	require.Len(t, star.Allowlist, 1)
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{12}$`), star.Allowlist[0].ID)
	assert.Equal(t, "cli", star.Allowlist[0].Source)
	assert.Equal(t, []pattern.Entry{{Pattern: "git **", ID: "myid"}}, star.Denylist)
	assert.NotEqual(t, star.Allowlist[0].ID, cfg.Agents["claude-code"].Allowlist[0].ID)
}

func TestDocumentRemoveEntry(t *testing.T) {
	d := docFrom(t, `{"agents": {
		"*": {"allowlist": [{"pattern": "a", "id": "i1"}, {"pattern": "b", "id": "i2"}, "junk"],
		      "denylist": [{"pattern": "a", "id": "i3"}]},
		"x": {"allowlist": [{"pattern": "a", "id": "i4"}]}}}`)
	assert.Equal(t, 2, d.RemoveEntry("*", "a"), "both lists")
	assert.Equal(t, 0, d.RemoveEntry("*", "a"))
	assert.Equal(t, 1, d.RemoveEntry("", "i2"), "by ID")
	assert.Equal(t, 0, d.RemoveEntry("nobody", "a"))
	assert.Equal(t, []any{"junk"}, jsonDig(d.root, "agents", "*", "allowlist"), "unrelated items kept")
	assert.Equal(t, "a", jsonDig(d.root, "agents", "x", "allowlist").([]any)[0].(map[string]any)["pattern"])
}

func TestDocumentSetPolicyField(t *testing.T) {
	d := newDocument()
	for _, kv := range [][3]string{
		{"", "security", "full"},
		{"", "ask", "off"},
		{"", "askFallback", "allowlist"},
		{"", "timeoutMs", "+0045"},
		{"", "autoAllowSafe", "false"},
		{"claude-code", "security", "deny"},
	} {
		require.NoError(t, d.SetPolicyField(kv[0], kv[1], kv[2]), kv)
	}
	cfg := docConfig(t, d)
	p := cfg.Resolve("other").Policy
	assert.Equal(t, Policy{Security: SecurityFull, Ask: AskOff, AskFallback: SecurityAllowlist, TimeoutMs: 45, AutoAllowSafe: false}, p)
	assert.Equal(t, SecurityDeny, cfg.Resolve("claude-code").Policy.Security)
	assert.Equal(t, json.Number("45"), jsonDig(d.root, "defaults", "timeoutMs"), "stored as a JSON number")

	before, err := encodeDocument(d.root)
	require.NoError(t, err)
	for _, kv := range [][3]string{
		{"", "security", "ful"},
		{"", "ask", "ALWAYS"},
		{"", "askFallback", "ask"},
		{"", "timeoutMs", "0"},
		{"", "timeoutMs", "-3"},
		{"", "timeoutMs", "1.5"},
		{"", "timeoutMs", "2147483648"},
		{"", "autoAllowSafe", "yes"},
		{"", "autoAllowSafe", "1"},
	} {
		err := d.SetPolicyField(kv[0], kv[1], kv[2])
		require.Error(t, err, kv)
		assert.Contains(t, err.Error(), kv[1]+": ", "the message names the key")
		assert.Contains(t, err.Error(), kv[2], "the message names the bad value")
	}
	err = d.SetPolicyField("x", "colour", "blue")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown policy key "colour"`)
	after, err := encodeDocument(d.root)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "invalid values change nothing")
	assert.Nil(t, jsonDig(d.root, "agents", "x"), "not even an empty agent")

	// An empty value unsets, falling through.
	require.NoError(t, d.SetPolicyField("", "security", ""))
	require.NoError(t, d.SetPolicyField("nobody", "ask", ""))
	assert.Equal(t, DefaultSecurity, docConfig(t, d).Resolve("other").Policy.Security)
	assert.Nil(t, jsonDig(d.root, "agents", "nobody"))
}

func TestDocumentWrongShapes(t *testing.T) {
	d := docFrom(t, `{"defaults": 1, "agents": {"a": "x", "b": {"allowlist": {}}}, "socket": []}`)
	assert.Error(t, d.SetPolicyField("", "ask", "off"))
	assert.Error(t, d.SetPolicyField("a", "ask", "off"))
	assert.False(t, d.AddAllowlist("b", pattern.Entry{Pattern: "ls"}))
	assert.Equal(t, 0, d.RemoveEntry("b", "ls"))
	assert.False(t, d.Touch("a", "ls", "ls", "", time.Now()))
	_, err := d.EnsureToken()
	assert.Error(t, err)
	require.Error(t, d.err, "Update will refuse to write")
	assert.Contains(t, d.err.Error(), "agents.b.allowlist: want an array, got an object")
	_, err = d.Config()
	assert.Error(t, err)
	assert.Equal(t, float64(1), mustNumber(t, jsonDig(d.root, "defaults")), "left as it was")
}

func mustNumber(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "%T", v)
	f, err := n.Float64()
	require.NoError(t, err)
	return f
}

func TestDocumentTouch(t *testing.T) {
	d := docFrom(t, `{"agents": {
		"*": {"allowlist": [{"pattern": "git **", "lastResolvedPath": "/old/git"}]},
		"claude-code": {"allowlist": [{"pattern": "npm **"}]}}}`)
	at := time.UnixMilli(1763000000456)
	assert.True(t, d.Touch("claude-code", "npm **", "npm test", "/usr/bin/npm", at))
	assert.True(t, d.Touch("claude-code", "git **", "git", "", at), `falls back to "*"`)
	assert.False(t, d.Touch("claude-code", "make **", "make", "", at))

	cfg := docConfig(t, d)
	assert.Equal(t, pattern.Entry{Pattern: "npm **", LastUsedAt: 1763000000456, LastUsedCommand: "npm test", LastResolvedPath: "/usr/bin/npm"},
		cfg.Agents["claude-code"].Allowlist[0])
	git := cfg.Agents["*"].Allowlist[0]
	assert.Equal(t, "git", git.LastUsedCommand)
	assert.Empty(t, git.LastResolvedPath, "a stale resolved path is removed")
}

func TestDocumentEnsureToken(t *testing.T) {
	d := newDocument()
	tok, err := d.EnsureToken()
	require.NoError(t, err)
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	require.NoError(t, err)
	assert.Len(t, raw, 32)
	again, err := d.EnsureToken()
	require.NoError(t, err)
	assert.Equal(t, tok, again, "created once")
	other, err := newDocument().EnsureToken()
	require.NoError(t, err)
	assert.NotEqual(t, tok, other)

	d = docFrom(t, `{"socket": {"path": "/s", "token": "existing"}}`)
	tok, err = d.EnsureToken()
	require.NoError(t, err)
	assert.Equal(t, "existing", tok)
}

func TestDocumentReplace(t *testing.T) {
	d := docFrom(t, `{"socket": {"path": "/run/hub.sock", "token": "secret"}, "defaults": {"ask": "off"}}`)
	require.NoError(t, d.Replace([]byte(`{"socket": {"path": "/tmp/evil", "token": "stolen", "x": 1},
		"defaults": {"ask": "always"}, "unknown": true}`)))
	cfg := docConfigLenient(t, d)
	assert.Equal(t, SocketConfig{Path: "/run/hub.sock", Token: "secret"}, cfg.Socket)
	assert.Equal(t, AskAlways, cfg.Defaults.Ask)
	assert.Equal(t, true, d.root["unknown"])
	assert.Equal(t, json.Number("1"), jsonDig(d.root, "socket", "x"))

	// Without a socket before, the replacement cannot bring one in.
	d = newDocument()
	require.NoError(t, d.Replace([]byte(`{"socket": {"path": "/tmp/evil", "token": "t"}}`)))
	assert.Nil(t, d.root["socket"])

	for _, bad := range []string{`[]`, `{"version": 2}`, `{`, `{"a": 1, "a": 2}`} {
		d := docFrom(t, `{"defaults": {"ask": "off"}}`)
		assert.Error(t, d.Replace([]byte(bad)), bad)
		assert.Equal(t, "off", jsonDig(d.root, "defaults", "ask"), "unchanged")
	}
}

// docConfigLenient is docConfig for documents that may carry warnings.
func docConfigLenient(t *testing.T, d *Document) *Config {
	t.Helper()
	cfg, err := d.Config()
	require.NoError(t, err)
	return cfg
}
