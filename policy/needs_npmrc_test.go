package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
)

// TestRegistryTokenInNpmrc: a registry's token in an .npmrc the confined
// download may read (the workspace's, one beside package.json in a
// directory it cds to, the user configuration the environment names)
// keeps every download of the command asking, as NPM_TOKEN in its
// environment does: what it installs could read the token and publish.
// An .npmrc that only names a registry, or ~/.npmrc, does not.
func TestRegistryTokenInNpmrc(t *testing.T) {
	within, write, home, ws := downloadWorld(t, "web")
	write(filepath.Join(home, ".npmrc"), "//registry.npmjs.org/:_authToken=npm_home\n")
	commands := []string{"npm ci", "npm install left-pad", "cd web && npm install", "pip install -r requirements.txt && npm ci",
		"pip install requests"}
	for _, c := range commands {
		assert.True(t, within(c, nil), "%q with no token but ~/.npmrc's", c)
	}
	write(filepath.Join(ws, ".npmrc"), "registry=https://registry.npmjs.org/\nsave-exact=true\n")
	for _, c := range commands {
		assert.True(t, within(c, nil), "%q with an .npmrc that only names the registry", c)
	}
	for _, token := range []string{"//registry.npmjs.org/:_authToken=npm_ws", "//registry.npmjs.org/:_authToken=${MY_TOKEN}",
		"_auth = dXNlcjpwYXNz", `"//npm.example.com/:_password"="cA=="`, "//r.example/:keyfile=./key.pem"} {
		write(filepath.Join(ws, ".npmrc"), "registry=https://registry.npmjs.org/\n"+token+"\n")
		for _, c := range commands {
			assert.False(t, within(c, nil), "%q with %s in the workspace's .npmrc", c, token)
		}
	}
	require.NoError(t, os.Remove(filepath.Join(ws, ".npmrc")))
	write(filepath.Join(ws, "web", ".npmrc"), "//registry.npmjs.org/:_authToken=npm_web\n")
	assert.False(t, within("cd web && npm install", nil), "a token in the .npmrc of the directory it cds to")
	assert.True(t, within("npm ci", nil), "web/.npmrc is not npm's here")
	assert.False(t, within(`cd "$DIR" && npm install`, nil), "a directory only known at run time")
	require.NoError(t, os.Remove(filepath.Join(ws, "web", ".npmrc")))
	write(filepath.Join(ws, "ci.npmrc"), "//registry.npmjs.org/:_authToken=npm_ci\n")
	assert.False(t, within("npm ci", map[string]string{"NPM_CONFIG_USERCONFIG": filepath.Join(ws, "ci.npmrc")}),
		"a token in the user configuration the environment names")
}

// TestEnvironCredentials: npm takes any npm_config_ variable, in any
// case, as a setting, a registry's credentials included.
func TestEnvironCredentials(t *testing.T) {
	for _, kv := range []string{"npm_config_//registry.npmjs.org/:_authToken=npm_x", "NPM_CONFIG_//npm.example.com/:_AUTHTOKEN=x",
		"npm_config__auth=dXNlcjpw", "Npm_Config__authToken=x", "npm_config_//r.example/:_password=cA==", "npm_config_keyfile=/k.pem",
		"UV_INDEX_INTERNAL_PASSWORD=pw", "UV_INDEX_CORP_PROXY_USERNAME=me", "NETRC=/work/ci.netrc"} {
		assert.Len(t, EnvironCredentials([]string{"HOME=/h", kv}), 1, kv)
	}
	for _, kv := range []string{"npm_config_registry=https://registry.npmjs.org/", "npm_config_cache=/c", "npm_config_=x",
		"NPM_TOKEN_FILE=x", "npm_config_//registry.npmjs.org/:always-auth=true", "MY_npm_config__auth=x",
		"UV_INDEX_URL=https://pypi.org/simple", "UV_INDEX_STRATEGY=first-index", "UV_INDEX__PASSWORD=x", "NETRC="} {
		assert.Empty(t, EnvironCredentials([]string{kv}), kv)
	}
}

// RegistryTokens finds a registry's token under a listed name, in an
// index URL and under any npm_config_ auth setting, once each.
func TestRegistryTokens(t *testing.T) {
	got := RegistryTokens([]string{"HOME=/h", "NPM_TOKEN=a", "PIP_INDEX_URL=https://u:p@i.example/simple",
		"npm_config_//registry.npmjs.org/:_authToken=b", "npm_config__authToken=c", "UV_INDEX_URL=https://pypi.org/simple"})
	assert.ElementsMatch(t, []string{"NPM_TOKEN", "PIP_INDEX_URL", "npm_config_//registry.npmjs.org/:_authToken", "npm_config__authToken"}, got)
	assert.Empty(t, RegistryTokens([]string{"HOME=/h", "PATH=/bin"}))
}

func TestSecretVariables(t *testing.T) {
	environ := []string{"HOME=/h", "PATH=/bin", "NPM_TOKEN=a", "PIP_INDEX_URL=https://u:p@i.example/simple",
		"GITHUB_TOKEN=b", "AWS_SECRET_ACCESS_KEY=c", "DB_PASSWORD=d", "OPENAI_API_KEY=e", "HF_TOKEN=f",
		"LANG=C.UTF-8", "TERM=xterm", "EDITOR=vi", "GOFLAGS=-mod=mod"}
	got := SecretVariables(environ)
	assert.ElementsMatch(t, []string{"NPM_TOKEN", "PIP_INDEX_URL", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "OPENAI_API_KEY", "HF_TOKEN"}, got)
	for _, name := range RegistryTokens(environ) {
		assert.Contains(t, got, name, "every registry token is a secret")
	}
	assert.Empty(t, SecretVariables([]string{"HOME=/h", "PATH=/bin", "USER=me"}))
}

// downloadWorld is a workspace ws (a repository, holding dirs) in the home
// directory of a root of its own, for judging downloads with the Python
// and npm registries allowed: within says whether a command with the
// environment env would run confined, write writes a file.
func downloadWorld(t *testing.T, dirs ...string) (within func(command string, env map[string]string) bool, write func(p, s string), home, ws string) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	registries := []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org"}
	home = filepath.Join(t.TempDir(), "home")
	ws = filepath.Join(home, "project")
	for _, d := range append(dirs, ".git") {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	write = func(p, s string) {
		t.Helper()
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
	}
	within = func(command string, env map[string]string) bool {
		t.Helper()
		getenv := func(k string) string { return env[k] }
		res := e.Evaluate(Request{Command: command, Cwd: ws, Home: home, Policy: pol, Getenv: getenv})
		return NeedsOf(res, ws, home).WithHosts(registries, getenv).Within()
	}
	return within, write, home, ws
}
