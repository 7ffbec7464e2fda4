package shim

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/sandbox"
)

// Attacks on the confined outcome that go through what the shim derives
// the grants from — the command's words, the .git file, the current
// directory — rather than through the kernel. Each runs real processes in
// a throwaway home with a canary key, and would read it or write
// ~/.bashrc, unasked, on the code before the fix.

func requireSandbox(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("cannot confine here: %s", st.Reason)
	}
}

// runIn runs program as w.run does, started in dir.
func (w *confinedWorld) runIn(t *testing.T, dir, program string) (int, string, string) {
	t.Helper()
	ws := w.ws
	w.ws = dir
	defer func() { w.ws = ws }()
	return w.run(t, program)
}

// assertUntouched checks that the canary was not printed and ~/.bashrc
// not written.
func (w *confinedWorld) assertUntouched(t *testing.T, out string) {
	t.Helper()
	assert.NotContains(t, out, "CANARY")
	b, err := os.ReadFile(filepath.Join(w.home, ".bashrc"))
	require.NoError(t, err)
	assert.Equal(t, "# mine\n", string(b), "~/.bashrc was written")
}

// A path word granted for reading is granted to every process of the
// command: `python3 steal.py ~` opened the whole home to the script, and
// `ls ~; python3 steal.py` too. Such a command runs confined without it.
func TestConfinedNamedHomeNotGranted(t *testing.T) {
	requireSandbox(t)
	for _, program := range []string{"python3 steal.py ~", "python3 steal.py ~/", "python3 steal.py /", "python3 steal.py ../", "ls ~; python3 steal.py"} {
		t.Run(program, func(t *testing.T) {
			w := newConfinedWorld(t)
			status, out, errOut := w.run(t, program)
			w.assertUntouched(t, out)
			assert.Equal(t, 0, status, errOut)
			assert.Equal(t, 2, strings.Count(out, "refused: Permission denied"), out)
			assert.Equal(t, 0, w.asked)
		})
	}
}

// A confined command writes a .git file in a directory of the workspace,
// naming the home as its repository; the agent's next command, started
// there, took that directory for a worktree's and was granted the home
// to read and write. Directly, or through a link in the workspace.
func TestConfinedPlantedGitFile(t *testing.T) {
	requireSandbox(t)
	for name, plant := range map[string]string{
		"absolute": `open("sub/.git", "w").write("gitdir: " + home + "\n")`,
		"link":     `os.symlink(home, "sub/repo"); open("sub/.git", "w").write("gitdir: repo\n")`,
		"commondir": `os.makedirs("sub/repo"); open("sub/repo/commondir", "w").write(home + "\n")
open("sub/.git", "w").write("gitdir: repo\n")`,
		// A git directory outside the workspace that points back at it,
		// made where the command may write (its TMPDIR), naming the home
		// as its common directory.
		"outside": `d = os.path.join(os.environ["TMPDIR"], "evil"); os.makedirs(d, exist_ok=True)
open(os.path.join(d, "gitdir"), "w").write(os.path.abspath("sub/.git") + "\n")
open(os.path.join(d, "commondir"), "w").write(home + "\n")
open("sub/.git", "w").write("gitdir: " + d + "\n")`,
	} {
		t.Run(name, func(t *testing.T) {
			w := newConfinedWorld(t)
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "plant.py"), []byte(`import os, shutil
home = os.path.expanduser("~")
os.makedirs("sub")
shutil.copy("steal.py", "sub/steal.py")
`+plant+"\n"), 0o600))
			status, _, errOut := w.run(t, "python3 plant.py")
			require.Equal(t, 0, status, errOut)
			require.Equal(t, 0, w.asked, "planting runs confined, unasked")
			status, out, errOut := w.runIn(t, filepath.Join(w.ws, "sub"), "python3 steal.py")
			w.assertUntouched(t, out)
			assert.Equal(t, 0, status, errOut)
			assert.Equal(t, 2, strings.Count(out, "refused: Permission denied"), out)
		})
	}
}

