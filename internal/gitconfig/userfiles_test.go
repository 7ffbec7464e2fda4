package gitconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUserFiles(t *testing.T) {
	home := t.TempDir()
	write := func(rel, body string) string {
		p := filepath.Join(home, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	global := write(".gitconfig", "[include]\n\tpath = ~/.gitconfig.local\n[includeIf \"gitdir:~/work/\"]\n\tpath = dotfiles/work.inc\n[user]\n\tname = x\n")
	local := write(".gitconfig.local", "[include]\n\tpath = nested.inc\n")
	nested := write("nested.inc", "")
	work := write("dotfiles/work.inc", "[user]\n\temail = w@example.com\n")
	xdg := write(".config/git/config", "[core]\n\teditor = vi\n\texcludesFile = ~/.gitignore_global\n\tattributesFile = relative/attrs\n[commit]\n\ttemplate = /etc/commit-template\n")
	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }

	files, err := UserFiles(getenv, "")
	require.NoError(t, err)
	// The files named follow, whether they exist or not (git reads them
	// when they do); a relative name is git's working directory's.
	assert.Equal(t, []string{xdg, global, local, nested, work, filepath.Join(home, ".gitignore_global"), "/etc/commit-template"}, files)

	// GIT_CONFIG_GLOBAL replaces both.
	env["GIT_CONFIG_GLOBAL"] = local
	files, err = UserFiles(getenv, "")
	require.NoError(t, err)
	assert.Equal(t, []string{local, nested}, files)
	delete(env, "GIT_CONFIG_GLOBAL")

	// An include that cannot be read is an error, as it is to git.
	write(".gitconfig", "[include]\n\tpath = ~/missing-dir/\n")
	require.NoError(t, os.Mkdir(filepath.Join(home, "missing-dir"), 0o700))
	_, err = UserFiles(getenv, "")
	assert.Error(t, err)

	// No home, no files.
	files, err = UserFiles(func(string) string { return "" }, "")
	require.NoError(t, err)
	assert.Empty(t, files)
}
