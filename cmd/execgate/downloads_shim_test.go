package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/shim"
)

// wheel is a pure-Python wheel of the package name at version 1.0 whose
// module holds body, made here, offline.
func wheel(t *testing.T, name, body string) []byte {
	t.Helper()
	info := name + "-1.0.dist-info/"
	files := [][2]string{
		{name + "/__init__.py", body},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: execgate-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := z.Create(f[0])
		require.NoError(t, err)
		_, err = w.Write([]byte(f[1]))
		require.NoError(t, err)
		sum := sha256.Sum256([]byte(f[1]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f[0], base64.RawURLEncoding.EncodeToString(sum[:]), len(f[1]))
	}
	record.WriteString(info + "RECORD,,\n")
	w, err := z.Create(info + "RECORD")
	require.NoError(t, err)
	_, err = w.Write([]byte(record.String()))
	require.NoError(t, err)
	require.NoError(t, z.Close())
	return buf.Bytes()
}

// packageIndex serves a PEP 503 simple index holding one wheel, on ip, as
// a registry would; it counts the wheel's downloads.
func packageIndex(t *testing.T, ip, name string, whl []byte) (addr string, downloads *atomic.Int32) {
	t.Helper()
	file := name + "-1.0-py3-none-any.whl"
	downloads = &atomic.Int32{}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/"+name+"/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=600")
		fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"/files/%s\">%s</a></body></html>\n", file, file)
	})
	mux.HandleFunc("/files/"+file, func(w http.ResponseWriter, r *http.Request) {
		downloads.Add(1)
		w.Header().Set("Cache-Control", "max-age=600") // as PyPI's files: pip keeps them
		w.Write(whl)
	})
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	require.NoError(t, err)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), downloads
}

// An agent that allows its registry's hosts has `pip install` run
// unasked, confined: the real pip, in the workspace's virtual
// environment, downloads through the shim's proxy (the index stands in
// for PyPI at an allowed address) into a pip cache of the workspace's
// own, not the user's; the audit log says it was confined and what it
// reached. Without the registry's hosts allowed, the same command asks
// (and, with nobody to ask, is refused, installing nothing).
func TestPipInstallThroughAllowedHosts(t *testing.T) {
	requireConfinement(t)
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import venv, ensurepip").Run(); err != nil {
		t.Skip("needs /usr/bin/python3 with venv and ensurepip")
	}
	ip := hostAddr(t)
	index, downloads := packageIndex(t, ip, "canarypkg", wheel(t, "canarypkg", "VALUE = 42\n"))
	for _, c := range []struct {
		name  string
		hosts string
		runs  bool
	}{
		{"registry allowed", `"pypi.org", "files.pythonhosted.org", "` + index + `"`, true},
		{"registry not allowed", `"` + index + `"`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newShimEnv(t, `{"version": 1, "agents": {"*": {"sandbox": {"hosts": [`+c.hosts+`]}}}}`)
			venv := exec.Command(python, "-m", "venv", ".venv")
			venv.Dir = e.work
			out, err := venv.CombinedOutput()
			require.NoError(t, err, "%s", out)
			e.env = append(e.env, "PIP_INDEX_URL=http://"+index+"/simple/", "PIP_DISABLE_PIP_VERSION_CHECK=1",
				"PIP_NO_INPUT=1", "PIP_TRUSTED_HOST="+ip, "PATH=/usr/bin:/bin")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			before := downloads.Load()
			o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", ".venv/bin/pip install canarypkg"), "")
			check := exec.Command(filepath.Join(e.work, ".venv", "bin", "python"), "-c", "import canarypkg; print(canarypkg.VALUE)")
			check.Dir = e.work
			got, _ := check.Output()
			if !c.runs {
				assert.NotEqual(t, 0, o.status, "%+v", o)
				assert.Equal(t, before, downloads.Load(), "downloaded without its registry allowed")
				assert.NotEqual(t, "42\n", string(got), "installed without its registry allowed")
				return
			}
			require.Equal(t, 0, o.status, "%+v", o)
			assert.Contains(t, o.stdout, "Successfully installed canarypkg-1.0")
			assert.NotContains(t, o.stderr, "cache", "pip had no cache it could write")
			assert.Equal(t, "42\n", string(got))
			assert.Greater(t, downloads.Load(), before, "the wheel came from the index")
			assert.Empty(t, filesUnder(t, filepath.Join(e.home(), ".cache", "pip")), "the user's own pip cache was written")
			// (KEY.workspace beside it says which workspace KEY is.)
			own, _ := filepath.Glob(filepath.Join(e.home(), ".cache", "execgate", "pip", "*"))
			own = slices.DeleteFunc(own, func(p string) bool { return strings.HasSuffix(p, ".workspace") })
			require.Len(t, own, 1)
			assert.NotEmpty(t, filesUnder(t, own[0]), "the workspace's pip cache holds nothing")

			var fin *shim.Event
			l := shim.AuditLog{Path: filepath.Join(e.state, "execgate", "audit.jsonl")}
			require.NoError(t, l.Read(time.Time{}, func(ev shim.Event, _ []byte) error {
				if ev.Event == shim.EventFinished {
					fin = &ev
				}
				return nil
			}))
			require.NotNil(t, fin)
			assert.NotEmpty(t, fin.Confined)
			assert.Equal(t, []string{index}, fin.Hosts)
		})
	}
}

