package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// world is an installation of execgate (a binary and its shim link, as
// install.sh lays them out), a home directory and a state directory, all in
// a temporary directory.
type world struct {
	t                     *testing.T
	exe, home, state, dir string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, dir: dir, exe: filepath.Join(dir, "prefix", "bin", "execgate"),
		home: filepath.Join(dir, "home"), state: filepath.Join(dir, "state", "execgate")}
	shims := ShimDir(w.exe)
	require.NoError(t, os.MkdirAll(filepath.Dir(w.exe), 0o755))
	require.NoError(t, os.WriteFile(w.exe, []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.MkdirAll(shims, 0o755))
	require.NoError(t, os.Symlink("../../../bin/execgate", filepath.Join(shims, "bash")))
	require.NoError(t, os.MkdirAll(w.home, 0o700))
	return w
}

func (w *world) options(agent string, hook bool) Options {
	return Options{Agent: agent, Hook: hook, Exe: w.exe, Home: w.home, StateDir: w.state,
		Getenv: func(string) string { return "" }}
}

// settings puts the sample file where the agent keeps it and returns the
// path.
func (w *world) settings(agent, sample string) string {
	w.t.Helper()
	j, err := w.options(agent, false).job()
	require.NoError(w.t, err)
	path := j.settingsFile()
	require.NoError(w.t, os.MkdirAll(filepath.Dir(path), 0o700))
	if sample != "" {
		raw, err := os.ReadFile(sample)
		require.NoError(w.t, err)
		require.NoError(w.t, os.WriteFile(path, raw, 0o640))
		require.NoError(w.t, os.Chmod(path, 0o640))
	}
	return path
}

func (w *world) apply(agent string, hook bool) *Outcome {
	w.t.Helper()
	out, err := Apply(context.Background(), w.options(agent, hook))
	require.NoError(w.t, err)
	return out
}

// undo reverts both integrations of agent (see TestUndoOneVariant for one).
func (w *world) undo(agent string) *Outcome {
	w.t.Helper()
	o := w.options(agent, false)
	o.AllVariants = true
	out, err := Undo(context.Background(), o)
	require.NoError(w.t, err)
	return out
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Mode().Perm()
}

// TestApplyUndoEachSample applies to every sample file on disk and undoes
// it: the file gets the entries (keeping its mode), the backup holds the
// original, and undo leaves the original bytes and no backup or record
// behind.
func TestApplyUndoEachSample(t *testing.T) {
	for sample, agent := range samples(t) {
		for _, v := range variantsFor(agent) {
			t.Run(filepath.Base(sample)+"/"+v.name, func(t *testing.T) {
				w := newWorld(t)
				path := w.settings(agent, sample)
				orig := readString(t, path)

				out := w.apply(agent, v.hook)
				if !out.Changed {
					assert.Equal(t, "claude-replaced.json", filepath.Base(sample), "only this sample has the hook already")
					assert.Equal(t, orig, readString(t, path))
					return
				}
				assert.Equal(t, path, out.File)
				assert.False(t, out.Created)
				assert.Equal(t, path+".execgate-backup", out.Backup)
				assert.Equal(t, orig, readString(t, out.Backup))
				assert.Equal(t, fs.FileMode(0o640), mode(t, path), "the file keeps its mode")
				j, err := w.options(agent, v.hook).job()
				require.NoError(t, err)
				doc, err := parseDocument([]byte(readString(t, path)), j.agent.comments)
				require.NoError(t, err)
				for _, e := range j.plan.edits {
					assert.True(t, doc.has(e), "the file has %s", dotted(e.path))
				}
				assert.FileExists(t, statePath(w.state, agent))

				undone := w.undo(agent)
				assert.True(t, undone.Changed)
				assert.True(t, undone.Restored)
				assert.Equal(t, orig, readString(t, path), "undo restores the bytes exactly")
				assert.Equal(t, fs.FileMode(0o640), mode(t, path))
				assert.NoFileExists(t, out.Backup, "the backup is the file again")
				assert.NoFileExists(t, statePath(w.state, agent))

				again := w.undo(agent)
				assert.False(t, again.Changed, "nothing left to undo")
			})
		}
	}
}

