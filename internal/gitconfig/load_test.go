package gitconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testEnv is a hermetic environment for the real git: its own HOME, no
// system file.
type testEnv map[string]string

func newTestEnv(t *testing.T) testEnv {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	return testEnv{"HOME": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.Getenv("PATH")}
}

func (e testEnv) get(k string) string { return e[k] }

func (e testEnv) git(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	for k, v := range e {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (e testEnv) mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := e.git(t, dir, args...)
	require.NoError(t, err, "git %v: %s", args, out)
	return out
}

// TestParseParametersFromGit: GIT_CONFIG_PARAMETERS as git itself writes
// it for its children (read back through an alias that prints it) parses
// to the -c options given.
func TestParseParametersFromGit(t *testing.T) {
	env := newTestEnv(t)
	dir := t.TempDir()
	out := env.mustGit(t, dir, "-c", "a.b=x y", "-c", "c.D=it's", "-c", "e.f", "-c", "g.h=", "-c", "s.Sub.k=!bang", "-c", "alias.pp=!printenv GIT_CONFIG_PARAMETERS", "pp")
	params, err := parseParameters(strings.TrimRight(out, "\n"))
	require.NoError(t, err, "%q", out)
	var got []string
	for _, p := range params {
		n, err := canonicalName(p.Name)
		require.NoError(t, err)
		if p.NoValue {
			got = append(got, n)
		} else {
			got = append(got, n+"="+p.Value)
		}
	}
	assert.Equal(t, []string{"a.b=x y", "c.d=it's", "e.f", "g.h=", "s.Sub.k=!bang", "alias.pp=!printenv GIT_CONFIG_PARAMETERS"}, got)
	for _, bad := range []string{"'a", "x", "'a'x", "'a'='b", "'a'='b'x"} {
		_, err := parseParameters(bad)
		assert.Error(t, err, bad)
	}
}

// FuzzParseParameters: no input panics.
func FuzzParseParameters(f *testing.F) {
	f.Add(`'a.b'='c' 'd.e=f' 'x.y'=`)
	f.Add(`'a'\''b'='c'\!'d'`)
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseParameters(s)
	})
}

// TestDiscoverAgainstGit: the repository discovery finds is the one the
// real git uses (git rev-parse --absolute-git-dir), over layouts that
// take git's discovery paths: nested repositories, an invalid .git
// directory git walks past, a .git file, a linked worktree, a bare
// repository, GIT_DIR, GIT_CEILING_DIRECTORIES.
func TestDiscoverAgainstGit(t *testing.T) {
	env := newTestEnv(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	mk := func(p string) string {
		p = filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(p, 0o755))
		return p
	}
	outer := mk("outer")
	env.mustGit(t, outer, "init", "-q")
	inner := mk("outer/a/inner")
	env.mustGit(t, inner, "init", "-q")
	mk("outer/a/inner/deep/er")
	bogus := mk("outer/b/.git") // not a repository: git walks past it
	require.NoError(t, os.WriteFile(filepath.Join(bogus, "HEAD"), []byte("junk\n"), 0o644))
	mk("outer/b/c")
	sep := filepath.Join(root, "sep.git")
	env.mustGit(t, root, "init", "-q", "--separate-git-dir", sep, filepath.Join(root, "sepwt"))
	mk("sepwt/x")
	env.mustGit(t, outer, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x")
	env.mustGit(t, outer, "worktree", "add", "-q", filepath.Join(root, "linked"))
	bare := filepath.Join(root, "bare.git")
	env.mustGit(t, root, "init", "-q", "--bare", bare)
	mk("bare.git/objects/xx")
	mk("none/here")

	cases := []struct {
		dir   string
		extra testEnv
	}{
		{outer, nil}, {filepath.Join(root, "outer/a"), nil}, {inner, nil}, {filepath.Join(inner, "deep/er"), nil},
		{filepath.Join(root, "outer/b"), nil}, {filepath.Join(root, "outer/b/c"), nil},
		{filepath.Join(root, "sepwt/x"), nil}, {filepath.Join(root, "linked"), nil},
		{bare, nil}, {filepath.Join(bare, "objects/xx"), nil}, {filepath.Join(root, "none/here"), nil},
		{filepath.Join(inner, "deep/er"), testEnv{"GIT_CEILING_DIRECTORIES": inner}},
		{filepath.Join(root, "none/here"), testEnv{"GIT_DIR": filepath.Join(outer, ".git")}},
		{filepath.Join(root, "outer/a"), testEnv{"GIT_DIR": "inner/.git"}},
	}
	for _, c := range cases {
		e := testEnv{}
		for k, v := range env {
			e[k] = v
		}
		for k, v := range c.extra {
			e[k] = v
		}
		out, gitErr := e.git(t, c.dir, "rev-parse", "--absolute-git-dir")
		r, err := discover(c.dir, e.get)
		if gitErr != nil {
			assert.True(t, err != nil || r.GitDir == "", "%s %v: git finds none (%s), discover finds %s", c.dir, c.extra, out, r.GitDir)
			continue
		}
		require.NoError(t, err, "%s %v", c.dir, c.extra)
		assert.Equal(t, strings.TrimSpace(out), r.GitDir, "%s %v", c.dir, c.extra)
	}
	// The linked worktree's shared parts are the main repository's.
	r, err := discover(filepath.Join(root, "linked"), env.get)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(outer, ".git"), r.CommonDir)
}

