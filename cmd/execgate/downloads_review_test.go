package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// npmBinRegistry serves one package, name at 1.0.0, whose program (its
// "bin", named name) is script, as the npm registry does; it records the
// requests it answers, with the token each carried, and accepts any
// publish (PUT).
type npmBinRegistry struct {
	addr string
	mu   sync.Mutex
	seen []string // "METHOD PATH TOKEN"
}

func newNpmBinRegistry(t *testing.T, ip, name, script string) *npmBinRegistry {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	manifest := `{"name": "` + name + `", "version": "1.0.0", "bin": {"` + name + `": "cli.js"}}`
	for _, f := range [][2]string{{"package/package.json", manifest}, {"package/cli.js", script}} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o755, Size: int64(len(f[1])), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(f[1]))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	tgz := buf.Bytes()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	require.NoError(t, err)
	r := &npmBinRegistry{addr: ln.Addr().String()}
	sha1sum, sha512sum := sha1.Sum(tgz), sha512.Sum512(tgz)
	packument, err := json.Marshal(map[string]any{
		"name": name, "dist-tags": map[string]string{"latest": "1.0.0"},
		"versions": map[string]any{"1.0.0": map[string]any{
			"name": name, "version": "1.0.0", "bin": map[string]string{name: "cli.js"},
			"dist": map[string]string{
				"tarball":   "http://" + r.addr + "/" + name + "/-/" + name + "-1.0.0.tgz",
				"shasum":    hex.EncodeToString(sha1sum[:]),
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sha512sum[:]),
			},
		}},
	})
	require.NoError(t, err)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+req.URL.Path+" "+req.Header.Get("Authorization"))
		r.mu.Unlock()
		switch {
		case req.Method == http.MethodPut:
			w.Write([]byte(`{"ok": true}`))
		case req.URL.Path == "/"+name:
			w.Header().Set("Content-Type", "application/json")
			w.Write(packument)
		case req.URL.Path == "/"+name+"/-/"+name+"-1.0.0.tgz":
			w.Write(tgz)
		default:
			http.NotFound(w, req)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return r
}

// requests lists what r was asked, "METHOD PATH TOKEN" each.
func (r *npmBinRegistry) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// npmCanaryScript prints that it ran, with the token it was given.
const npmCanaryScript = "#!/usr/bin/env node\nconsole.log('CANARY RAN token=' + (process.env.NPM_TOKEN || ''));\n"

// npmShimEnv is a shim whose agent allows the npm registry and the
// stand-in for it at r, in a workspace with a package.json, npm pointed
// at r, and the user's npm token, npm_canary, in the environment.
func npmShimEnv(t *testing.T, r *npmBinRegistry) *shimEnv {
	t.Helper()
	e := newShimEnv(t, `{"version": 1, "agents": {"*": {"sandbox": {"hosts": ["registry.npmjs.org", "`+r.addr+`"]}}}}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "package.json"), []byte(`{"name": "ws", "version": "1.0.0"}`), 0o644))
	e.env = append(e.env, "npm_config_registry=http://"+r.addr+"/", "npm_config_audit=false", "npm_config_fund=false",
		"npm_config_update_notifier=false", "PATH=/usr/bin:/bin")
	return e
}

// Only a download the policy judged gets npm's cache of the workspace's
// own: npx, which downloads a package and runs it, is code that runs
// confined like a test, and with the user's npm token in its environment
// what it runs could publish as the user through the proxy. Without a
// cache it can write, npm fetches nothing, as before such caches
// existed.
func TestNpxGetsNoCacheOfItsOwn(t *testing.T) {
	requireConfinement(t)
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	r := newNpmBinRegistry(t, hostAddr(t), "canarybin", npmCanaryScript)
	e := npmShimEnv(t, r)
	e.env = append(e.env, "NPM_TOKEN=npm_canary")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "npx canarybin"), "")
	assert.NotEqual(t, 0, o.status, "%+v", o)
	assert.NotContains(t, o.stdout, "CANARY RAN", "npx ran a package it downloaded, with the user's token in its environment")
	assert.NotContains(t, r.requests(), "GET /canarybin/-/canarybin-1.0.0.tgz ", "npx downloaded the package")
	npx, _ := filepath.Glob(filepath.Join(e.home(), ".cache", "execgate", "npm", "*", "_npx"))
	assert.Empty(t, npx, "npx installed into the workspace's npm cache")
}

// A registry's token in the workspace's .npmrc (gitignored beside
// package.json, as npm's docs suggest for a project's private registry)
// keeps npm install asking, as NPM_TOKEN in the environment does: what
// it installs runs confined but may read the workspace, token included,
// and publish with it through the proxy.
func TestNpmInstallWithTokenInNpmrcAsks(t *testing.T) {
	requireConfinement(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	r := newNpmBinRegistry(t, hostAddr(t), "canarybin", npmCanaryScript)
	e := npmShimEnv(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, os.WriteFile(filepath.Join(e.work, ".npmrc"), []byte("//"+r.addr+"/:_authToken=npm_ws_canary\n"), 0o600))
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "npm install canarybin"), "")
	assert.NotEqual(t, 0, o.status, "%+v", o)
	assert.Contains(t, o.stderr, "execgate: denied: npm install downloads from the npm registry")
	assert.NoDirExists(t, filepath.Join(e.work, "node_modules", "canarybin"))
	assert.Empty(t, r.requests(), "npm reached the registry")
	// Without the token, the same install runs confined.
	require.NoError(t, os.WriteFile(filepath.Join(e.work, ".npmrc"), []byte("save-exact=true\n"), 0o600))
	o = runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "npm install canarybin"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	assert.FileExists(t, filepath.Join(e.work, "node_modules", "canarybin", "cli.js"))
}

// So does npm's token in the environment under a name of npm's
// configuration no list of names holds (npm_config_//HOST/:_authToken,
// which a shell cannot set but passes on): npm authenticates with it,
// and what it installs can read it from npm's environment.
func TestNpmInstallWithTokenInNpmConfigAsks(t *testing.T) {
	requireConfinement(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	r := newNpmBinRegistry(t, hostAddr(t), "canarybin", npmCanaryScript)
	e := npmShimEnv(t, r)
	e.env = append(e.env, "npm_config_//"+r.addr+"/:_authToken=npm_env_canary")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "npm install canarybin"), "")
	assert.NotEqual(t, 0, o.status, "%+v", o)
	assert.Contains(t, o.stderr, "execgate: denied: npm install downloads from the npm registry")
	assert.NoDirExists(t, filepath.Join(e.work, "node_modules", "canarybin"))
	assert.Empty(t, r.requests(), "npm reached the registry")
}
