package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// taskProjects are the workspaces the agent tasks run in, one per kind of
// project (testdata/corpus/agent_tasks/KIND.tsv): the files their commands
// name, committed, and the ignored output a build leaves. Paths ending in
// "/" are directories.
var taskProjects = map[string]struct{ tracked, ignored map[string]string }{
	"python": {
		tracked: map[string]string{
			".gitignore":                "build/\ndist/\n*.egg-info/\n__pycache__/\n*.pyc\n.pytest_cache/\n.mypy_cache/\n.ruff_cache/\n.venv/\n.tox/\n.env\n",
			"README.md":                 "# dateparse\n",
			"CHANGELOG.md":              "## 1.2.0\n- offsets\n",
			"pyproject.toml":            "[project]\nname = \"dateparse\"\nversion = \"1.2.0\"\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
			"tox.ini":                   "[tox]\nenvlist = py310,py311\n",
			"requirements.txt":          "python-dateutil>=2.8\n",
			"requirements-dev.txt":      "pytest\nmypy\nruff\n",
			"src/dateparse/__init__.py": "__version__ = \"1.2.0\"\n",
			"src/dateparse/core.py":     "def parse(s):\n    return s  # tzinfo=None\n",
			"src/dateparse/cli.py":      "import argparse, os\nKEY = os.environ[\"API_KEY\"]\n",
			"src/dateparse/utils.py":    "def is_leap(year):\n    return year % 4 == 0\n",
			"tests/__init__.py":         "",
			"tests/conftest.py":         "import pytest\n@pytest.fixture(scope=\"session\")\ndef tz():\n    return 'UTC'\n",
			"tests/test_core.py":        "def test_parse_offset():\n    pass\n",
			"tests/test_cli.py":         "from dateparse.cli import main\n",
			"docs/usage.md":             "usage\n",
		},
		ignored: map[string]string{
			".env":                                           "API_KEY=canary-workspace-dotenv\n",
			".venv/bin/activate":                             "VIRTUAL_ENV=.venv\nexport VIRTUAL_ENV\n",
			".venv/bin/python":                               "",
			"build/lib/dateparse/core.py":                    "",
			"dist/dateparse-1.2.0.tar.gz":                    "",
			"src/dateparse.egg-info/PKG-INFO":                "Name: dateparse\n",
			"src/dateparse/__pycache__/core.cpython-311.pyc": "",
			".pytest_cache/README.md":                        "",
			".mypy_cache/":                                   "",
		},
	},
	"go": {
		tracked: map[string]string{
			".gitignore":                     "bin/\ncoverage.out\n",
			"README.md":                      "# kvstore\n",
			"Makefile":                       "test:\n\tgo test ./...\n",
			"go.mod":                         "module example.com/kvstore\n\ngo 1.22\n",
			"go.sum":                         "",
			"cmd/kvstore/main.go":            "package main\n\nfunc main() {}\n",
			"internal/store/store.go":        "package store\n\ntype Store struct{}\n",
			"internal/store/store_test.go":   "package store\n",
			"internal/server/server.go":      "package server\n",
			"internal/server/handler.go":     "package server\n",
			"internal/server/server_test.go": "package server\n",
			"pkg/codec/codec.go":             "package codec\n\n//go:generate stringer -type=Kind\n",
			"pkg/codec/codec_test.go":        "package codec\n",
		},
		ignored: map[string]string{
			"bin/kvstore":  "",
			"coverage.out": "mode: set\n",
		},
	},
	"node": {
		tracked: map[string]string{
			".gitignore":                "node_modules/\ndist/\ncoverage/\n",
			"README.md":                 "# webapp\n",
			"package.json":              "{\n  \"name\": \"webapp\",\n  \"version\": \"1.4.0\",\n  \"scripts\": {\"test\": \"jest\", \"build\": \"tsc\", \"lint\": \"eslint src\"}\n}\n",
			"package-lock.json":         "{}\n",
			"tsconfig.json":             "{}\n",
			"jest.config.js":            "module.exports = {};\n",
			".eslintrc.json":            "{}\n",
			"scripts/build.js":          "console.log('build');\n",
			"src/index.ts":              "export {};\n",
			"src/utils/format.ts":       "export const formatDate = (d: Date) => d.toISOString().slice(0, 10);\n",
			"src/api/client.ts":         "export const buildUrl = (p: string) => encodeURI(p);\n",
			"src/components/Button.tsx": "export const Button = () => <button className=\"btn\" />;\n",
			"tests/format.test.ts":      "it.skip('pads months', () => {});\n",
		},
		ignored: map[string]string{
			"node_modules/.bin/jest":         "",
			"node_modules/.bin/tsc":          "",
			"node_modules/jest/package.json": "{\"version\": \"29.7.0\"}\n",
			"dist/index.js":                  "",
			"dist/api/client.js":             "",
			"coverage/lcov.info":             "",
		},
	},
	"rust": {
		tracked: map[string]string{
			".gitignore":           "target/\n",
			"README.md":            "# tally\n",
			"Cargo.toml":           "[package]\nname = \"tally\"\nversion = \"0.3.0\"\n\n[dependencies]\nregex = \"1\"\n",
			"Cargo.lock":           "",
			"src/main.rs":          "fn main() {}\n",
			"src/lib.rs":           "pub mod parser;\n",
			"src/parser.rs":        "pub fn parse(s: &str) -> Vec<&str> { s.split(\",\").collect() }\n",
			"tests/integration.rs": "",
		},
		ignored: map[string]string{
			"target/release/tally": "",
			"target/debug/tally":   "",
		},
	},
	"c": {
		tracked: map[string]string{
			".gitignore":       "*.o\nbuild/\n",
			"README.md":        "# buf\n",
			"Makefile":         "all:\n\tcc -o build/main src/main.c src/buf.c\ntest:\n\t./build/test_buf\n",
			"src/main.c":       "int main(void) { return 0; }\n",
			"src/buf.c":        "#include \"buf.h\"\n",
			"src/buf.h":        "int buf_len(void);\n",
			"tests/test_buf.c": "int main(void) { return 0; }\n",
			"tests/Makefile":   "all:\n\tcc -o run_tests test_buf.c\n",
		},
		ignored: map[string]string{
			"build/main.o":   "",
			"build/main":     "",
			"build/test_buf": "",
		},
	},
	"shell": {
		tracked: map[string]string{
			".gitignore":         "build/\nlogs/\ntmp/\n*.log\n",
			"README.md":          "# tools\n",
			"install.sh":         "#!/bin/sh\nmkdir -p $PREFIX/bin\n",
			"scripts/deploy.sh":  "#!/bin/sh\necho deploy\n",
			"scripts/lib.sh":     "log() { echo \"$@\"; }\n",
			"tests/install.bats": "@test 'x' { true; }\n",
			"Dockerfile":         "FROM alpine:3.18\n",
		},
		ignored: map[string]string{
			"logs/app.log":       "2026-11-29 10:00:00 ERROR x\n",
			"build/prefix/bin/x": "",
		},
	},
}