// TestLoadSources: every place git reads configuration from is read, in
// git's order, with file and line.
func TestLoadSources(t *testing.T) {
	env := newTestEnv(t)
	repo := t.TempDir()
	env.mustGit(t, repo, "init", "-q")
	home := env["HOME"]
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write(filepath.Join(home, ".gitconfig"), "[x]\n\tglobal = 1\n[include]\n\tpath = ~/inc/one.cfg\n")
	write(filepath.Join(home, "inc/one.cfg"), "\n[x]\n\tone = 1\n[include]\n\tpath = two.cfg\n")
	write(filepath.Join(home, "inc/two.cfg"), "[x]\n\ttwo = 2\n")
	write(filepath.Join(home, ".config/git/config"), "[x]\n\txdg = 1\n")
	env.mustGit(t, repo, "config", "x.local", "1")
	write(filepath.Join(repo, ".git/config.worktree"), "[x]\n\tworktree = 1\n")
	write(filepath.Join(repo, ".git/modules/a/b/HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(repo, ".git/modules/a/b/config"), "[x]\n\tmodule = 1\n")
	e := testEnv{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "X.Env", "GIT_CONFIG_VALUE_0": "1",
		"GIT_CONFIG_PARAMETERS": "'x.params'='1'"}
	c, err := Load(Options{Dir: filepath.Join(repo), Getenv: e.get, Params: []Param{{Name: "x.Cmd", Value: "1"}}})
	require.NoError(t, err)
	var got []string
	for _, en := range c.Entries {
		if en.Section() == "x" {
			got = append(got, en.Key()+"@"+strings.TrimPrefix(en.Where(), home))
		}
	}
	assert.Equal(t, []string{
		"xdg@/.config/git/config:2", "global@/.gitconfig:2", "one@/inc/one.cfg:3", "two@/inc/two.cfg:2",
		"local@" + filepath.Join(repo, ".git/config") + ":" + localLine(t, repo), "worktree@" + filepath.Join(repo, ".git/config.worktree") + ":2",
		"module@" + filepath.Join(repo, ".git/modules/a/b/config") + ":2",
		"params@GIT_CONFIG_PARAMETERS", "env@GIT_CONFIG_KEY_0", "cmd@the command line (-c)",
	}, got)

	// GIT_CONFIG_GLOBAL replaces both user files.
	e["GIT_CONFIG_GLOBAL"] = filepath.Join(home, "inc/two.cfg")
	c, err = Load(Options{Dir: repo, Getenv: e.get})
	require.NoError(t, err)
	for _, en := range c.Entries {
		assert.NotEqual(t, "x.global", en.Name)
		assert.NotEqual(t, "x.xdg", en.Name)
	}
}

func localLine(t *testing.T, repo string) string {
	b, err := os.ReadFile(filepath.Join(repo, ".git/config"))
	require.NoError(t, err)
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "local") {
			return strconv.Itoa(i + 1)
		}
	}
	return "?"
}

// TestLoadRefuses: what cannot be proven is an error.
func TestLoadRefuses(t *testing.T) {
	env := newTestEnv(t)
	repo := t.TempDir()
	env.mustGit(t, repo, "init", "-q")
	cfg := filepath.Join(repo, ".git", "config")
	for name, extra := range map[string]string{
		"cycle":             "[include]\n\tpath = config\n",
		"relative -c":       "",
		"no value":          "[include]\n\tpath\n",
		"~user":             "[include]\n\tpath = ~root/x\n",
		"syntax":            "[core\n",
		"directory include": "[include]\n\tpath = /\n",
	} {
		t.Run(name, func(t *testing.T) {
			orig, err := os.ReadFile(cfg)
			require.NoError(t, err)
			defer os.WriteFile(cfg, orig, 0o644)
			require.NoError(t, os.WriteFile(cfg, append(orig, extra...), 0o644))
			var params []Param
			if name == "relative -c" {
				params = []Param{{Name: "include.path", Value: "rel.cfg"}}
			}
			_, err = Load(Options{Dir: repo, Getenv: env.get, Params: params})
			assert.Error(t, err)
		})
	}
	_, err := Load(Options{Dir: repo, Getenv: testEnv{"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "a.b"}.get})
	assert.Error(t, err, "GIT_CONFIG_KEY_1 missing")
	_, err = Load(Options{Dir: "relative", Getenv: env.get})
	assert.Error(t, err)
}

// TestURLs pins which credential helpers apply to which URLs, and which
// URLs run a remote helper.
func TestURLs(t *testing.T) {
	assert.True(t, urlMatches("https://example.com", []string{"https://example.com/r.git"}))
	assert.True(t, urlMatches("https://*.example.com", []string{"https://git.example.com/r.git"}))
	assert.False(t, urlMatches("https://*.example.com", []string{"https://example.com/r.git"}))
	assert.False(t, urlMatches("https://example.com", []string{"https://other.com/r.git", "git@example.com:r.git", "/srv/r"}))
	assert.False(t, urlMatches("https://example.com", []string{"http://example.com/r"}))
	assert.False(t, urlMatches("https://example.com:8443", []string{"https://example.com/r"}))
	assert.True(t, urlMatches("https://example.com:443/x", []string{"https://EXAMPLE.com/y"}))
	assert.True(t, urlMatches("not a url", nil), "an unparsable pattern matches")
	assert.True(t, urlMatches("https://example.com", []string{"%zz://x"}), "an unparsable URL matches")
	for u, want := range map[string]bool{
		"ext::sh -c x": true, "foo::bar": true, "gcrypt::https://x": true, "foo://x": true, "s3://b/k": true,
		"https://x/y": false, "ssh://[::1]/r": false, "git@h:r": false, "/srv/r": false, "file:///r": false, "::x": false, "git+ssh://h/r": false,
	} {
		assert.Equal(t, want, remoteHelperURL(u), u)
	}
}
