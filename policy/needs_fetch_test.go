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
