package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigCheck(t *testing.T) {
	cfgEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	path := filepath.Join(home, "exec-approvals.json")

	code, out, errs := cfgRun(t, path, "config", "check")
	assert.Equal(t, 0, code)
	assert.Equal(t, "~/exec-approvals.json: no such file; the built-in defaults apply\n", out)
	assert.Empty(t, errs)

	writeCfg(t, path, `{"version": 1, "agents": {"*": {"denylist": [{"pattern": "rm **"}]}}}`)
	code, out, errs = cfgRun(t, path, "config", "check")
	assert.Equal(t, 0, code)
	assert.Equal(t, "~/exec-approvals.json: ok\n", out)
	assert.Empty(t, errs)

	// Recoverable problems: one line each, exit 1, file untouched.
	warned := `{"version": 1, "defautls": {}, "agents": {"*": {"ask": "sometimes", "allowlist": [{"pattern": ""}]}}}`
	writeCfg(t, path, warned)
	code, out, errs = cfgRun(t, path, "config", "check")
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	assert.Len(t, lines, 3, errs)
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, "~/exec-approvals.json: warning: "), l)
	}
	assert.Contains(t, errs, "defautls: unknown field")
	assert.Contains(t, errs, `agents.*.ask: unknown value "sometimes"`)

	// A file that cannot be used: one line saying so.
	corrupt := "{\"version\": 1,\n \"agents\": {,}}"
	writeCfg(t, path, corrupt)
	code, out, errs = cfgRun(t, path, "config", "check")
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
	assert.True(t, strings.HasPrefix(errs, "~/exec-approvals.json: error: line 2, column 13: invalid JSON: "), errs)
	assert.Contains(t, errs, "every command is refused until it is fixed")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, corrupt, string(got))
}

// editorScript writes an EDITOR that replaces the file it is given by
// content, and records the file's name.
func editorScript(t *testing.T, content string) (editor, seen string) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "content")
	require.NoError(t, os.WriteFile(src, []byte(content), 0o600))
	seen = filepath.Join(dir, "seen")
	editor = filepath.Join(dir, "editor")
	script := "#!/bin/sh\nprintf '%s' \"$1\" > '" + seen + "'\ncat '" + src + "' > \"$1\"\n"
	require.NoError(t, os.WriteFile(editor, []byte(script), 0o700))
	return editor, seen
}

func TestConfigEditInstallsValid(t *testing.T) {
	cfgEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "exec-approvals.json")
	// The file to fix does not parse: edit is how it gets fixed.
	writeCfg(t, path, "{\"version\": 1,\n \"agents\": {,}}")
	fixed := "{\"version\": 1,\n \"agents\": {\"*\": {\"denylist\": [{\"pattern\": \"rm **\"}]}}}\n"
	editor, seen := editorScript(t, fixed)
	t.Setenv("EDITOR", editor)

	code, out, errs := cfgRun(t, path, "config", "edit")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "installed "+path+"\n", out)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, fixed, string(got), "installed byte for byte")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	copyPath, err := os.ReadFile(seen)
	require.NoError(t, err)
	assert.Equal(t, dir, filepath.Dir(string(copyPath)), "the copy sits beside the file")
	assert.NoFileExists(t, string(copyPath), "an installed copy is removed")
	assert.Equal(t, "rm **", loadCfg(t, path).Agents["*"].Denylist[0].Pattern)
}

func TestConfigEditKeepsInvalid(t *testing.T) {
	cfgEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "exec-approvals.json")
	orig := `{"version": 1, "agents": {"*": {"denylist": [{"pattern": "rm **"}]}}}`
	writeCfg(t, path, orig)
	typed := "{\"version\": 1,\n \"agents\": {\"*\": {\"denylist\": [{\"pattern\": \"rm **\"}]}}\n \"defaults\": {}}\n"
	editor, seen := editorScript(t, typed)
	t.Setenv("EDITOR", editor)

	code, out, errs := cfgRun(t, path, "config", "edit")
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	copyPath, err := os.ReadFile(seen)
	require.NoError(t, err)
	assert.Equal(t, "execgate: config edit: not installed: line 3, column 2: invalid JSON: invalid character '\"' after object key:value pair; "+
		"your edit is kept in "+string(copyPath)+" (fix it there and copy it over "+path+", or run execgate config edit again)\n", errs)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, orig, string(got), "the file is untouched")
	kept, err := os.ReadFile(string(copyPath))
	require.NoError(t, err)
	assert.Equal(t, typed, string(kept), "nothing typed is lost")
}

func TestConfigEditMissingFileAndFailingEditor(t *testing.T) {
	cfgEnv(t)
	path := filepath.Join(t.TempDir(), "sub", "exec-approvals.json")
	t.Setenv("EDITOR", "false")
	code, _, errs := cfgRun(t, path, "config", "edit")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errs, "false failed")
	assert.Contains(t, errs, "your edit is kept in ")
	assert.NoFileExists(t, path)

	// A missing file starts from a minimal one; saving it as is installs it.
	t.Setenv("EDITOR", "true")
	code, out, errs := cfgRun(t, path, "config", "edit")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "installed "+path+"\n", out)
	loadCfg(t, path)
}