// TestApplyTwice changes nothing the second time: no second entry, no second
// backup, no second record.
func TestApplyTwice(t *testing.T) {
	w := newWorld(t)
	path := w.settings("codex", "../testdata/setup/in/codex-hooks.json")
	require.True(t, w.apply("codex", false).Changed)
	once := readString(t, path)
	state := readString(t, statePath(w.state, "codex"))

	out := w.apply("codex", false)
	assert.False(t, out.Changed)
	assert.Empty(t, out.Backup)
	assert.Equal(t, once, readString(t, path))
	assert.Equal(t, state, readString(t, statePath(w.state, "codex")))
	assert.Equal(t, 1, strings.Count(once, "hook codex"))
	backups, _ := filepath.Glob(path + ".execgate-backup*")
	assert.Len(t, backups, 1)
}

// TestApplyCreatesMissingFile creates the file and its directory privately;
// undo removes the file again.
func TestApplyCreatesMissingFile(t *testing.T) {
	w := newWorld(t)
	path := filepath.Join(w.home, ".gemini", "settings.json")
	out := w.apply("gemini", false)
	assert.True(t, out.Changed)
	assert.True(t, out.Created)
	assert.Empty(t, out.Backup)
	assert.Equal(t, fs.FileMode(0o600), mode(t, path))
	assert.Equal(t, fs.FileMode(0o700), mode(t, filepath.Dir(path)))
	text := readString(t, path)
	assert.True(t, strings.HasPrefix(text, "{\n  \"hooks\": {\n    \"BeforeTool\": [\n"), text)
	assert.True(t, strings.HasSuffix(text, "}\n"))

	undone := w.undo("gemini")
	assert.True(t, undone.Changed)
	assert.True(t, undone.Created, "undo removed the file apply created")
	assert.NoFileExists(t, path)
}

// TestUndoKeepsUserEdits: after the user edits the file, undo takes out only
// execgate's entries, keeps the edits (the rest of the file byte for byte)
// and backs up the file as it was.
func TestUndoKeepsUserEdits(t *testing.T) {
	for _, v := range []variant{{"env", false}, {"hook", true}} {
		t.Run(v.name, func(t *testing.T) {
			w := newWorld(t)
			path := w.settings("claude", "../testdata/setup/in/claude-settings.json")
			orig := readString(t, path)
			w.apply("claude", v.hook)
			applied := readString(t, path)
			edited := strings.Replace(applied, `"model": "opus"`, `"model": "sonnet"`, 1)
			require.NotEqual(t, applied, edited)
			require.NoError(t, os.WriteFile(path, []byte(edited), 0o640))

			out := w.undo("claude")
			assert.True(t, out.Changed)
			assert.False(t, out.Restored, "the file was edited: entries taken out, not restored")
			assert.Empty(t, out.Kept)
			want := strings.Replace(orig, `"model": "opus"`, `"model": "sonnet"`, 1)
			assert.Equal(t, want, readString(t, path))
			assert.Equal(t, edited, readString(t, out.Backup), "the edited file is backed up before undo")
			assert.FileExists(t, path+".execgate-backup", "the original's backup stays")
			assert.NoFileExists(t, statePath(w.state, "claude"))
		})
	}
}

// TestUndoPutsBackReplacedValue: apply replaced the user's
// CLAUDE_CODE_SHELL; undo of an edited file puts the old value back.
func TestUndoPutsBackReplacedValue(t *testing.T) {
	w := newWorld(t)
	path := w.settings("claude", "../testdata/setup/in/claude-replaced.json")
	w.apply("claude", false)
	text := readString(t, path)
	assert.Contains(t, text, `"CLAUDE_CODE_SHELL": "`+filepath.Join(ShimDir(w.exe), "bash")+`"`)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(text, `"timeout": 120`, `"timeout": 90`, 1)), 0o600))

	out := w.undo("claude")
	assert.False(t, out.Restored)
	got := readString(t, path)
	assert.Contains(t, got, `"CLAUDE_CODE_SHELL": "/bin/zsh"`)
	assert.Contains(t, got, `"timeout": 90`)
}