// filesUnder lists the regular files under dir, none when it does not
// exist.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// npmPackage is the tarball of an npm package name at 1.0.0 whose
// index.js is body, made here, offline.
func npmPackage(t *testing.T, name, body string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range [][2]string{
		{"package/package.json", `{"name": "` + name + `", "version": "1.0.0", "main": "index.js"}`},
		{"package/index.js", body},
	} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(f[1]))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// npmRegistry serves one package as the npm registry does (its packument
// and its tarball), on ip; it counts the tarball's downloads.
func npmRegistry(t *testing.T, ip, name string, tgz []byte) (addr string, downloads *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	require.NoError(t, err)
	addr = ln.Addr().String()
	sha1sum := sha1.Sum(tgz)
	sha512sum := sha512.Sum512(tgz)
	packument, err := json.Marshal(map[string]any{
		"name": name, "dist-tags": map[string]string{"latest": "1.0.0"},
		"versions": map[string]any{"1.0.0": map[string]any{
			"name": name, "version": "1.0.0", "main": "index.js",
			"dist": map[string]string{
				"tarball":   "http://" + addr + "/" + name + "/-/" + name + "-1.0.0.tgz",
				"shasum":    hex.EncodeToString(sha1sum[:]),
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sha512sum[:]),
			},
		}},
	})
	require.NoError(t, err)
	downloads = &atomic.Int32{}
	mux := http.NewServeMux()
	mux.HandleFunc("/"+name, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(packument)
	})
	mux.HandleFunc("/"+name+"/-/"+name+"-1.0.0.tgz", func(w http.ResponseWriter, r *http.Request) {
		downloads.Add(1)
		w.Write(tgz)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return addr, downloads
}

// npm's options before its command, with their values, do not hide the
// command: npm --loglevel warn install is the download it is (before, the
// value was taken for the command, and the install ran confined without
// the proxy, and failed).
func TestNpmInstallWithOptionsBeforeTheCommand(t *testing.T) {
	e, downloads := npmWorld(t, "module.exports = 7;\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "npm --loglevel warn install canarypkg"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	assert.EqualValues(t, 1, downloads.Load())
	assert.Equal(t, "7\n", requireCanary(t, e))
}

// npmWorld is a workspace with a package.json whose agent may reach a
// local stand-in for the npm registry, serving canarypkg with source as
// its index.js; downloads counts the tarballs it served.
func npmWorld(t *testing.T, source string) (*shimEnv, *atomic.Int32) {
	t.Helper()
	requireConfinement(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	ip := hostAddr(t)
	registry, downloads := npmRegistry(t, ip, "canarypkg", npmPackage(t, "canarypkg", source))
	e := newShimEnv(t, `{"version": 1, "agents": {"*": {"sandbox": {"hosts": ["registry.npmjs.org", "`+registry+`"]}}}}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "package.json"), []byte(`{"name": "ws", "version": "1.0.0"}`), 0o644))
	e.env = append(e.env, "npm_config_registry=http://"+registry+"/", "npm_config_audit=false", "npm_config_fund=false",
		"npm_config_update_notifier=false", "PATH=/usr/bin:/bin")
	return e, downloads
}

// requireCanary is what node prints of canarypkg installed in e's
// workspace.
func requireCanary(t *testing.T, e *shimEnv) string {
	t.Helper()
	node := exec.Command("node", "-e", "console.log(require('canarypkg'))")
	node.Dir = e.work
	got, err := node.Output()
	require.NoError(t, err)
	return string(got)
}

// The same for npm, which cannot install at all without a cache it can
// write: `npm install` runs confined through the proxy, with a cache of
// the workspace's own; the user's stays as it was.
func TestNpmInstallThroughAllowedHosts(t *testing.T) {
	e, downloads := npmWorld(t, "module.exports = 42;\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "npm install canarypkg"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	assert.EqualValues(t, 1, downloads.Load())
	assert.Equal(t, "42\n", requireCanary(t, e))
	assert.Empty(t, filesUnder(t, filepath.Join(e.home(), ".npm", "_cacache")), "the user's own npm cache was written")
	// With the user's npm token in its environment, what it installs
	// could publish as the user: it asks (nobody here: refused).
	require.NoError(t, os.RemoveAll(filepath.Join(e.work, "node_modules")))
	e.env = append(e.env, "NPM_TOKEN=npm_canary")
	o = runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "npm install canarypkg"), "")
	assert.NotEqual(t, 0, o.status, "%+v", o)
	assert.Contains(t, o.stderr, "execgate: denied: npm install downloads from the npm registry")
	assert.EqualValues(t, 1, downloads.Load(), "downloaded with a token in its environment")
	own, _ := filepath.Glob(filepath.Join(e.home(), ".cache", "execgate", "npm", "*", "_cacache"))
	require.Len(t, own, 1, "the workspace's npm cache")
	assert.NotEmpty(t, filesUnder(t, own[0]))
}

// Code that runs confined and reaches the agent's allowed hosts does so
// without the registry tokens of the environment (any npm_config_ auth
// setting included): an allowed registry may take publishes on the host it
// serves installs from. Without allowed hosts (no way out), the
// environment is the command's as under bash; so is every other variable.
func TestConfinedWithProxyGetsNoRegistryToken(t *testing.T) {
	requireConfinement(t)
	script := `import os
print(",".join(os.environ.get(k, "-") for k in ("NPM_TOKEN", "npm_config_//registry.npmjs.org/:_authToken", "TWINE_PASSWORD",
    "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "OTHER")))
`
	for _, c := range []struct {
		config, want string
	}{
		{`{"version": 1, "agents": {"*": {"sandbox": {"hosts": ["registry.npmjs.org"]}}}}`, "-,-,-,-,-,kept\n"},
		{"", "npm_canary,npm_canary2,pypi_canary,gh_canary,aws_canary,kept\n"},
	} {
		e := newShimEnv(t, c.config)
		require.NoError(t, os.WriteFile(filepath.Join(e.work, "env.py"), []byte(script), 0o644))
		e.env = append(e.env, "NPM_TOKEN=npm_canary", "npm_config_//registry.npmjs.org/:_authToken=npm_canary2",
			"TWINE_PASSWORD=pypi_canary", "GITHUB_TOKEN=gh_canary", "AWS_SECRET_ACCESS_KEY=aws_canary", "OTHER=kept")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "python3 env.py"), "")
		cancel()
		require.Equal(t, 0, o.status, "%+v", o)
		assert.Equal(t, c.want, o.stdout, "hosts configured: %v", c.config != "")
	}
}