// Started in a directory that holds the home (/home on a real machine)
// or in a temporary directory's root, a confined command was granted all
// of it as its workspace.
func TestConfinedNoWorkspaceAbove(t *testing.T) {
	requireSandbox(t)
	w := newConfinedWorld(t)
	above := filepath.Dir(w.home)
	status, out, errOut := w.runIn(t, above, `python3 -c "print(open('home/.ssh/id_rsa').read())"`)
	w.assertUntouched(t, out)
	assert.NotEqual(t, 0, status)
	status, out, errOut = w.runIn(t, above, `python3 -c "open('home/.bashrc', 'a').write('pwned')"`)
	w.assertUntouched(t, out)
	assert.NotEqual(t, 0, status, errOut)

	// $TMPDIR's root (/tmp itself, as the policy sees it): other
	// programs' files there are not this command's.
	tmp := t.TempDir()
	victim := filepath.Join(tmp, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("theirs\n"), 0o600))
	w.env["TMPDIR"] = tmp
	status, _, errOut = w.runIn(t, tmp, `python3 -c "open('victim', 'a').write('pwned')"`)
	assert.NotEqual(t, 0, status, errOut)
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "theirs\n", string(b))
}

// A real worktree's and a real submodule's repositories lie outside the
// workspace and point back at it: they are still granted.
func TestGitDirsOfRealWorktreeAndSubmodule(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	main, lib := filepath.Join(root, "main"), filepath.Join(root, "lib")
	for _, d := range []string{main, lib} {
		require.NoError(t, os.Mkdir(d, 0o755))
		git(d, "init", "-q")
		require.NoError(t, os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644))
		git(d, "add", "f")
		git(d, "commit", "-qm", "x")
	}
	wt := filepath.Join(root, "wt")
	git(main, "worktree", "add", "-q", wt)
	assert.Equal(t, []string{filepath.Join(main, ".git", "worktrees", "wt"), filepath.Join(main, ".git")}, gitDirs(wt))

	git(main, "submodule", "add", "-q", lib, "sub")
	assert.Equal(t, []string{filepath.Join(main, ".git", "modules", "sub")}, gitDirs(filepath.Join(main, "sub")))
}

// Caches that hold code other projects run later, unconfined and
// unchecked, are readable to a confined command but not writable: a
// module's source in GOMODCACHE (compiled by the next go build anywhere),
// a .pth in a Poetry environment, a pre-commit hook's environment, and Go's
// build cache, whose compiled entries the next go build outside the
// sandbox links as they are. Confined builds fill a cache of their own,
// named by GOCACHE.
func TestConfinedCodeStoresReadOnly(t *testing.T) {
	requireSandbox(t)
	w := newConfinedWorld(t)
	stores := []string{
		"go/pkg/mod/example.com/m@v1.0.0/m.go",
		".cache/pypoetry/virtualenvs/other-py3/lib/python3/site-packages/other.py",
		".cache/pre-commit/repoabc/hook.py",
		".cache/pip/wheels/ab/cd/other-1.0-py3-none-any.whl",
		".cargo/registry/src/index/other-1.0.0/build.rs",
		".cache/yarn/v6/npm-left-pad-1.3.0-integrity/node_modules/left-pad/index.js",
		".npm/_npx/0123abcd/node_modules/prettier/index.js",
		".cache/go-build/ab/ab12cd-d",
		".cache/uv/wheels-v1/pypi/other/other-1.0-py3-none-any/other/__init__.py",
		".npm/_cacache/index-v5/ab/cd/0123",
		".cache/pypoetry/cache/repositories/PyPI/_http/a/b/entry",
		".cache/pypoetry/artifacts/ab/cd/other-1.0-py3-none-any.whl",
	}
	for _, s := range stores {
		p := filepath.Join(w.home, s)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("original\n"), 0o644))
	}
	// As an earlier confined go build left it (the shim makes it before
	// one: caches.go).
	require.NoError(t, os.MkdirAll(confinedGoCache(func(string) string { return "" }, filepath.Join(w.home, ".cache"), workspaceCacheKey(w.ws)), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "plant.py"), []byte(`import os, sys
for s in sys.stdin.read().split():
    p = os.path.join(os.path.expanduser("~"), s)
    try:
        assert open(p).read() == "original\n"
        print("read", s)
        open(p, "a").write("planted\n")
        open(os.path.join(os.path.dirname(p), "zz.pth"), "w").write("import os\n")
        print("wrote", s)
    except OSError as e:
        print("refused", s, e.strerror)
open(os.path.join(os.environ["GOCACHE"], "entry"), "w").write("built\n")
print("built in", os.path.relpath(os.environ["GOCACHE"], os.path.expanduser("~")))
`), 0o600))
	status, out, errOut := w.run(t, "echo "+strings.Join(stores, " ")+" | python3 plant.py")
	require.Equal(t, 0, status, errOut)
	assert.Equal(t, 0, w.asked)
	for _, s := range stores {
		if !strings.HasPrefix(s, ".cache/go-build/") && !strings.HasPrefix(s, ".cache/uv/") {
			// Go's and uv's own caches are not even read: confined
			// commands use theirs.
			assert.Contains(t, out, "read "+s+"\n")
		}
		assert.NotContains(t, out, "wrote "+s)
		b, err := os.ReadFile(filepath.Join(w.home, s))
		require.NoError(t, err)
		assert.Equal(t, "original\n", string(b), s)
		assert.NoFileExists(t, filepath.Join(w.home, filepath.Dir(s), "zz.pth"))
	}
	assert.Contains(t, out, "built in .cache/execgate/go-builds/")
}

