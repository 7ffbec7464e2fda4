package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNpmrcNamesAnotherConfig: an .npmrc npm reads may name the user's or
// the global configuration file (userconfig=, globalconfig=), whose token
// npm then sends: a download with a token there asks, as with one in the
// .npmrc itself (checked with npm 11: npm config list shows the token).
func TestNpmrcNamesAnotherConfig(t *testing.T) {
	within, write, _, ws := downloadWorld(t, "sub")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	write(filepath.Join(ws, "sub", "u.npmrc"), "//registry.npmjs.org/:_authToken=npm_canary\n")
	write(filepath.Join(ws, "sub", "plain.npmrc"), "loglevel=warn\n")
	for _, rc := range []string{"userconfig=sub/u.npmrc\n", "globalconfig = " + filepath.Join(ws, "sub", "u.npmrc") + "\n",
		"userconfig=${RC}\n", "userconfig=sub/plain.npmrc\n; chained\n", "\"userconfig\"=sub/u.npmrc\n"} {
		write(filepath.Join(ws, ".npmrc"), rc)
		if rc == "userconfig=sub/plain.npmrc\n; chained\n" {
			write(filepath.Join(ws, "sub", "plain.npmrc"), "globalconfig=sub/u.npmrc\n")
		}
		assert.False(t, within("npm install", nil), "npm install with .npmrc %q", rc)
	}
	write(filepath.Join(ws, "sub", "plain.npmrc"), "loglevel=warn\n")
	write(filepath.Join(ws, ".npmrc"), "userconfig=sub/plain.npmrc\n")
	assert.True(t, within("npm install", nil), "a configuration without a token")
}
