package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIndexCredentialsInPythonConfig: an index URL with a password in it,
// or a client certificate, in a configuration file pip or uv reads (the
// virtual environment's pip.conf, the file PIP_CONFIG_FILE names, the
// user's pip.conf, the project's uv.toml or pyproject.toml) keeps a
// Python download asking, as PIP_INDEX_URL with one does: what it
// installs could read it and upload what it likes. An index without a
// user in it does not.
func TestIndexCredentialsInPythonConfig(t *testing.T) {
	within, write, home, ws := downloadWorld(t, filepath.Join(".venv", "bin"))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config", "pip"), 0o755))
	commands := []string{"pip install requests", ".venv/bin/pip install -e .", "python3 -m pip install -r requirements.txt",
		"uv sync", "uv pip install requests"}
	for _, c := range commands {
		assert.True(t, within(c, nil), "%q with no configuration", c)
	}
	plain := "[global]\nindex-url = https://pypi.org/simple\n"
	for _, f := range []string{filepath.Join(ws, ".venv", "pip.conf"), filepath.Join(home, ".config", "pip", "pip.conf")} {
		write(f, plain)
	}
	write(filepath.Join(ws, "pyproject.toml"), "[[tool.uv.index]]\nname = \"pypi\"\nurl = \"https://pypi.org/simple\"\n")
	for _, c := range commands {
		assert.True(t, within(c, nil), "%q with indexes without a user", c)
	}
	for _, c := range []struct{ file, content string }{
		{filepath.Join(ws, ".venv", "pip.conf"), "[global]\nindex-url = https://me:s3cret@pypi.example/simple\n"},
		{filepath.Join(ws, ".venv", "pip.conf"), "[install]\nextra-index-url =\n    https://pypi.org/simple\n    https://__token__:pypi-x@pypi.example/simple\n"},
		{filepath.Join(ws, ".venv", "pip.conf"), "[global]\nclient-cert = /home/me/client.pem\n"},
		{filepath.Join(home, ".config", "pip", "pip.conf"), "[global]\nindex-url = https://me:s3cret@pypi.example/simple\n"},
		{filepath.Join(ws, "pyproject.toml"), "[[tool.uv.index]]\nname = \"corp\"\nurl = \"https://me:s3cret@pypi.example/simple\"\n"},
		{filepath.Join(ws, "uv.toml"), "index-url = \"https://me:s3cret@pypi.example/simple\"\n"},
	} {
		old, _ := os.ReadFile(c.file)
		write(c.file, c.content)
		for _, command := range commands {
			assert.False(t, within(command, nil), "%q with %q in %s", command, c.content, c.file)
		}
		assert.True(t, within("npm ci", nil), "npm reads no pip.conf")
		if old == nil {
			require.NoError(t, os.Remove(c.file))
		} else {
			write(c.file, string(old))
		}
	}
	ci := filepath.Join(t.TempDir(), "ci-pip.conf")
	write(ci, "[global]\nindex-url = https://me:s3cret@pypi.example/simple\n")
	assert.False(t, within("pip install requests", map[string]string{"PIP_CONFIG_FILE": ci}), "the file PIP_CONFIG_FILE names")
	assert.True(t, within("pip install requests", map[string]string{"PIP_CONFIG_FILE": os.DevNull}), "PIP_CONFIG_FILE=/dev/null reads none")
}

// FuzzIndexFileAuthenticates: no content panics, and an index URL with a
// password added on a line of its own is always found.
func FuzzIndexFileAuthenticates(f *testing.F) {
	for _, s := range []string{"[global]\nindex-url = https://pypi.org/simple\n", "url = \"https://a:b@h/s\"\n", "extra-index-url =\n  x\n", ""} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		p := filepath.Join(dir, "pip.conf")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		indexFileAuthenticates(p)
		require.NoError(t, os.WriteFile(p, []byte(content+"\nindex-url = https://me:pw@pypi.example/simple\n"), 0o600))
		if !indexFileAuthenticates(p) {
			t.Errorf("missed the password after %q", content)
		}
	})
}
