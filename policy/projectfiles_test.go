package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// projectWorld is a throwaway workspace with a home, a canary that
// records that it ran, and the environment the real programs run with.
type projectWorld struct {
	root, home, ws, log, canary string
	env                         map[string]string
}

func newProjectWorld(t *testing.T) *projectWorld {
	t.Helper()
	root := t.TempDir()
	w := &projectWorld{root: root, home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws"), log: filepath.Join(root, "canary.log")}
	require.NoError(t, os.MkdirAll(w.home, 0o755))
	require.NoError(t, os.MkdirAll(w.ws, 0o755))
	w.canary = filepath.Join(root, "bin", "canary")
	w.file(t, w.canary, "#!/bin/sh\necho \"$0 $*\" >> "+shellQuote(w.log)+"\nif [ $# -gt 0 ]; then exec \"$@\"; fi\n")
	require.NoError(t, os.Chmod(w.canary, 0o755))
	w.env = map[string]string{"HOME": w.home, "PATH": os.Getenv("PATH"), "LANG": "C", "GIT_CONFIG_NOSYSTEM": "1"}
	for _, k := range []string{"RUSTUP_HOME", "CARGO_HOME", "GOROOT", "GOPATH", "GOCACHE", "GOMODCACHE"} {
		if v := os.Getenv(k); v != "" {
			w.env[k] = v
		}
	}
	if os.Getenv("RUSTUP_HOME") == "" {
		if h, err := os.UserHomeDir(); err == nil {
			w.env["RUSTUP_HOME"] = filepath.Join(h, ".rustup")
			w.env["CARGO_HOME"] = filepath.Join(h, ".cargo")
		}
	}
	w.env["GOCACHE"] = filepath.Join(root, "gocache")
	return w
}

func (w *projectWorld) file(t *testing.T, p, content string) {
	t.Helper()
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.ws, p)
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// ran runs argv for real in the workspace and reports whether the canary
// ran (or, with marker, whether that file appeared).
func (w *projectWorld) ran(t *testing.T, argv ...string) bool {
	t.Helper()
	require.NoError(t, os.WriteFile(w.log, nil, 0o644))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = w.ws
	for k, v := range w.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader("")
	out, _ := cmd.CombinedOutput()
	b, err := os.ReadFile(w.log)
	require.NoError(t, err)
	t.Logf("%v: %s", argv, out)
	return len(b) > 0
}

func (w *projectWorld) request(command string) Request {
	return Request{Command: command, Cwd: w.ws, Workspace: w.ws, Home: w.home, Getenv: func(k string) string { return w.env[k] }}
}

func (w *projectWorld) judge(command string) Result {
	e, _ := NewEngine()
	return e.Analyze(w.request(command))
}

// allowedUnder reports whether the command runs under the allowlist
// pattern p (security allowlist, autoAllowSafe).
func (w *projectWorld) allowedUnder(command, p string) bool {
	e, _ := NewEngine()
	req := w.request(command)
	req.Policy = config.BuiltinPolicy()
	req.Allow = pattern.NewMatcher([]pattern.Entry{{Pattern: p}}, nil)
	return e.Evaluate(req).Decision == Allow
}

func need(t *testing.T, programs ...string) {
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s", p)
		}
	}
}

// TestProjectFilesRunCode is the execution test of the other tools whose
// project files run code on a read-only-looking command (issue 22 items 3
// and 5b): each case proves with the real program that the file makes it
// run the canary (or read a secret), then that execgate does not let the
// command through unasked, under the wildcard pattern an approver would
// save either; the same command without the file is the control.
func TestProjectFilesRunCode(t *testing.T) {
	cases := []struct {
		name    string
		need    []string
		setup   func(t *testing.T, w *projectWorld)
		argv    []string
		command string
		pattern string
		safe    bool // the control is safe (else only allowed under pattern)
		key     string
	}{
		{"pytest --version imports conftest.py", []string{"pytest"}, func(t *testing.T, w *projectWorld) {
			w.file(t, "conftest.py", "import subprocess\nsubprocess.run(["+pyQuote(w.canary)+"])\n")
		}, []string{"pytest", "--version"}, "pytest --version", "", false, "workspace"},
		{"man -l follows .so", []string{"man"}, func(t *testing.T, w *projectWorld) {
			w.file(t, filepath.Join(w.home, ".ssh", "id_rsa"), "CANARY-KEY\n")
			w.file(t, "page.1", ".TH X 1\n.SH NAME\nx\n.so "+filepath.Join(w.home, ".ssh", "id_rsa")+"\n")
		}, []string{"man", "-l", "page.1"}, "man -l page.1", "man **", false, ".so"},
		{"go list with GOFLAGS from go env -w", []string{"go"}, func(t *testing.T, w *projectWorld) {
			w.file(t, filepath.Join(w.home, ".config", "go", "env"), "GOFLAGS=-toolexec="+w.canary+" -export\n")
		}, []string{"go", "list", "./..."}, "go list ./...", "", true, "GOFLAGS"},
		{"cargo --version runs the toolchain rust-toolchain.toml names", []string{"cargo", "rustup"}, func(t *testing.T, w *projectWorld) {
			w.file(t, "tc/bin/cargo", "#!/bin/sh\nexec "+w.canary+"\n")
			require.NoError(t, os.Chmod(filepath.Join(w.ws, "tc/bin/cargo"), 0o755))
			w.file(t, "rust-toolchain.toml", "[toolchain]\npath = \""+filepath.Join(w.ws, "tc")+"\"\n")
		}, []string{"cargo", "--version"}, "cargo --version", "", true, "rust-toolchain.toml"},
		{"cargo tree runs the compiler wrapper", []string{"cargo"}, func(t *testing.T, w *projectWorld) {
			w.file(t, ".cargo/config.toml", "[build]\nrustc-wrapper = \""+w.canary+"\"\n")
		}, []string{"cargo", "tree", "--offline"}, "cargo tree --offline", "", true, ".cargo/config.toml"},
		{"npm help opens a browser", []string{"npm"}, func(t *testing.T, w *projectWorld) {
			w.file(t, ".npmrc", "viewer=browser\n")
			w.file(t, "bin2/xdg-open", "#!/bin/sh\nexec "+w.canary+"\n")
			require.NoError(t, os.Chmod(filepath.Join(w.ws, "bin2/xdg-open"), 0o755))
			w.env["PATH"] = filepath.Join(w.ws, "bin2") + ":" + w.env["PATH"]
		}, []string{"npm", "help", "install"}, "npm help install", "", true, "viewer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			need(t, tc.need...)
			clean := newProjectWorld(t)
			prepareProject(t, clean, tc.argv[0])
			w := newProjectWorld(t)
			prepareProject(t, w, tc.argv[0])
			tc.setup(t, w)
			if tc.key == ".so" {
				out, err := exec.Command("man", "-l", filepath.Join(w.ws, "page.1")).CombinedOutput()
				require.NoError(t, err)
				require.Contains(t, string(out), "CANARY-KEY", "man did not follow .so")
			} else {
				require.True(t, w.ran(t, tc.argv...), "the real %s did not run the canary", tc.argv[0])
				require.False(t, clean.ran(t, tc.argv...), "the canary ran without the project file")
			}
			res := w.judge(tc.command)
			assert.NotEqual(t, Safe, res.Risk, "%v", res.Reasons)
			assert.Contains(t, strings.Join(res.Reasons, " | "), tc.key)
			if tc.pattern != "" {
				assert.False(t, w.allowedUnder(tc.command, tc.pattern), "%s covers %s", tc.pattern, tc.command)
			}
			if tc.safe {
				assert.Equal(t, Safe, clean.judge(tc.command).Risk, "%v", clean.judge(tc.command).Reasons)
			}
		})
	}
}

func pyQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// prepareProject makes the workspace a project of the program's kind.
func prepareProject(t *testing.T, w *projectWorld, program string) {
	switch program {
	case "go":
		w.file(t, "go.mod", "module example.com/x\n\ngo 1.21\n")
		w.file(t, "main.go", "package main\n\nfunc main() {}\n")
	case "cargo":
		w.file(t, "Cargo.toml", "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
		w.file(t, "src/main.rs", "fn main() {}\n")
	case "npm":
		w.file(t, "package.json", "{}\n")
	}
}

// TestPatchTargets: a patch that creates a file that runs code later is
// beyond `git **` and `patch **` (executed: git apply wrote .envrc), as is
// one that reaches outside the workspace or creates a symbolic link; a
// patch of ordinary files stays covered.
func TestPatchTargets(t *testing.T) {
	need(t, "git", "patch")
	envrc := "diff --git a/.envrc b/.envrc\nnew file mode 100644\n--- /dev/null\n+++ b/.envrc\n@@ -0,0 +1 @@\n+touch /tmp/pwned\n"
	plain := "diff --git a/src/x.go b/src/x.go\nnew file mode 100644\n--- /dev/null\n+++ b/src/x.go\n@@ -0,0 +1 @@\n+package x\n"
	link := "diff --git a/notes b/notes\nnew file mode 120000\n--- /dev/null\n+++ b/notes\n@@ -0,0 +1 @@\n+../../.ssh/id_rsa\n\\ No newline at end of file\n"
	hook := "--- a/.git/hooks/pre-commit\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+x\n"
	workflow := "--- x/.github/workflows/ci.yml\n+++ y/.github/workflows/ci.yml\n@@ -1 +1 @@\n-a\n+b\n"
	for _, tc := range []struct {
		name, patch, command, pattern string
		allowed                       bool
	}{
		{"git apply creates .envrc", envrc, "git apply p.patch", "git **", false},
		{"patch creates .envrc", envrc, "patch -p1 -i p.patch", "patch **", false},
		{"git apply of a source file", plain, "git apply p.patch", "git **", true},
		{"patch of a source file", plain, "patch -p1 -i p.patch", "patch **", true},
		{"a symbolic link", link, "git apply p.patch", "git **", false},
		{"a hook at another strip level", hook, "patch -p0 -i p.patch", "patch **", false},
		{"a workflow", workflow, "git apply -p1 p.patch", "git **", false},
		{"git am", envrc, "git am p.patch", "git **", false},
		{"check only", envrc, "git apply --check p.patch", "git **", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newProjectWorld(t)
			out, err := exec.Command("git", "init", "-q", w.ws).CombinedOutput()
			require.NoError(t, err, "%s", out)
			w.file(t, "p.patch", tc.patch)
			assert.Equal(t, tc.allowed, w.allowedUnder(tc.command, tc.pattern), "%s under %s: %v", tc.command, tc.pattern, w.judge(tc.command).Reasons)
		})
	}
	t.Run("git apply really writes .envrc", func(t *testing.T) {
		w := newProjectWorld(t)
		out, err := exec.Command("git", "init", "-q", w.ws).CombinedOutput()
		require.NoError(t, err, "%s", out)
		w.file(t, "p.patch", envrc)
		cmd := exec.Command("git", "apply", "p.patch")
		cmd.Dir = w.ws
		out, err = cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.FileExists(t, filepath.Join(w.ws, ".envrc"))
	})
}
