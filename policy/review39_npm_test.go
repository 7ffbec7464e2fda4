package policy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
)

// npmReadings are npm command lines whose words execgate must read as
// npm does: a value npm takes that execgate did not (--browser install,
// -Dw install, --enjoy install, --audit true) made execgate see npm
// install where npm publishes.
var npmReadings = [][]string{
	{"--browser", "install", "publish"}, {"--no-browser", "install", "publish"}, {"-Dw", "install", "publish"},
	{"--enjoy", "install", "publish"}, {"--enj", "install", "publish"}, {"--audit", "true", "publish"},
	{"--yes", "null", "publish"}, {"--color", "always", "publish"}, {"--color", "install", "publish"},
	{"--loglevel", "warn", "install"}, {"--logl", "warn", "install"}, {"-q", "install", "x"}, {"--desc", "install", "publish"},
	{"--C", "/tmp", "install"}, {"-w", "web", "ci"}, {"--ws", "install", "publish"}, {"--global=x", "install"},
	{"--save=true", "install"}, {"-=publish", "install"}, {"--foo", "install", "publish"}, {"--foo=bar", "install"},
	{"--no-yes", "null", "install"}, {"--verb", "install"}, {"-gf", "install", "x"}, {"--", "install", "x"},
	{"--locat", "global", "install", "x"}, {"--reg", "x", "install"}, {"-local", "install"}, {"--porc", "install"},
	{"install", "--browser", "x", "y"}, {"--browser", "-g", "install"}, {"--browser", "--x", "install"},
}

// TestNpmReadsAsNpm: execgate reads npm's command line as npm's own
// parser does, where npm is installed; where its reading is not sure,
// the download is no confined one.
func TestNpmReadsAsNpm(t *testing.T) {
	for _, args := range npmReadings {
		if _, words, ok := npmRead(args); ok && len(words) > 0 && words[0] != "install" && words[0] != "ci" {
			_, confined := confinedFetch(append([]string{"npm"}, args...))
			assert.False(t, confined, "npm %q", args)
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	root := filepath.Dir(filepath.Dir(mustEval(t, npm)))
	if _, err := os.Stat(filepath.Join(root, "node_modules", "nopt")); err != nil {
		t.Skipf("npm's parser is not where npm 11 keeps it: %v", err)
	}
	script := `const root = process.argv[1]
const nopt = require(root + "/node_modules/nopt")
const Config = require(root + "/node_modules/@npmcli/config")
const {definitions, shorthands, flatten} = require(root + "/node_modules/@npmcli/config/lib/definitions")
const c = new Config({definitions, shorthands, flatten, npmPath: root, argv: []})
nopt.unknownHandler = false; nopt.abbrevHandler = false; nopt.invalidHandler = () => {}
for (const l of require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean))
  console.log(JSON.stringify(nopt(c.types, c.shorthands, JSON.parse(l), 0).argv.remain))`
	var in strings.Builder
	for _, args := range npmReadings {
		b, _ := json.Marshal(args)
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command("node", "-e", script, root)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(npmReadings))
	for i, args := range npmReadings {
		var want []string
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &want))
		_, words, ok := npmRead(args)
		if !ok {
			_, confined := confinedFetch(append([]string{"npm"}, args...))
			assert.False(t, confined, "npm %q, not read for sure, runs confined", args)
			continue
		}
		if len(want) == 0 {
			want = nil
		}
		assert.Equal(t, want, words, "npm %q", args)
	}
}

// TestNpmElsewhereHoweverSpelled: an npm download that names another
// place, registry or configuration, or a package from GitHub or a path,
// asks, however npm lets the option be spelled; the registry's own
// packages run confined.
func TestNpmElsewhereHoweverSpelled(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	hosts := []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "github.com", "codeload.github.com"}
	needs := func(command string) Needs {
		t.Helper()
		res := e.Evaluate(Request{Command: command, Cwd: testWorkspace, Home: testHome, Policy: pol})
		return NeedsOf(res, testWorkspace, testHome).WithHosts(hosts, func(string) string { return "" })
	}
	for _, c := range []string{
		"npm --browser install publish", "npm --no-browser install publish", "npm -Dw install publish",
		"npm --enjoy install publish", "npm --audit true publish", "npm --yes null publish",
		"npm install --locat global x", "npm install --C web x", "npm install --globalconfig ./rc", "npm install --userc rc",
		"npm install --regis=https://registry.npmjs.org/ x", "npm -L global install x", "npm --no-loglevel publish install",
		"npm install a/b", "npm install a/b#main", "npm i x@github:a/b", "npm i x@a/b", "npm install @scope/a/b",
	} {
		n := needs(c)
		assert.False(t, n.Within(), "%q runs confined through the proxy: %+v", c, n)
	}
	for _, c := range []string{"npm install @types/node", "npm i left-pad@^1.3.0", "npm i x@npm:left-pad@1", "npm install --no-global x",
		"npm --color always install", "npm -w web install x", "npm install --save-dev @scope/pkg@latest"} {
		n := needs(c)
		assert.True(t, n.Within() && n.Proxied, "%q: %+v", c, n)
	}
}
