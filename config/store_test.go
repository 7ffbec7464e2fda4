package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/pattern"
)

// Environment of the writer processes TestStoreConcurrentWriters starts.
const (
	writerPathEnv = "EXECGATE_TEST_WRITER_PATH"
	writerIDEnv   = "EXECGATE_TEST_WRITER_ID"
	writerEdits   = 10
	writers       = 16
)

// TestStoreWriterProcess is not a test on its own: it is the body of each
// writer process (this test binary, re-executed), and skips otherwise. A
// helper test, rather than TestMain, so that it cannot clash with another
// TestMain in the package.
func TestStoreWriterProcess(t *testing.T) {
	path := os.Getenv(writerPathEnv)
	if path == "" {
		t.Skip("only runs as a writer process of TestStoreConcurrentWriters")
	}
	id := os.Getenv(writerIDEnv)
	// Wait for the go signal so that all writers start together.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path + ".go"); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "no go signal")
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	s := &Store{Path: path}
	for j := range writerEdits {
		_, err := s.Update(ctx, "", func(d *Document) error {
			if !d.AddAllowlist(WildcardAgent, pattern.Entry{Pattern: writerPattern(id, j), Source: "test"}) {
				return errors.New("pattern already present")
			}
			return nil
		})
		require.NoError(t, err)
	}
}

func writerPattern(id string, j int) string { return fmt.Sprintf("writer-%s cmd-%d **", id, j) }

func TestStoreConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	path := filepath.Join(dir, "cfg", "exec-approvals.json")
	// Start from a file with fields this version does not know: no writer
	// may lose them either.
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"future":{"keep":true}}`), 0o600))

	cmds := make([]*exec.Cmd, writers)
	outs := make([]*strings.Builder, writers)
	for i := range cmds {
		outs[i] = &strings.Builder{}
		cmd := exec.Command(exe, "-test.run=^TestStoreWriterProcess$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), writerPathEnv+"="+path, writerIDEnv+"="+strconv.Itoa(i))
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	require.NoError(t, os.WriteFile(path+".go", nil, 0o600))
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "writer %d:\n%s", i, outs[i])
		require.Contains(t, outs[i].String(), "--- PASS: TestStoreWriterProcess", "writer %d did not run", i)
	}

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	cfg, warnings, err := ParseConfig(raw)
	require.NoError(t, err)
	assert.Equal(t, []string{"future: unknown field; ignored"}, warnings)
	got := map[string]bool{}
	ids := map[string]bool{}
	for _, e := range cfg.Agents[WildcardAgent].Allowlist {
		got[e.Pattern] = true
		ids[e.ID] = true
	}
	for i := range writers {
		for j := range writerEdits {
			assert.True(t, got[writerPattern(strconv.Itoa(i), j)], "lost %s", writerPattern(strconv.Itoa(i), j))
		}
	}
	assert.Len(t, cfg.Agents[WildcardAgent].Allowlist, writers*writerEdits)
	assert.Len(t, ids, writers*writerEdits, "IDs must be distinct")
	assert.Contains(t, string(raw), `"future": {`)

	// No temporary files left behind.
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"exec-approvals.json", "exec-approvals.json.lock", "exec-approvals.json.go"}, names)
}

func storeUpdate(t *testing.T, s *Store, base string, edit func(*Document) error) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Update(ctx, base, edit)
}

func TestStoreCreatesFileAndDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "execgate")
	path := filepath.Join(dir, "exec-approvals.json")
	s := &Store{Path: path}
	hash, err := storeUpdate(t, s, "", func(d *Document) error {
		require.True(t, d.AddAllowlist("", pattern.Entry{Pattern: "ls <dir> > out", Source: "cli"}))
		return nil
	})
	require.NoError(t, err)

	for p, mode := range map[string]os.FileMode{dir: 0o700, path: 0o600, path + ".lock": 0o600} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, mode, fi.Mode().Perm(), p)
	}
	_, loadHash, warnings, err := Load(path)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, loadHash, hash, "Update returns the hash Load reports")

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(raw)
	assert.True(t, strings.HasSuffix(text, "}\n"), "trailing newline")
	assert.Contains(t, text, "\n  \"agents\": {\n    \"*\": {\n", "2-space indentation")
	assert.Contains(t, text, `"pattern": "ls <dir> > out"`, "no HTML escaping of shell characters")
	assert.Contains(t, text, `"version": 1`)
	assert.Less(t, strings.Index(text, `"agents"`), strings.Index(text, `"version"`), "keys sorted")
}

func TestStoreFixesMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exec-approvals.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version":1}`), 0o644))
	require.NoError(t, os.Chmod(path, 0o644)) // whatever the umask
	_, err := storeUpdate(t, &Store{Path: path}, "", func(d *Document) error { return d.SetPolicyField("", "ask", "always") })
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestStoreKeepsUnknownFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exec-approvals.json")
	orig := `{
  "version": 1,
  "top": {"a": [1, 2.50, 1e400, 12345678901234567890123]},
  "socket": {"path": "/s", "extra": "x"},
  "defaults": {"security": "allowlist", "defaultsNote": {"n": null}},
  "agents": {
    "claude-code": {
      "agentNote": "keep me",
      "allowlist": [{"pattern": "git **", "id": "aaaaaaaaaaaa", "entryNote": {"deep": [true]}}],
      "denylist": [{"pattern": "rm -rf /", "why": "obvious"}]
    }
  }
}`
	require.NoError(t, os.WriteFile(path, []byte(orig), 0o600))
	s := &Store{Path: path}
	at := time.UnixMilli(1763000000123)
	_, err := storeUpdate(t, s, "", func(d *Document) error {
		require.True(t, d.AddAllowlist("claude-code", pattern.Entry{Pattern: "make **"}))
		require.True(t, d.Touch("claude-code", "git **", "git status", "/usr/bin/git", at))
		require.NoError(t, d.SetPolicyField("claude-code", "ask", "always"))
		require.NoError(t, d.SetPolicyField("", "timeoutMs", "30000"))
		_, err := d.EnsureToken()
		return err
	})
	require.NoError(t, err)

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var got map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&got))

	// Numbers survive byte for byte, even those float64 cannot hold.
	assert.Contains(t, string(raw), "[\n      1,\n      2.50,\n      1e400,\n      12345678901234567890123\n    ]")
	assert.Equal(t, "x", jsonDig(got, "socket", "extra"))
	assert.Equal(t, map[string]any{"n": nil}, jsonDig(got, "defaults", "defaultsNote"))
	assert.Equal(t, json.Number("30000"), jsonDig(got, "defaults", "timeoutMs"))
	cc := jsonDig(got, "agents", "claude-code").(map[string]any)
	assert.Equal(t, "keep me", cc["agentNote"])
	assert.Equal(t, "always", cc["ask"])
	allow := cc["allowlist"].([]any)
	require.Len(t, allow, 2)
	git := allow[0].(map[string]any)
	assert.Equal(t, map[string]any{"deep": []any{true}}, git["entryNote"])
	assert.Equal(t, json.Number("1763000000123"), git["lastUsedAt"])
	assert.Equal(t, "git status", git["lastUsedCommand"])
	assert.Equal(t, "/usr/bin/git", git["lastResolvedPath"])
	assert.Equal(t, "obvious", cc["denylist"].([]any)[0].(map[string]any)["why"])
	assert.Equal(t, "make **", allow[1].(map[string]any)["pattern"])
}

