package config

import (
	"os"
	"strings"
)

// DefaultAgent is the agent id used when nothing names or reveals the agent.
const DefaultAgent = "default"

// agentEnv names the agent explicitly.
const agentEnv = "EXECGATE_AGENT"

// agentSignatures are the environment variables coding agents set in the
// shells they start, in order of precedence. A signature matches a variable
// named name (or, with prefix, any variable whose name starts with name)
// whose value is value ("" matches any value).
var agentSignatures = [...]struct {
	name   string
	prefix bool
	value  string
	agent  string
}{
	{name: "CLAUDECODE", value: "1", agent: "claude-code"},
	{name: "GEMINI_CLI", value: "1", agent: "gemini-cli"},
	{name: "CODEX_", prefix: true, agent: "codex"},
}

// DetectAgent returns the id of the agent whose policy applies: flag when
// set, else $EXECGATE_AGENT, else the agent recognised from the variables it
// sets in environ ("KEY=value" pairs, as os.Environ returns them), else
// DefaultAgent.
func DetectAgent(flag string, getenv func(string) string, environ []string) string {
	if flag != "" {
		return flag
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if a := getenv(agentEnv); a != "" {
		return a
	}
	if a := AgentSignature(environ); a != "" {
		return a
	}
	return DefaultAgent
}

// AgentSignature returns the agent whose own variables (CLAUDECODE=1,
// GEMINI_CLI=1, CODEX_*) are in environ, or "". Unlike DetectAgent it
// ignores $EXECGATE_AGENT, which a person may set to label their own
// shell: a signature means the agent itself started the command.
func AgentSignature(environ []string) string {
	for _, sig := range agentSignatures {
		for _, kv := range environ {
			name, value, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			nameOK := name == sig.name || sig.prefix && strings.HasPrefix(name, sig.name)
			if nameOK && (sig.value == "" || value == sig.value) {
				return sig.agent
			}
		}
	}
	return ""
}