// TestUndoLeavesChangedEntry: an entry the user changed since is theirs now.
func TestUndoLeavesChangedEntry(t *testing.T) {
	w := newWorld(t)
	path := w.settings("claude", "../testdata/setup/in/claude-settings.json")
	w.apply("claude", false)
	shim := filepath.Join(ShimDir(w.exe), "bash")
	text := strings.Replace(readString(t, path), shim, "/usr/local/bin/my-shell", 1)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))

	out := w.undo("claude")
	assert.Equal(t, []string{"env.CLAUDE_CODE_SHELL"}, out.Kept)
	assert.False(t, out.Changed, "nothing else was execgate's")
	assert.Equal(t, text, readString(t, path))
	assert.NoFileExists(t, statePath(w.state, "claude"), "the record is gone either way")
}

// TestApplyLayers: two applies (the shim, then the hook) are undone
// together, exactly.
func TestApplyLayers(t *testing.T) {
	w := newWorld(t)
	path := w.settings("claude", "../testdata/setup/in/claude-tabs-crlf.json")
	orig := readString(t, path)
	first := w.apply("claude", false)
	second := w.apply("claude", true)
	require.True(t, first.Changed)
	require.True(t, second.Changed)
	assert.NotEqual(t, first.Backup, second.Backup, "the first backup is not overwritten")
	assert.Equal(t, orig, readString(t, first.Backup))

	out := w.undo("claude")
	assert.True(t, out.Restored)
	assert.Equal(t, orig, readString(t, path))
	assert.NoFileExists(t, first.Backup)
	assert.NoFileExists(t, second.Backup)
}

// TestBackupNeverOverwritten: a backup from before is kept, and the new one
// gets a name with the time in it.
func TestBackupNeverOverwritten(t *testing.T) {
	w := newWorld(t)
	path := w.settings("codex", "../testdata/setup/in/codex-empty.json")
	require.NoError(t, os.WriteFile(path+".execgate-backup", []byte("older"), 0o600))
	o := w.options("codex", false)
	o.Now = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }
	out, err := Apply(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, path+".execgate-backup-20260304T050607Z", out.Backup)
	assert.Equal(t, "older", readString(t, path+".execgate-backup"))
	assert.Equal(t, "{}\n", readString(t, out.Backup))
}

// TestSymlinkedSettings writes through a symbolic link to the file in the
// user's dotfiles, leaving the link a link.
func TestSymlinkedSettings(t *testing.T) {
	w := newWorld(t)
	link := w.settings("claude", "")
	real := filepath.Join(w.dir, "dotfiles", "claude", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(real), 0o700))
	require.NoError(t, os.WriteFile(real, []byte("{\"model\": \"opus\"}\n"), 0o600))
	require.NoError(t, os.Symlink(real, link))

	out := w.apply("claude", true)
	assert.Equal(t, real, out.File)
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&fs.ModeSymlink, "still a link")
	assert.Contains(t, readString(t, real), "hook claude")
	assert.FileExists(t, real+".execgate-backup")

	w.undo("claude")
	assert.Equal(t, "{\"model\": \"opus\"}\n", readString(t, real))
}

