package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With the agent's hosts allowed, confined code reaches them through the
// shim's proxy, and a registry takes publishes on the host it serves
// installs from. Code that could read a registry's token from a file (a
// workspace's .npmrc: any script, node x.js, npx npm publish) got that
// route too, and so could publish as the user. It gets no proxy now;
// code in a workspace without such a file still reaches the hosts.
func TestNoProxyWithATokenFileInReach(t *testing.T) {
	requireConfinement(t)
	registry, _ := npmRegistry(t, hostAddr(t), "canarypkg", npmPackage(t, "canarypkg", "module.exports = 1;\n"))
	e := newShimEnv(t, `{"version": 1, "agents": {"*": {"sandbox": {"hosts": ["`+registry+`"]}}}}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "fetch.py"), []byte(`import urllib.request
try:
    print(urllib.request.urlopen("http://`+registry+`/canarypkg", timeout=10).status)
except Exception as e:
    print("refused:", type(e).__name__)
`), 0o644))
	fetch := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "python3 fetch.py"), "")
		require.Equal(t, 0, o.status, "%+v", o)
		return o.stdout
	}
	assert.Equal(t, "200\n", fetch(), "no token file: the allowed host is reached through the proxy")

	require.NoError(t, os.WriteFile(filepath.Join(e.work, ".npmrc"), []byte("//registry.npmjs.org/:_authToken=npm_canary\n"), 0o600))
	assert.Contains(t, fetch(), "refused:", "a token in the workspace's .npmrc: no proxy")

	require.NoError(t, os.Remove(filepath.Join(e.work, ".npmrc")))
	require.NoError(t, os.MkdirAll(filepath.Join(e.work, ".venv"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, ".venv", "pip.conf"), []byte("[global]\nindex-url = https://me:pw@pypi.example/simple\n"), 0o600))
	assert.Contains(t, fetch(), "refused:", "an index password in the virtual environment's pip.conf: no proxy")
}
