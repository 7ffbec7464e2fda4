package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a time that moves a second on every call, so that the order of
// Applies is their order in the records.
func clock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

// TestUndoAll applies every agent that has a settings file, one of them
// twice (shim, then hook) and one to a file of the user's choosing, and
// undoes them all at once: each file gets its exact bytes back (or is
// removed, if setup created it), newest first, and no record, backup or
// lock file is left.
func TestUndoAll(t *testing.T) {
	w := newWorld(t)
	now := clock()
	claude := w.settings("claude", "../testdata/setup/in/claude-settings.json")
	gemini := w.settings("gemini", "../testdata/setup/in/gemini-settings.json")
	codex := w.settings("codex", "")
	custom := filepath.Join(w.home, "elsewhere", "claude.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(custom), 0o700))
	require.NoError(t, os.WriteFile(custom, []byte("{\"theme\": \"dark\"}\n"), 0o600))
	before := map[string]string{claude: readString(t, claude), gemini: readString(t, gemini), custom: readString(t, custom)}

	for _, a := range []struct {
		agent, settings string
		hook            bool
	}{{"claude", "", false}, {"gemini", "", false}, {"codex", "", false}, {"claude", "", true}, {"claude", custom, false}} {
		o := w.options(a.agent, a.hook)
		o.Settings, o.Now = a.settings, now
		out, err := Apply(context.Background(), o)
		require.NoError(t, err)
		require.True(t, out.Changed, "%+v", a)
	}
	require.FileExists(t, codex)

	o := w.options("", false)
	o.Now = now
	done, err := UndoAll(context.Background(), o)
	require.NoError(t, err)
	var order []string
	for _, d := range done {
		require.NoError(t, d.Err, d.File)
		assert.True(t, d.Outcome.Changed, d.File)
		assert.True(t, d.Outcome.Restored, d.File)
		order = append(order, d.Agent+" "+d.File)
	}
	assert.Equal(t, []string{"claude " + custom, "claude " + claude, "codex " + codex, "gemini " + gemini}, order,
		"newest first: the claude file's latest Apply was the hook")

	for file, want := range before {
		assert.Equal(t, want, readString(t, file), "%s has its bytes back", file)
	}
	assert.NoFileExists(t, codex, "setup created it, so undo removes it")
	for _, file := range []string{claude, gemini, codex, custom} {
		left, err := filepath.Glob(file + ".execgate*")
		require.NoError(t, err)
		assert.Empty(t, left, "no backup or lock file is left beside %s", file)
	}
	for _, agent := range Agents() {
		assert.NoFileExists(t, statePath(w.state, agent))
	}

	again, err := UndoAll(context.Background(), o)
	require.NoError(t, err)
	assert.Empty(t, again, "nothing left to undo")
}

// TestUndoAllGoesOnPastProblems: a damaged record and a settings file
// that no longer parses are each reported, and neither keeps the other
// agents from being undone.
func TestUndoAllGoesOnPastProblems(t *testing.T) {
	w := newWorld(t)
	claude := w.settings("claude", "../testdata/setup/in/claude-settings.json")
	gemini := w.settings("gemini", "../testdata/setup/in/gemini-settings.json")
	codex := w.settings("codex", "")
	orig := readString(t, claude)
	w.apply("claude", false)
	w.apply("gemini", false)
	w.apply("codex", false)
	require.NoError(t, os.WriteFile(statePath(w.state, "codex"), []byte("{not json"), 0o600))
	broken := readString(t, gemini) + "\n}}} edited by hand"
	require.NoError(t, os.WriteFile(gemini, []byte(broken), 0o600))

	done, err := UndoAll(context.Background(), w.options("", false))
	require.NoError(t, err)
	byAgent := map[string]Undone{}
	for _, d := range done {
		byAgent[d.Agent] = d
	}
	require.Len(t, byAgent, 3)
	assert.NoError(t, byAgent["claude"].Err)
	assert.Equal(t, orig, readString(t, claude), "claude is undone all the same")

	assert.Empty(t, byAgent["codex"].File, "the record itself is the problem")
	require.Error(t, byAgent["codex"].Err)
	assert.Contains(t, byAgent["codex"].Err.Error(), "damaged")
	assert.FileExists(t, codex, "a file whose record is unreadable is left alone")

	assert.Equal(t, gemini, byAgent["gemini"].File)
	require.Error(t, byAgent["gemini"].Err)
	assert.Contains(t, byAgent["gemini"].Err.Error(), "left it unchanged")
	assert.Equal(t, broken, readString(t, gemini))
	assert.FileExists(t, statePath(w.state, "gemini"), "the record stays for another try")
}

// TestUndoAllNeedsAStateDir: without one there is no record to go by, and
// saying "nothing to undo" would be a lie.
func TestUndoAllNeedsAStateDir(t *testing.T) {
	w := newWorld(t)
	o := w.options("", false)
	o.StateDir = ""
	_, err := UndoAll(context.Background(), o)
	require.ErrorIs(t, err, ErrUsage)
}

// TestLeftovers finds the lines that name the binary or the shims, as
// absolute paths or under ~ and $HOME, in the files where execgate is wired
// in by hand, and nothing else.
func TestLeftovers(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	exe := filepath.Join(home, ".local", "bin", "execgate")
	shims := ShimDir(exe)
	cfg := filepath.Join(home, ".config")
	files := map[string]string{
		".npmrc":                "registry=https://registry.npmjs.org/\nscript-shell=" + shims + "/bash\n",
		".bashrc":               "export PATH=\"$HOME/.local/bin:$PATH\"\nalias cl='CLAUDE_CODE_SHELL=~/.local/lib/execgate/shims/bash claude'\n",
		".zshrc":                "export PATH=\"$HOME/.local/bin:$PATH\"\n# execgate is great\n",
		".profile":              "PATH=${HOME}/.local/lib/execgate/shims:$PATH\x1b[31m\n",
		".codex/hooks.json":     `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"` + exe + ` hook codex"}]}]}}`,
		".gemini/settings.json": `{"hooks":{"BeforeTool":[{"command":"/usr/bin/execgate hook gemini"}]}}`,
		".config/systemd/user/execgate-hub.service": "[Service]\nExecStart=\"" + exe + "\" \"hub\"\n",
	}
	for name, text := range files {
		path := filepath.Join(home, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	}
	// A directory where a file is looked for is no file that names execgate.
	require.NoError(t, os.MkdirAll(filepath.Join(cfg, "pnpm", "rc"), 0o700))

	found, err := Leftovers(Options{Exe: exe, Home: home, StateDir: filepath.Join(home, "state"),
		Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	got := map[string]Leftover{}
	for _, l := range found {
		rel, err := filepath.Rel(home, l.File)
		require.NoError(t, err)
		_, dup := got[rel]
		require.False(t, dup, "one line per file here: %+v", found)
		got[rel] = l
	}
	assert.Len(t, got, 5, "%+v", found)

	npm := got[".npmrc"]
	assert.Equal(t, 2, npm.Line)
	assert.Equal(t, "script-shell="+shims+"/bash", npm.Text)
	assert.Equal(t, "run npm config delete script-shell", npm.Fix)

	assert.Equal(t, 2, got[".bashrc"].Line, "~/… names the shims too")
	assert.Contains(t, got[".bashrc"].Fix, "remove or change the line")
	assert.Equal(t, 1, got[".profile"].Line, "${HOME}/… names them too")
	assert.NotContains(t, got[".profile"].Text, "\x1b", "control characters are not printed")
	assert.Contains(t, got[".codex/hooks.json"].Fix, "execgate setup codex")
	assert.Contains(t, got[".config/systemd/user/execgate-hub.service"].Fix, "systemctl --user disable --now execgate-hub")
	for _, clean := range []string{".zshrc", ".gemini/settings.json"} {
		assert.NotContains(t, got, clean, "another execgate, or no path at all, is not this one")
	}
}

// TestLeftoversUnreadable: a file that might name execgate but cannot be
// read is reported, not taken for clean.
func TestLeftoversUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	home := t.TempDir()
	npmrc := filepath.Join(home, ".npmrc")
	require.NoError(t, os.WriteFile(npmrc, []byte("script-shell=/x\n"), 0o000))
	found, err := Leftovers(Options{Exe: "/opt/execgate/bin/execgate", Home: home, StateDir: filepath.Join(home, "state"),
		Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, npmrc, found[0].File)
	assert.True(t, strings.HasPrefix(found[0].Fix, "could not read it"), found[0].Fix)
}