// TestRefusals: a file execgate cannot edit safely is left exactly as it
// is, with one line naming it and the problem, and nothing recorded.
func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		name, agent, content, problem string
		hook                          bool
	}{
		{"syntax", "claude", "{\"env\": {\"A\": 1,}", "is not valid JSON (line 1, column 18", false},
		{"comments-for-claude", "claude", "{\n  // mine\n  \"env\": {}\n}\n", "is not valid JSON (it has comments or trailing commas)", false},
		{"not-object", "codex", "[1, 2]\n", "is not a JSON object", false},
		{"hooks-string", "claude", "{\"hooks\": \"none\"}", "has hooks as a string, not an object", true},
		{"env-array", "claude", "{\"env\": [\"A=1\"]}", "has env as an array, not an object", false},
		{"event-object", "gemini", "{\"hooks\": {\"BeforeTool\": {}}}", "has hooks.BeforeTool as an object, not an array", false},
		{"duplicate", "codex", "{\"hooks\": {}, \"hooks\": {}}", "has the key hooks twice", false},
		{"deep", "codex", strings.Repeat("[", 500) + strings.Repeat("]", 500), "is nested more than 200 levels deep", false},
		{"binary", "claude", "\x00\x01\x02", "is not valid JSON", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			path := w.settings(c.agent, "")
			require.NoError(t, os.WriteFile(path, []byte(c.content), 0o644))
			_, err := Apply(context.Background(), w.options(c.agent, c.hook))
			require.Error(t, err)
			msg := err.Error()
			assert.NotContains(t, msg, "\n", "one line")
			assert.Contains(t, msg, c.problem)
			assert.True(t, strings.HasPrefix(msg, "~/"), "names the file: %s", msg)
			assert.True(t, strings.HasSuffix(msg, "; left it unchanged"), msg)
			assert.Equal(t, c.content, readString(t, path))
			assert.Equal(t, fs.FileMode(0o644), mode(t, path))
			backups, _ := filepath.Glob(path + ".execgate-backup*")
			assert.Empty(t, backups)
			assert.NoFileExists(t, statePath(w.state, c.agent))
		})
	}
}

// TestShimRequired: the shim integration refuses without the shim; the hook
// does not need it.
func TestShimRequired(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.Remove(filepath.Join(ShimDir(w.exe), "bash")))
	_, err := Apply(context.Background(), w.options("claude", false))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has no bash link to execgate; run ./install.sh")
	assert.NoFileExists(t, filepath.Join(w.home, ".claude", "settings.json"))

	// A real shell where the shim should be would run commands ungated.
	require.NoError(t, os.WriteFile(filepath.Join(ShimDir(w.exe), "bash"), []byte("#!/bin/sh\n"), 0o755))
	_, err = Apply(context.Background(), w.options("claude", false))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a link to")

	assert.True(t, w.apply("claude", true).Changed)
}

// TestWarnings: settings that switch all hooks off are pointed out.
func TestWarnings(t *testing.T) {
	w := newWorld(t)
	path := w.settings("gemini", "")
	require.NoError(t, os.WriteFile(path, []byte(`{"hooksConfig": {"enabled": false}}`), 0o600))
	out := w.apply("gemini", false)
	require.Len(t, out.Warnings, 1)
	assert.Contains(t, out.Warnings[0], "hooksConfig.enabled is false")
}

// TestUsageErrors are mistakes in the options, not in any file.
func TestUsageErrors(t *testing.T) {
	w := newWorld(t)
	for _, o := range []Options{
		{Agent: "cursor", Exe: w.exe},
		{Agent: "aider", Hook: true, Exe: w.exe},
		{Agent: "shell", Settings: "x.json", Exe: w.exe},
		{Agent: "claude", Exe: "execgate"},
	} {
		_, err := Apply(context.Background(), o)
		assert.True(t, errors.Is(err, ErrUsage), "%+v: %v", o, err)
	}
	o := w.options("claude", true)
	o.StateDir = ""
	_, err := Apply(context.Background(), o)
	assert.True(t, errors.Is(err, ErrUsage))
}

// TestNoSettingsFile: aider and the generic recipes have nothing to apply or
// undo.
func TestNoSettingsFile(t *testing.T) {
	w := newWorld(t)
	for _, agent := range []string{"aider", "shell"} {
		out := w.apply(agent, false)
		assert.False(t, out.Changed)
		assert.Empty(t, out.File)
		require.Len(t, out.Notes, 1)
		assert.Contains(t, out.Notes[0], "no settings file")
		assert.False(t, w.undo(agent).Changed)
	}
}

// TestSettingsFromEnvironment follows CLAUDE_CONFIG_DIR and CODEX_HOME.
func TestSettingsFromEnvironment(t *testing.T) {
	w := newWorld(t)
	env := map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join(w.dir, "cc"), "CODEX_HOME": filepath.Join(w.dir, "cx")}
	for agent, want := range map[string]string{"claude": "cc/settings.json", "codex": "cx/hooks.json"} {
		o := w.options(agent, true)
		o.Getenv = func(k string) string { return env[k] }
		out, err := Apply(context.Background(), o)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(w.dir, want), out.File)
	}
}

