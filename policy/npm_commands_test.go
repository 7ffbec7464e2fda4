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
)

// TestNpmCommandNames: npm's aliases, typos and abbreviations are the
// command npm runs, so a download or an upload under another name is
// one: npm pub publishes, npm inst installs, asking as npm publish and
// npm install do (or, for a download, through the proxy's checks).
func TestNpmCommandNames(t *testing.T) {
	for name, want := range map[string]string{
		"i": "install", "inst": "install", "isntall": "install", "add": "install", "installTest": "install-test",
		"cit": "install-ci-test", "ic": "ci", "install-clean": "ci", "clean-install": "ci", "udpate": "update",
		"upgrade": "update", "pub": "publish", "publi": "publish", "unpub": "unpublish", "dep": "deprecate",
		"own": "owner", "dist-tags": "dist-tag", "ded": "dedupe", "outd": "outdated", "tes": "test",
		"insta": "install", "install-c": "", "in": "install", "pu": "publish", "p": "", "xyz": "", "": "",
	} {
		assert.Equal(t, want, npmCommand(name), name)
	}
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	registries := []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org"}
	needs := func(command string) Needs {
		t.Helper()
		res := e.Evaluate(Request{Command: command, Cwd: testWorkspace, Home: testHome, Policy: pol})
		return NeedsOf(res, testWorkspace, testHome).WithHosts(registries, func(string) string { return "" })
	}
	for _, c := range []string{"npm pub", "npm publ --access public", "npm unpub x@1", "npm dist-tag add x@1 latest",
		"npm owner add u x", "npm deprecate x 'old'", "npm access set status=public x", "npm star x", "npm login",
		"npm inst -g x", "npm isntall --registry=https://r.example x", "npm cit --prefix /tmp/x"} {
		n := needs(c)
		assert.False(t, n.Within(), "%q runs confined: %+v", c, n)
	}
	for _, c := range []string{"npm inst x", "npm in", "npm cit", "npm ic", "npm isntall-clean", "npm udpate", "npm upd", "npm ded"} {
		n := needs(c)
		assert.True(t, n.Proxied, "%q: %+v", c, n)
	}
	// As npm itself resolves them, where npm is installed.
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	list := filepath.Join(filepath.Dir(filepath.Dir(mustEval(t, npm))), "lib", "utils", "cmd-list.js")
	if _, err := os.Stat(list); err != nil {
		t.Skipf("npm's command list is not where npm 11 keeps it: %v", err)
	}
	var names []string
	for name := range npmCommands.all() {
		for i := 1; i <= len(name); i++ {
			names = append(names, name[:i])
		}
	}
	script := `const {deref} = require(process.argv[1]); for (const n of require("fs").readFileSync(0, "utf8").split("\n")) console.log(deref(n) || "")`
	cmd := exec.Command("node", "-e", script, list)
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n"))
	out, err := cmd.Output()
	require.NoError(t, err)
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, got, len(names))
	for i, name := range names {
		assert.Equal(t, got[i], npmCommand(name), "npm %s", name)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	require.NoError(t, err)
	return r
}

// TestNpmValueOptionsMatchNpm: the options npm reads with a value, and
// the shorthands for one, are those of the npm installed, where there is
// one: a flag taken for a value option would make the next word vanish
// from the command (npm --foo publish read as a download), a value option
// taken for a flag would make its value the command.
func TestNpmValueOptionsMatchNpm(t *testing.T) {
	for _, a := range []string{"--loglevel", "-w", "-C", "--reg", "--workspace", "--tag", "--otp", "--logl", "--regi", "--userc"} {
		_, words, _ := npmRead([]string{a, "x", "install"})
		assert.Equal(t, []string{"install"}, words, a)
	}
	for _, a := range []string{"--global", "-g", "-D", "--save", "--audit", "--no-registry", "--loglevel=warn", "install",
		"-", "--foo", "--s", "--glob"} {
		_, words, _ := npmRead([]string{a, "x", "install"})
		assert.NotEqual(t, []string{"install"}, words, a)
	}

	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	defs := filepath.Join(filepath.Dir(filepath.Dir(mustEval(t, npm))), "node_modules", "@npmcli", "config", "lib", "definitions", "index.js")
	if _, err := os.Stat(defs); err != nil {
		t.Skipf("npm's option definitions are not where npm 11 keeps them: %v", err)
	}
	script := `const {definitions, shorthands} = require(process.argv[1]);
const bool = ([, d]) => [].concat(d.type).includes(Boolean);
const vals = Object.entries(definitions).filter(d => !bool(d)).map(([k]) => k);
console.log(vals.sort().join(" "));
console.log(Object.entries(definitions).filter(bool).map(([k]) => k).sort().join(" "));
console.log(Object.entries(shorthands).map(([k, v]) => k + "=" + v.join(" ")).sort().join("\n"));`
	out, err := exec.Command("node", "-e", script, defs).Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Greater(t, len(lines), 3)
	assert.Equal(t, strings.Join(npmValueOptions, " "), lines[0], "npm's value options (update npmValueOptions from npm's definitions)")
	assert.Equal(t, strings.Join(npmFlagOptions, " "), lines[1], "npm's flags (update npmFlagOptions from npm's definitions)")
	var short []string
	for k, v := range npmShorthands.all() {
		short = append(short, k+"="+v)
	}
	assert.ElementsMatch(t, lines[2:], short, "npm's shorthands (update npmShorthands from npm's definitions)")
}

// FuzzNpmRead: no arguments panic or hang npm's reading; a word that is
// no option, before any, stays a word.
func FuzzNpmRead(f *testing.F) {
	for _, s := range []string{"--loglevel", "-w", "--logl", "--no-registry", "install", "--", "-", "--=", "---x", "-=x", "-Dw", "--enj"} {
		f.Add(s, "install")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		_, words, _ := npmRead([]string{a, b})
		if !strings.HasPrefix(a, "-") && (len(words) == 0 || words[0] != a) {
			t.Errorf("%q %q: words %q", a, b, words)
		}
	})
}
