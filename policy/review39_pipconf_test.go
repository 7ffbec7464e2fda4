package policy

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIndexCredentialsHoweverWritten: an index's password in a Python
// configuration file keeps a download asking however the file writes it
// (a TOML inline table or an array over lines, a git source with a
// token) and wherever uv is told to read one (UV_CONFIG_FILE,
// --config-file).
func TestIndexCredentialsHoweverWritten(t *testing.T) {
	within, write, _, ws := downloadWorld(t)
	commands := []string{"uv sync", "uv pip install requests", "pip install requests"}
	for _, content := range []string{
		"[tool.uv]\nindex = [{ name = \"corp\", url = \"https://me:s3cret@pypi.example/simple\" }]\n",
		"[tool.uv]\nindex = [\n  { name = \"corp\", url = \"https://me:s3cret@pypi.example/simple\" },\n]\n",
		"[tool.uv]\nextra-index-url = [\n\"https://me:s3cret@pypi.example/simple\",\n]\n",
		"[tool.uv.sources]\npkg = { git = \"https://ghp_x@github.com/org/pkg\" }\n",
	} {
		write(filepath.Join(ws, "pyproject.toml"), content)
		for _, c := range commands[:2] {
			assert.False(t, within(c, nil), "%q with %q", c, content)
		}
	}
	require.NoError(t, os.Remove(filepath.Join(ws, "pyproject.toml")))
	for _, c := range commands {
		assert.True(t, within(c, nil), "%q with no configuration", c)
	}
	ci := filepath.Join(ws, "ci", "uv.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(ci), 0o755))
	write(ci, "index-url = \"https://me:s3cret@pypi.example/simple\"\n")
	assert.False(t, within("uv sync", map[string]string{"UV_CONFIG_FILE": ci}), "the file UV_CONFIG_FILE names")
	assert.False(t, within("UV_CONFIG_FILE=ci/uv.toml uv sync", nil), "the file UV_CONFIG_FILE names")
	assert.False(t, within("uv sync --config-file ci/uv.toml", nil), "the file --config-file names")
	assert.False(t, within("uv pip install --config-file=ci/uv.toml x", nil), "the file --config-file names")
	assert.True(t, within("uv sync --config-file ci/none.toml", nil), "a file that is not there holds nothing")
}

// TestDownloadConfiguredByTheCommand: a variable the command sets that
// npm, pip or uv reads as an option keeping a download asking (another
// place, index, registry or configuration file) keeps it asking, as the
// option does; the harmless ones (npm_config_audit, PIP_NO_CACHE_DIR) do
// not.
func TestDownloadConfiguredByTheCommand(t *testing.T) {
	within, _, _, _ := downloadWorld(t)
	for _, c := range []string{
		"npm_config_location=global npm install x", "NPM_CONFIG_PREFIX=/opt/x npm install x", "export npm_config_global=true; npm i x",
		"npm_config_userconfig=ci.npmrc npm ci", "env npm_config_registry=http://r.example/ npm ci",
		"PIP_TARGET=/opt/x pip install x", "PIP_USER=1 pip install x", "PIP_FIND_LINKS=https://e.example/ pip install x",
		"PIP_CONFIG_FILE=ci/pip.conf pip install x", "UV_INDEX_CORP_PASSWORD=x uv sync", "UV_SYSTEM_PYTHON=1 uv pip install x",
		`env "npm_config_location=global" npm install x`, `export 'PIP_TARGET=/opt/x'; pip install x`,
	} {
		assert.False(t, within(c, nil), c)
	}
	for _, c := range []string{"npm_config_audit=false npm ci", "PIP_NO_CACHE_DIR=1 pip install x", "PIP_DISABLE_PIP_VERSION_CHECK=1 pip install -r requirements.txt",
		"UV_NO_PROGRESS=1 uv sync", "CI=true npm ci"} {
		assert.True(t, within(c, nil), c)
	}
}

// TestConfigFIFODoesNotHang: a FIFO in place of an .npmrc, a pip.conf or
// a pyproject.toml (confined code may make one in the workspace) fails
// the read at once, and the download asks, instead of holding every later
// npm install or pip install until something writes to it.
func TestConfigFIFODoesNotHang(t *testing.T) {
	within, _, _, ws := downloadWorld(t, filepath.Join(".venv", "bin"))
	for _, c := range []struct{ file, command string }{
		{".npmrc", "npm install"}, {filepath.Join(".venv", "pip.conf"), "pip install requests"}, {"pyproject.toml", "uv sync"},
	} {
		p := filepath.Join(ws, c.file)
		require.NoError(t, syscall.Mkfifo(p, 0o600))
		done := make(chan bool, 1)
		go func() { done <- within(c.command, nil) }()
		select {
		case got := <-done:
			assert.False(t, got, "%q with a FIFO for %s", c.command, c.file)
		case <-time.After(10 * time.Second):
			w, err := os.OpenFile(p, os.O_WRONLY, 0) // let the reader go
			require.NoError(t, err)
			w.Close()
			t.Fatalf("%q hangs on a FIFO for %s", c.command, c.file)
		}
		require.NoError(t, os.Remove(p))
	}
}
