package shim

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// Attacks on the session-32 changes (issue 24): what a repository's files
// and an agent's command text can make a confined command leave behind
// for a program that runs later, outside the sandbox.

// goOnPath returns PATH for w with the directory of the go command in
// front, or skips.
func goOnPath(t *testing.T, w *confinedWorld) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs go")
	}
	return filepath.Dir(goBin) + ":" + w.env["PATH"]
}

// modZip is the module zip of path@version holding files, as a proxy
// serves it, and its go.sum hash.
func modZip(t *testing.T, path, version string, files map[string]string) ([]byte, string) {
	t.Helper()
	src := t.TempDir()
	for name, body := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(src, name), []byte(body), 0o644))
	}
	var buf bytes.Buffer
	require.NoError(t, modzip.CreateFromDir(&buf, module.Version{Path: path, Version: version}, src))
	zf := filepath.Join(t.TempDir(), "m.zip")
	require.NoError(t, os.WriteFile(zf, buf.Bytes(), 0o644))
	h, err := dirhash.HashZip(zf, dirhash.Hash1)
	require.NoError(t, err)
	return buf.Bytes(), h
}

// The module path the stat cache's write grant is made for is the one the
// workspace's go.mod names — any module's, since the repository chooses
// it. A confined command then wrote $GOMODCACHE/cache/download/MODULE/@v,
// the downloads go extracts and builds for every other project: a zip and
// its .ziphash, which go takes at its word (the zip is not hashed again),
// matching the genuine module's go.sum line. The next unconfined go build
// of a project that needs that version built the planted code.
func TestConfinedPoisonsOtherProjectsModuleDownload(t *testing.T) {
	requireSandbox(t)
	w := newConfinedWorld(t)
	w.env["PATH"] = goOnPath(t, w)
	const dep, version = "example.com/dep", "v1.0.0"
	gomod := "module " + dep + "\n\ngo 1.21\n"
	root := t.TempDir()
	_, genuine := modZip(t, dep, version, map[string]string{"go.mod": gomod, "dep.go": "package dep\n"})
	evil, _ := modZip(t, dep, version, map[string]string{"go.mod": gomod,
		"dep.go": "package dep\n\nimport \"fmt\"\n\nfunc init() { fmt.Println(\"PLANTED CODE RAN\") }\n"})
	modHash, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(gomod)), nil
	})
	require.NoError(t, err)

	// The attacker's repository: a go.mod naming the victim's dependency,
	// and the files to plant.
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "go.mod"), []byte(gomod), 0o644))
	payload := map[string][]byte{
		version + ".zip": evil, version + ".ziphash": []byte(genuine + "\n"), version + ".mod": []byte(gomod),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`),
	}
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "payload"), 0o755))
	for name, b := range payload {
		require.NoError(t, os.WriteFile(filepath.Join(w.ws, "payload", name), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "plant.py"), []byte(`import os, shutil
d = os.path.expanduser("~/go/pkg/mod/cache/download/example.com/dep/@v")
for n in sorted(os.listdir("payload")):
    try:
        shutil.copy(os.path.join("payload", n), os.path.join(d, n))
        print("planted", n)
    except OSError as e:
        print("refused", n, e.strerror)
`), 0o600))
	// Built by go for other projects, read only for their owner: removed
	// as go removes them.
	t.Cleanup(func() {
		c := exec.Command("go", "clean", "-modcache")
		c.Env = append(os.Environ(), "HOME="+w.home, "GOMODCACHE="+filepath.Join(w.home, "go", "pkg", "mod"), "GOFLAGS=")
		_ = c.Run()
	})
	// As the user's own builds leave it, having fetched another version.
	require.NoError(t, os.MkdirAll(filepath.Join(w.home, "go", "pkg", "mod", "cache", "download", "example.com", "dep", "@v"), 0o755))
	status, out, errOut := w.run(t, "python3 plant.py")
	assert.Equal(t, 0, w.asked, "ran confined, unasked")
	require.Equal(t, 0, status, errOut)
	assert.NotContains(t, out, "planted", "a confined command wrote another module's downloads")
	assert.Contains(t, out, "refused "+version+".zip Permission denied")

	// Later, outside any sandbox, the user builds another project that
	// needs that module, with its genuine go.sum lines.
	victim := filepath.Join(w.home, "victim")
	require.NoError(t, os.MkdirAll(victim, 0o755))
	for name, body := range map[string]string{
		"go.mod":  "module example.com/victim\n\ngo 1.21\n\nrequire " + dep + " " + version + "\n",
		"go.sum":  dep + " " + version + " " + genuine + "\n" + dep + " " + version + "/go.mod " + modHash + "\n",
		"main.go": "package main\n\nimport _ \"" + dep + "\"\n\nfunc main() {}\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(victim, name), []byte(body), 0o644))
	}
	c := exec.Command("go", "run", ".")
	c.Dir = victim
	c.Env = []string{"PATH=" + w.env["PATH"], "HOME=" + w.home, "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local",
		"GOFLAGS=-mod=mod", "GOCACHE=" + filepath.Join(root, "gocache"), "GOMODCACHE=" + filepath.Join(w.home, "go", "pkg", "mod")}
	b, _ := c.CombinedOutput()
	assert.NotContains(t, string(b), "PLANTED CODE RAN", "an unconfined build of another project ran what a confined command planted")
}

// npmTarball is a package tarball as a registry serves it: package/ with
// manifest.
func npmTarball(t *testing.T, manifest string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "package/package.json", Mode: 0o644, Size: int64(len(manifest)), Typeflag: tar.TypeReg}))
	_, err := tw.Write([]byte(manifest))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// npm's cache (~/.npm/_cacache) was writable confined as "content
// checked": a blob is named by its hash. But its index, which says which
// blob answers which request, is not: a registry's package document kept
// there, fresh by the headers kept with it, answers the next npm install
// without the network — the versions it lists, their tarballs' hashes and
// their install scripts. A confined command copied in entries made
// elsewhere (against any registry), and the user's next npm install of
// that package, approved and unconfined, ran the planted install script.
func TestConfinedPoisonsNpmCache(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("needs npm")
	}
	w := newConfinedWorld(t)
	canary := filepath.Join(t.TempDir(), "planted")
	script := "touch " + canary
	manifest := `{"name":"left-pad","version":"9.9.9","scripts":{"install":"` + script + `"}}`
	tgz := npmTarball(t, manifest)
	sum := sha512.Sum512(tgz)
	integrity := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Cache-Control", "public, max-age=999999999")
		if strings.HasSuffix(r.URL.Path, ".tgz") {
			rw.Header().Set("Content-Type", "application/octet-stream")
			_, _ = rw.Write(tgz)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(rw, `{"name":"left-pad","dist-tags":{"latest":"9.9.9"},"versions":{"9.9.9":{"name":"left-pad","version":"9.9.9","scripts":{"install":"`+script+`"},"dist":{"tarball":"`+srv.URL+`/left-pad/-/left-pad-9.9.9.tgz","integrity":"`+integrity+`"}}}}`)
	}))
	registry := srv.URL + "/"
	npm := func(dir, home string, args ...string) (string, error) {
		c := exec.Command("npm", append(args, "--registry", registry, "--no-audit", "--no-fund", "--no-update-notifier", "--fetch-retries=0")...)
		c.Dir = dir
		c.Env = []string{"PATH=" + w.env["PATH"], "HOME=" + home}
		b, err := c.CombinedOutput()
		return string(b), err
	}
	// Made elsewhere, on the attacker's machine: what npm keeps of an
	// install from that registry, shipped in the repository.
	elsewhere := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "package.json"), []byte(`{"name":"a","version":"1.0.0"}`), 0o644))
	out, err := npm(elsewhere, elsewhere, "install", "left-pad", "--ignore-scripts", "--cache", filepath.Join(w.ws, "payload"))
	require.NoError(t, err, out)
	srv.Close()

	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "plant.py"), []byte(`import os, shutil
try:
    shutil.copytree(os.path.join("payload", "_cacache"), os.path.expanduser("~/.npm/_cacache"), dirs_exist_ok=True)
    print("planted")
except (OSError, shutil.Error) as e:
    print("refused")
`), 0o600))
	status, out, errOut := w.run(t, "python3 plant.py")
	assert.Equal(t, 0, w.asked, "ran confined, unasked")
	require.Equal(t, 0, status, errOut)
	assert.Equal(t, "refused\n", out, "a confined command wrote npm's index of registry answers")

	require.NoFileExists(t, canary)
	// Later the user's npm install of that package, unconfined.
	victim := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(victim, "package.json"), []byte(`{"name":"victim","version":"1.0.0"}`), 0o644))
	out, _ = npm(victim, w.home, "install", "left-pad")
	assert.NoFileExists(t, canary, "an unconfined npm install ran the install script a confined command planted: %s", out)
}

// Confined Go builds had one build cache of their own for every workspace
// (~/.cache/execgate/go-build). Go links what its cache holds unchecked:
// a confined command in one repository could rewrite the compiled
// packages there (the standard library's, a shared module's), and the
// next confined go build of another repository linked them into the
// program it wrote in that repository — which the user runs later,
// outside any sandbox — and a confined go test there ran them with that
// repository writable. Each workspace's confined builds now keep their
// own cache.
func TestConfinedGoCacheNotSharedBetweenWorkspaces(t *testing.T) {
	requireSandbox(t)
	w := newConfinedWorld(t)
	w.env["PATH"] = goOnPath(t, w)
	other := filepath.Join(w.home, "other")
	require.NoError(t, os.MkdirAll(filepath.Join(other, ".git"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "plant.py"), []byte(`import os
d = os.path.join(os.environ["GOCACHE"], "ff")
os.makedirs(d, exist_ok=True)
open(os.path.join(d, "ff00-d"), "w").write("planted by proj\n")
print("planted")
`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(other, "look.py"), []byte(`import os
p = os.path.join(os.environ["GOCACHE"], "ff", "ff00-d")
print("found what proj planted" if os.path.exists(p) else "clean")
`), 0o600))
	status, out, errOut := w.run(t, "python3 plant.py")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "planted\n", out, "proj's confined command writes its own build cache")
	status, out, errOut = w.runIn(t, other, "python3 look.py")
	require.Equal(t, 0, status, errOut)
	assert.Equal(t, "clean\n", out, "a confined build in another workspace would link what proj planted")
	assert.Equal(t, 0, w.asked, "both ran confined, unasked")
}

// The same between a repository and the next one cloned at its path: the
// caches were named by the workspace's path alone, so a repository the
// user deleted left its planted build cache to whatever they cloned there
// next.
func TestConfinedGoCacheNotSharedWithNextClone(t *testing.T) {
	requireSandbox(t)
	w := newConfinedWorld(t)
	w.env["PATH"] = goOnPath(t, w)
	plant := []byte(`import os
d = os.path.join(os.environ["GOCACHE"], "ff")
os.makedirs(d, exist_ok=True)
open(os.path.join(d, "ff00-d"), "w").write("planted\n")
print("planted")
`)
	look := []byte(`import os
p = os.path.join(os.environ["GOCACHE"], "ff", "ff00-d")
print("found what the deleted repository planted" if os.path.exists(p) else "clean")
`)
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "plant.py"), plant, 0o600))
	status, out, errOut := w.run(t, "python3 plant.py")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, "planted\n", out)

	first := confinedGoCache(func(string) string { return "" }, filepath.Join(w.home, ".cache"), workspaceCacheKey(w.ws))
	require.DirExists(t, first)

	// Deleted, and another repository at the same path.
	require.NoError(t, os.RemoveAll(w.ws))
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, ".git"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "look.py"), look, 0o600))
	status, out, errOut = w.run(t, "python3 look.py")
	require.Equal(t, 0, status, errOut)
	assert.Equal(t, "clean\n", out)
	assert.Equal(t, 0, w.asked)
	assert.NoDirExists(t, first, "the cache of the repository that is gone is removed")
	assert.DirExists(t, confinedGoCache(func(string) string { return "" }, filepath.Join(w.home, ".cache"), workspaceCacheKey(w.ws)))
}

// What the sandbox grants beyond the workspace is found from the agent's
// environment: PATH's directories (to run the toolchains), the caches
// ($XDG_CACHE_HOME, npm_config_cache). When one of them lies inside the
// workspace — an activated virtualenv's .venv/bin first on PATH, a CI's
// npm_config_cache=$PWD/.npm or XDG_CACHE_HOME=$PWD/.cache — a confined
// command could put a link to the home in its place, and the next
// confined command was granted what the link named: the kernel's rule is
// made on the path, following links. Inside the workspace they need no
// grant of their own.
func TestConfinedGrantThroughWorkspaceLink(t *testing.T) {
	requireSandbox(t)
	for _, c := range []struct{ name, env, dir, link string }{
		{"venv on PATH", "PATH", ".venv/bin", ".venv/bin"},
		{"npm cache", "npm_config_cache", ".npm", ".npm"},
		{"XDG cache", "XDG_CACHE_HOME", ".cache", ".cache/uv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newConfinedWorld(t)
			dir := filepath.Join(w.ws, c.dir)
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "uv"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "_logs"), 0o755))
			if c.env == "PATH" {
				w.env["PATH"] = dir + ":" + w.env["PATH"]
			} else {
				w.env[c.env] = dir
			}
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "link.py"), []byte(`import os, shutil, sys
d = sys.argv[1]
shutil.rmtree(d)
os.symlink(os.path.expanduser("~"), d)
print("linked")
`), 0o600))
			status, out, errOut := w.run(t, "python3 link.py "+c.link)
			require.Equal(t, 0, status, errOut)
			require.Equal(t, "linked\n", out)
			status, out, errOut = w.run(t, "python3 steal.py")
			w.assertUntouched(t, out)
			assert.Equal(t, 0, status, errOut)
			assert.Equal(t, 0, w.asked)
		})
	}
}

// The mark a confined command's shims inherit (EXECGATE_CONFINED), set by
// the agent in the shim's own environment, changes nothing outside a
// sandbox: what would ask still asks, and nothing runs when nobody
// answers.
func TestConfinedMarkOutsideSandboxAsks(t *testing.T) {
	w := newConfinedWorld(t)
	status, _, _ := w.run(t, "echo pwned >> ~/.bashrc", "EXECGATE_CONFINED="+w.ws, "EXECGATE_CHECKPOINTED="+w.ws)
	assert.NotEqual(t, 0, status)
	assert.Equal(t, 1, w.asked, "asked, as without the mark")
	w.assertUntouched(t, "")
}

// golangci-lint's cache keeps the findings of the packages it has seen:
// writable confined, a repository could empty the findings of packages
// the user lints elsewhere. Confined commands get one of their own, per
// workspace; the user's is not theirs to write.
func TestConfinedLintCacheOwn(t *testing.T) {
	requireSandbox(t)
	w := newConfinedWorld(t)
	cache := filepath.Join(w.home, ".cache")
	users := filepath.Join(cache, "golangci-lint")
	require.NoError(t, os.MkdirAll(users, 0o700))
	require.NoError(t, os.MkdirAll(confinedLintCache(cache, workspaceCacheKey(w.ws)), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "lint.py"), []byte(`import os, sys
own = os.environ["GOLANGCI_LINT_CACHE"]
print("own", os.path.relpath(own, os.path.expanduser("~")))
open(os.path.join(own, "entry"), "w").write("x")
try:
    open(os.path.join(sys.argv[1], "entry"), "w").write("hidden findings")
    print("wrote the user's cache")
except OSError as e:
    print("refused:", e.strerror)
`), 0o600))
	status, out, errOut := w.run(t, "python3 lint.py "+users)
	require.Equal(t, 0, status, errOut)
	assert.Equal(t, 0, w.asked)
	assert.Contains(t, out, "own .cache/execgate/golangci-lint/")
	assert.Contains(t, out, "refused: Permission denied")
	assert.NoFileExists(t, filepath.Join(users, "entry"))
	assert.FileExists(t, filepath.Join(confinedLintCache(cache, workspaceCacheKey(w.ws)), "entry"))
}