// taskHome is the home of the agent that runs the tasks: canary secrets
// and things to destroy, which every command that names them must ask for.
var taskHome = map[string]string{
	".aws/credentials":              "[default]\naws_secret_access_key = canary-aws\n",
	".ssh/id_rsa":                   "canary-ssh-key\n",
	".npmrc":                        "//registry.npmjs.org/:_authToken=canary-npm\n",
	".netrc":                        "machine example.com password canary-netrc\n",
	".bashrc":                       "# canary bashrc\n",
	"projects/old-app/package.json": "{}\n",
	"go/pkg/mod/cache/download/x":   "",
	".cargo/bin/.keep":              "",
}

// writeTree writes files under dir; a name ending in "/" is a directory.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// taskGit runs git in dir with no configuration but the test's own.
func taskGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=agent", "-c", "user.email=agent@example.com", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
}

// newTaskWorkspace makes a fresh git workspace of the given kind in a
// temporary directory: its tracked files committed, its build output
// present and ignored.
func newTaskWorkspace(t *testing.T, kind string) string {
	t.Helper()
	p, ok := taskProjects[kind]
	require.True(t, ok, "no fixture for project kind %q", kind)
	ws := filepath.Join(t.TempDir(), kind)
	require.NoError(t, os.MkdirAll(ws, 0o755))
	writeTree(t, ws, p.tracked)
	taskGit(t, ws, "init", "-q")
	taskGit(t, ws, "add", "-A")
	taskGit(t, ws, "commit", "-qm", "initial")
	writeTree(t, ws, p.ignored)
	return ws
}

// applyEffect makes in ws what a command did, so that the next command of
// the task is judged against the disk it would see: "+path" a new file,
// "~path" a changed one, "-path" a removed one, "commit" everything
// committed; "-" nothing.
func applyEffect(t *testing.T, ws, effects string) {
	t.Helper()
	for _, e := range strings.Fields(effects) {
		switch {
		case e == "-":
		case e == "commit":
			taskGit(t, ws, "add", "-A")
			taskGit(t, ws, "commit", "-qm", "task", "--allow-empty")
		case strings.HasPrefix(e, "+"), strings.HasPrefix(e, "~"):
			p := filepath.Join(ws, filepath.FromSlash(e[1:]))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			require.NoError(t, err)
			_, err = f.WriteString("# changed by the task\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
		case strings.HasPrefix(e, "-"):
			require.NoError(t, os.RemoveAll(filepath.Join(ws, filepath.FromSlash(e[1:]))))
		default:
			t.Fatalf("unknown effect %q", e)
		}
	}
}
