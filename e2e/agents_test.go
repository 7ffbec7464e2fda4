package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Routes by which execgate reaches an agent.
const (
	routeShim = "shim" // the agent runs the execgate shim as its shell
	routeHook = "hook" // the agent asks `execgate hook AGENT` before each shell call
	routeNone = "none" // no execgate: the baseline for the timings
	routeZsh  = "zsh"  // a recording zsh, no execgate: to capture the zsh forms
	// routeZshShim is the shim route for a user whose login shell is zsh:
	// setup gives Claude Code the zsh shim.
	routeZshShim = "zsh-shim"
)

// prompt is what the tests ask every agent; the mock model ignores it.
const prompt = "Run the command the test gives you."

// agentKind is how one agent CLI is wired, run and talked to.
type agentKind struct {
	name   string // as in agents.json and `execgate setup NAME`
	policy string // the agent's policy id
	api    modelAPI
	routes []string
	// wire makes the agent's own settings in w for route, pointing it at
	// the mock m, and returns the environment to run it with.
	wire func(t *testing.T, w *world, route string, m *mockModel) []string
	// argv is the headless command line.
	argv func(bin string) []string
}

var agents = []agentKind{
	{
		name: "claude", policy: "claude-code", api: anthropic{}, routes: []string{routeShim, routeHook},
		wire: func(t *testing.T, w *world, route string, m *mockModel) []string {
			switch route {
			case routeHook:
				w.setup("claude", "--hook")
			case routeShim:
				w.setup("claude")
			case routeZshShim:
				w.env = append(w.env, "SHELL="+realZsh(t)) // the later entry wins
				w.setup("claude")
			}
			// Claude Code starts with onboarding unless told it is done.
			must(t, os.WriteFile(filepath.Join(w.home, ".claude.json"),
				[]byte(`{"hasCompletedOnboarding": true, "bypassPermissionsModeAccepted": true}`), 0o600))
			env := []string{
				"ANTHROPIC_BASE_URL=" + m.URL(), "ANTHROPIC_API_KEY=sk-ant-e2e-dummy",
				"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_COST_WARNINGS=1",
			}
			if os.Geteuid() == 0 {
				// --dangerously-skip-permissions refuses root outside a sandbox.
				env = append(env, "IS_SANDBOX=1")
			}
			return env
		},
		argv: func(bin string) []string {
			return []string{bin, "-p", prompt, "--dangerously-skip-permissions", "--output-format", "json"}
		},
	},
	{
		// Codex runs /bin/bash by absolute path: only its hooks reach it.
		name: "codex", policy: "codex", api: openAIResponses{}, routes: []string{routeHook},
		wire: func(t *testing.T, w *world, route string, m *mockModel) []string {
			dir := filepath.Join(w.home, ".codex")
			must(t, os.MkdirAll(dir, 0o700))
			toml := `model = "gpt-5.1-codex"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "` + m.URL() + `/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false
`
			must(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(toml), 0o600))
			if route == routeHook {
				w.setup("codex")
			}
			return []string{"MOCK_API_KEY=e2e-dummy", "CODEX_HOME=" + dir}
		},
		argv: func(bin string) []string {
			// The hook setup writes is new to Codex, which runs an untrusted
			// hook only when told to: a person trusts it once with /hooks.
			return []string{bin, "exec", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust",
				"--skip-git-repo-check", "--json", prompt}
		},
	},
	{
		name: "gemini", policy: "gemini-cli", api: gemini{}, routes: []string{routeShim, routeHook},
		wire: func(t *testing.T, w *world, route string, m *mockModel) []string {
			dir := filepath.Join(w.home, ".gemini")
			must(t, os.MkdirAll(dir, 0o700))
			settings := `{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
}
`
			must(t, os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600))
			env := []string{"GEMINI_API_KEY=e2e-dummy", "GOOGLE_GEMINI_BASE_URL=" + m.URL(), "GEMINI_CLI_NO_RELAUNCH=true"}
			switch route {
			case routeHook:
				w.setup("gemini")
			case routeShim:
				// Gemini CLI runs bash from PATH (README).
				w.recordShims()
				env = append(env, "PATH="+w.shims+":"+w.getenv("PATH"))
			}
			return env
		},
		argv: func(bin string) []string {
			return []string{bin, "-p", prompt, "--yolo", "-o", "json", "-m", "gemini-2.5-flash"}
		},
	},
}

func agentByName(name string) agentKind {
	for _, a := range agents {
		if a.name == name {
			return a
		}
	}
	panic("e2e: no agent " + name)
}

// quoteArgv shows an argv for failure messages.
func quoteArgv(argv []string) string {
	var q []string
	for _, a := range argv {
		q = append(q, shellQuote(a))
	}
	return strings.Join(q, " ")
}