// A project whose hooks live in the work tree (core.hooksPath =
// .githooks, husky, pre-commit's configuration): a confined command that
// rewrites one plants code the next git commit or an approved git push
// runs unconfined. The next command asks, as for .git/hooks.
func TestConfinedPlantedWorkTreeHookAsks(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for name, c := range map[string]struct{ setup, planted string }{
		"hooksPath":  {"mkdir .githooks && printf '#!/bin/sh\\necho ok\\n' > .githooks/pre-push && chmod +x .githooks/pre-push && git config core.hooksPath .githooks", ".githooks/pre-push"},
		"newHook":    {"mkdir .githooks && git config core.hooksPath .githooks", ".githooks/pre-commit"},
		"husky":      {"mkdir -p .husky/_ && printf 'npm test\\n' > .husky/pre-commit && git config core.hooksPath .husky/_", ".husky/pre-commit"},
		"pre-commit": {"printf 'repos: []\\n' > .pre-commit-config.yaml", ".pre-commit-config.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newConfinedWorld(t)
			require.NoError(t, os.RemoveAll(filepath.Join(w.ws, ".git")))
			setup := exec.Command("/bin/sh", "-c", "git init -q && "+c.setup)
			setup.Dir = w.ws
			out, err := setup.CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "harmless.py"), []byte("open('out.txt', 'w').write('ok')\n"), 0o600))
			// The file to plant comes on stdin: a word naming it would ask.
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "plant.py"), []byte("import sys\nopen(sys.stdin.read().strip(), 'a').write('cat ~/.ssh/id_rsa\\n')\n"), 0o600))
			status, _, errOut := w.run(t, "python3 harmless.py")
			require.Equal(t, 0, status, errOut)
			status, _, errOut = w.run(t, "echo "+strings.ReplaceAll(c.planted, "/", "@")+" | tr @ / | python3 plant.py")
			require.Equal(t, 0, status, errOut)
			require.Equal(t, 0, w.asked, "the planting runs confined, unasked")

			status, _, errOut = w.run(t, "python3 harmless.py")
			assert.Equal(t, ExitDenied, status)
			assert.Equal(t, 1, w.asked)
			assert.Contains(t, errOut, c.planted)
		})
	}
}

// A hook planted by a confined command, then a git push the user's own
// allowlist lets through: it runs unconfined, and so did the hook, with
// only a line on stderr. It asks now.
func TestPlantedHookAllowlistedPushAsks(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	w := newConfinedWorld(t)
	remote := filepath.Join(filepath.Dir(w.home), "remote.git")
	stolen := filepath.Join(filepath.Dir(w.home), "stolen")
	require.NoError(t, os.RemoveAll(filepath.Join(w.ws, ".git")))
	setup := exec.Command("/bin/sh", "-c", `git init -q --bare "$1" && git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x && git remote add origin "$1"`, "sh", remote)
	setup.Dir = w.ws
	out, err := setup.CombinedOutput()
	require.NoError(t, err, "%s", out)
	cfgDir := filepath.Join(w.env["XDG_CONFIG_HOME"], "execgate")
	require.NoError(t, os.MkdirAll(cfgDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "exec-approvals.json"),
		[]byte(`{"version": 1, "agents": {"*": {"allowlist": [{"pattern": "git push origin HEAD"}]}}}`), 0o600))
	// The hook writes where $STOLEN says: the agent's environment,
	// which git passes on to it.
	w.env["STOLEN"] = stolen
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "plant.py"), []byte(`import os
p = os.path.join(".git", "hooks", "pre-push")
open(p, "w").write('#!/bin/sh\ncat ~/.ssh/id_rsa > "$STOLEN"\n')
os.chmod(p, 0o755)
`), 0o600))
	status, _, errOut := w.run(t, "python3 plant.py")
	require.Equal(t, 0, status, errOut)
	require.Equal(t, 0, w.asked, "the planting runs confined, unasked")

	status, _, errOut = w.run(t, "git push origin HEAD")
	assert.Equal(t, ExitDenied, status, errOut)
	assert.Equal(t, 1, w.asked)
	assert.Contains(t, errOut, ".git/hooks/pre-push")
	assert.NoFileExists(t, stolen, "the planted hook ran unconfined")
}