// jsonDig walks nested objects.
func jsonDig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// TestStoreRefusesCorruptFile: a file that does not parse is never started
// over. Every kind of damage leaves the file byte for byte as it was, no
// copy beside it, and an error that says where and why.
func TestStoreRefusesCorruptFile(t *testing.T) {
	tests := map[string]struct{ content, err string }{
		"missing comma": {"{\"agents\": {\"*\": {\"denylist\": [{\"pattern\": \"rm **\"}]}}\n \"version\": 1}",
			"line 2, column 2: invalid JSON: invalid character '\"' after object key:value pair"},
		"truncated":     {"{\"agents\": {\"*\": {\"denylist\": [{\"pattern\": \"rm **\"}\n", "line 2, column 1: invalid JSON: unexpected end of input"},
		"empty":         {"", "empty file"},
		"blank":         {" \n", "empty file"},
		"not an object": {`["git **"]`, "want a JSON object at the top level"},
		"not json":      {"not json", "line 1, column 2: invalid JSON"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "exec-approvals.json")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			called := false
			_, err := storeUpdate(t, &Store{Path: path}, "", func(d *Document) error {
				called = true
				d.AddAllowlist("", pattern.Entry{Pattern: "ls"})
				return nil
			})
			require.Error(t, err)
			assert.False(t, called, "the edit never sees a document it would start over")
			u, ok := AsUnusable(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, path, u.Path)
			assert.Contains(t, err.Error(), "config "+path+": "+tt.err)
			assert.Contains(t, err.Error(), "not changing it")
			assert.NotContains(t, err.Error(), "\n")
			assertFileBytes(t, path, []byte(tt.content))
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			assert.ElementsMatch(t, []string{"exec-approvals.json", "exec-approvals.json.lock"}, names, "no copy, no temporary file")
		})
	}
}

// TestStoreRefusesUnreadable: a directory or a file that cannot be read is
// not a missing file to create.
func TestStoreRefusesUnreadable(t *testing.T) {
	dir := t.TempDir()
	asDir := filepath.Join(dir, "dir.json")
	require.NoError(t, os.Mkdir(asDir, 0o700))
	_, err := storeUpdate(t, &Store{Path: asDir}, "", func(d *Document) error { return nil })
	require.Error(t, err)
	_, ok := AsUnusable(err)
	assert.True(t, ok, "%v", err)
	assert.Contains(t, err.Error(), "is a directory, not a file")
	fi, err := os.Stat(asDir)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())

	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	unreadable := filepath.Join(dir, "unreadable.json")
	require.NoError(t, os.WriteFile(unreadable, []byte(`{"version": 1}`), 0o000))
	_, err = storeUpdate(t, &Store{Path: unreadable}, "", func(d *Document) error { return nil })
	require.ErrorIs(t, err, os.ErrPermission)
}