// TestUndoRefusesBrokenFile: a file the user broke since apply is not
// touched; the record stays, so undo works once it is fixed.
func TestUndoRefusesBrokenFile(t *testing.T) {
	w := newWorld(t)
	path := w.settings("codex", "../testdata/setup/in/codex-hooks.json")
	w.apply("codex", false)
	applied := readString(t, path)
	broken := strings.TrimSuffix(applied, "}\n")
	require.NoError(t, os.WriteFile(path, []byte(broken), 0o600))

	_, err := Undo(context.Background(), w.options("codex", false))
	require.Error(t, err)
	assert.Regexp(t, `^~/\.codex/hooks\.json was edited since setup and is not valid JSON \(.*\); left it unchanged$`, err.Error())
	assert.Equal(t, broken, readString(t, path))

	require.NoError(t, os.WriteFile(path, []byte(applied), 0o600))
	assert.True(t, w.undo("codex").Restored)
}

// TestNotARegularFile: a directory where the settings file should be.
func TestNotARegularFile(t *testing.T) {
	w := newWorld(t)
	path := w.settings("claude", "")
	require.NoError(t, os.Mkdir(path, 0o700))
	_, err := Apply(context.Background(), w.options("claude", true))
	require.Error(t, err)
	assert.Equal(t, "~/.claude/settings.json is not a regular file; left it unchanged", err.Error())
}

// TestUndoOneVariant: Claude Code has two integrations in one settings
// file. Undoing one leaves the other, whichever was applied first, and
// undoing both gives back the original bytes.
func TestUndoOneVariant(t *testing.T) {
	for _, first := range []bool{false, true} {
		t.Run(fmt.Sprintf("hook first %v", first), func(t *testing.T) {
			w := newWorld(t)
			path := w.settings("claude", "")
			original := "{\"model\": \"opus\"}\n"
			require.NoError(t, os.WriteFile(path, []byte(original), 0o600))
			w.apply("claude", first)
			w.apply("claude", !first)
			both := readString(t, path)
			require.Contains(t, both, "CLAUDE_CODE_SHELL")
			require.Contains(t, both, "hook claude")

			out, err := Undo(context.Background(), w.options("claude", false)) // setup claude --undo
			require.NoError(t, err)
			assert.True(t, out.Changed)
			left := readString(t, path)
			assert.NotContains(t, left, "CLAUDE_CODE_SHELL")
			assert.Contains(t, left, "hook claude", "the hook stays")

			out, err = Undo(context.Background(), w.options("claude", false))
			require.NoError(t, err)
			assert.False(t, out.Changed, "nothing left of the shim integration")

			out, err = Undo(context.Background(), w.options("claude", true)) // --hook --undo
			require.NoError(t, err)
			assert.True(t, out.Changed)
			assert.JSONEq(t, original, readString(t, path))
			assert.NoFileExists(t, statePath(w.state, "claude"))
		})
	}
}

// TestNoLockBesideSettings: Apply and Undo leave nothing of execgate's
// beside the settings file but the backup Apply announces: their lock is in
// execgate's state directory, not in the agent's.
func TestNoLockBesideSettings(t *testing.T) {
	for _, agent := range []string{"claude", "codex", "gemini"} {
		t.Run(agent, func(t *testing.T) {
			w := newWorld(t)
			file := w.settings(agent, "")
			applied := w.apply(agent, agent == "claude")
			require.True(t, applied.Changed)
			assert.Equal(t, []string{filepath.Base(file)}, dirNames(t, filepath.Dir(file)), "after --apply")
			require.True(t, w.undo(agent).Changed)
			assert.Empty(t, dirNames(t, filepath.Dir(file)), "after --undo")
			locks, err := filepath.Glob(filepath.Join(w.state, "setup", "locks", "*.lock"))
			require.NoError(t, err)
			assert.Len(t, locks, 1, "the lock is in the state directory")
		})
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