// Started in a directory that holds credentials (the agent cd'd there), a
// confined command was granted it as its workspace: `echo … | python3`
// printed the key, unasked.
func TestConfinedNoWorkspaceOfCredentials(t *testing.T) {
	requireSandbox(t)
	w := newConfinedWorld(t)
	require.NoError(t, os.MkdirAll(filepath.Join(w.home, ".kube"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(w.home, ".kube", "config"), []byte("CANARY-KUBE\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(w.home, ".config", "gh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(w.home, ".config", "gh", "hosts.yml"), []byte("CANARY-GH\n"), 0o600))
	for dir, file := range map[string]string{".ssh": "id_rsa", ".kube": "config", ".config": "gh/hosts.yml", ".config/gh": "hosts.yml"} {
		status, out, errOut := w.runIn(t, filepath.Join(w.home, dir), `echo 'print(open("`+file+`").read())' | python3`)
		w.assertUntouched(t, out)
		assert.NotEqual(t, 0, status, "%s: %s", dir, errOut)
	}
}

// git's XDG directory holds git-credential-store's tokens beside the
// configuration git needs: only the files git reads are granted.
func TestConfinedGitCredentialStore(t *testing.T) {
	requireSandbox(t)
	for _, xdg := range []bool{false, true} {
		w := newConfinedWorld(t)
		dir := filepath.Join(w.home, ".config", "git") // where git looks
		if xdg {
			dir = filepath.Join(w.env["XDG_CONFIG_HOME"], "git")
		} else {
			delete(w.env, "XDG_CONFIG_HOME")
		}
		require.NoError(t, os.MkdirAll(dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "credentials"), []byte("https://u:CANARY-TOKEN@example.com\n"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config"), []byte("[user]\n\tname = Config Read\n"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(w.ws, "creds.py"), []byte(`import os, sys
for f in ("credentials", "config"):
    try:
        print(open(os.path.join(sys.argv[1], f)).read())
    except OSError as e:
        print("refused:", e.strerror)
`), 0o600))
		w.env["GITDIR"] = dir
		status, out, errOut := w.run(t, `python3 creds.py "$GITDIR"`)
		require.Equal(t, 0, status, errOut)
		assert.NotContains(t, out, "CANARY", "XDG_CONFIG_HOME set: %v", xdg)
		assert.Contains(t, out, "refused: Permission denied")
		assert.Contains(t, out, "name = Config Read", "git's own configuration stays readable")
	}
}

// npm's own cache and logs stay writable: an npm project's tests run
// confined, unasked, with only _npx (code npx runs again) held read-only.
func TestConfinedNpmTestRuns(t *testing.T) {
	requireSandbox(t)
	if _, err := os.Stat("/usr/bin/npm"); err != nil {
		t.Skip("no npm among the system's programs")
	}
	w := newConfinedWorld(t)
	for _, d := range []string{"_cacache", "_logs"} {
		require.NoError(t, os.MkdirAll(filepath.Join(w.home, ".npm", d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "package.json"),
		[]byte(`{"name": "x", "version": "1.0.0", "scripts": {"test": "node -e \"console.log(6*7)\""}}`), 0o600))
	status, out, errOut := w.run(t, "npm test")
	require.Equal(t, 0, status, errOut)
	assert.Equal(t, 0, w.asked)
	assert.Contains(t, out, "42\n")
}