func TestStoreRefusesFilesItCannotRewrite(t *testing.T) {
	tests := map[string]struct{ content, err string }{
		"unknown version": {`{"version": 2, "rules": "new format"}`, "unsupported version number 2"},
		"duplicate key":   {"{\"agents\": {},\n \"agents\": {}}", `line 2, column 2: ambiguous JSON: duplicate key "agents" at the top level`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "exec-approvals.json")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			_, err := storeUpdate(t, &Store{Path: path}, "", func(d *Document) error { return nil })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.Contains(t, err.Error(), "not changing it")
			assertFileBytes(t, path, []byte(tt.content))
		})
	}
}

func assertFileBytes(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

func TestStoreStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exec-approvals.json")
	s := &Store{Path: path}
	first, err := storeUpdate(t, s, "", func(d *Document) error { return d.SetPolicyField("", "ask", "always") })
	require.NoError(t, err)
	second, err := storeUpdate(t, s, first, func(d *Document) error { return d.SetPolicyField("", "ask", "off") })
	require.NoError(t, err, "a matching base hash is accepted")
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	edited := false
	_, err = storeUpdate(t, s, first, func(d *Document) error { edited = true; return nil })
	require.ErrorIs(t, err, ErrStale)
	assert.Contains(t, err.Error(), path)
	assert.False(t, edited, "edit must not run on a stale base")
	assertFileBytes(t, path, before)

	// A base hash for a file that has since been deleted is stale too.
	require.NoError(t, os.Remove(path))
	_, err = storeUpdate(t, s, second, func(d *Document) error { return nil })
	require.ErrorIs(t, err, ErrStale)
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestStoreRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	orig := []byte(`{"version": 1}`)
	require.NoError(t, os.WriteFile(real, orig, 0o600))

	t.Run("file", func(t *testing.T) {
		path := filepath.Join(dir, "link.json")
		require.NoError(t, os.Symlink(real, path))
		_, err := storeUpdate(t, &Store{Path: path}, "", func(d *Document) error { return d.SetPolicyField("", "security", "full") })
		require.Error(t, err)
		assert.Contains(t, err.Error(), "symbolic link")
		assertFileBytes(t, real, orig)
	})
	t.Run("lock", func(t *testing.T) {
		path := filepath.Join(dir, "other.json")
		target := filepath.Join(dir, "victim")
		require.NoError(t, os.Symlink(target, path+".lock"))
		_, err := storeUpdate(t, &Store{Path: path}, "", func(d *Document) error { return nil })
		require.Error(t, err)
		assert.Contains(t, err.Error(), "symbolic link")
		_, err = os.Lstat(target)
		assert.ErrorIs(t, err, os.ErrNotExist, "nothing created through the link")
		_, err = os.Lstat(path)
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
}

func TestStoreNothingWrittenOnRefusal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exec-approvals.json")
	orig := []byte(`{"version": 1, "agents": {"claude-code": "oops"}}`)
	require.NoError(t, os.WriteFile(path, orig, 0o600))
	s := &Store{Path: path}
	tests := map[string]func(d *Document) error{
		"edit error": func(d *Document) error {
			d.AddAllowlist("*", pattern.Entry{Pattern: "ls"})
			return errors.New("changed my mind")
		},
		"wrong shape": func(d *Document) error {
			assert.False(t, d.AddAllowlist("claude-code", pattern.Entry{Pattern: "ls"}))
			return nil
		},
		"replace with invalid": func(d *Document) error { return d.Replace([]byte(`{"version": 3}`)) },
		"invalid result": func(d *Document) error {
			d.root["version"] = json.Number("7")
			return nil
		},
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := storeUpdate(t, s, "", edit)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "\n")
			assertFileBytes(t, path, orig)
		})
	}
}

func TestStoreLockRespectsContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exec-approvals.json")
	held := flock.New(path + ".lock")
	ok, err := held.TryLock()
	require.NoError(t, err)
	require.True(t, ok)
	defer held.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = (&Store{Path: path}).Update(ctx, "", func(d *Document) error { return nil })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist)

	// Once the lock is free, the same store proceeds.
	require.NoError(t, held.Unlock())
	_, err = storeUpdate(t, &Store{Path: path}, "", func(d *Document) error { return nil })
	require.NoError(t, err)
}

// TestEditInstallStale: a hand edit never overwrites a change another
// writer made while the editor was open; the copy stays.
func TestEditInstallStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exec-approvals.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 1}`), 0o600))
	e, err := (&Store{Path: path}).BeginEdit()
	require.NoError(t, err)
	assertFileBytes(t, e.Copy, []byte(`{"version": 1}`))
	_, err = storeUpdate(t, &Store{Path: path}, "", func(d *Document) error {
		d.AddDenylist("", pattern.Entry{Pattern: "rm **"})
		return nil
	})
	require.NoError(t, err)
	written, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(e.Copy, []byte(`{"version": 1, "defaults": {"security": "full"}}`), 0o600))
	_, err = e.Install(context.Background())
	require.ErrorIs(t, err, ErrStale)
	assertFileBytes(t, path, written)
	assert.FileExists(t, e.Copy)
}
