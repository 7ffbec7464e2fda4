package setup

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/tailscale/hujson"

	"github.com/execgate/execgate/hookproto"
)

// Wired is how one agent is wired to run shell commands, as its settings
// file says, whoever wrote it (setup --apply or a person): what `execgate
// doctor` checks fires.
type Wired struct {
	// Agent is the agent's name for setup and hooks (claude, codex, gemini).
	Agent, Title string
	// Settings is the settings file read; Exists reports whether it was
	// there, Err why it could not be read (then nothing below is known).
	Settings string
	Exists   bool
	Err      error
	// Hooks are the commands of its pre-tool hook groups whose matcher
	// takes the agent's shell tool, in file order.
	Hooks []HookCommand
	// Shell is the shell the agent is told to run commands with
	// (Claude Code's env.CLAUDE_CODE_SHELL), or "".
	Shell string
}

// HookCommand is one hook handler: its position in the event's list (as
// Codex keys its trust state) and the command line the agent runs.
type HookCommand struct {
	Group, Handler int
	Command        string
}

// Wiring reads the settings file of each agent that has one (o.Agent
// empty), or of o.Agent.
func Wiring(o Options) ([]Wired, error) {
	var out []Wired
	for _, a := range agentTable() {
		if a.settings == nil || (o.Agent != "" && a.name != o.Agent) {
			continue
		}
		one := o
		one.Agent = a.name
		j, err := one.job()
		if err != nil {
			return nil, err
		}
		out = append(out, j.wiring())
	}
	return out, nil
}

func (j *job) wiring() Wired {
	w := Wired{Agent: j.agent.name, Title: j.agent.title, Settings: j.settingsFile()}
	raw, exists, _, err := readFile(w.Settings, maxSettingsBytes)
	w.Exists = exists
	if err != nil || !exists {
		w.Err = err
		return w
	}
	std, err := hujson.Standardize(raw)
	if err != nil {
		w.Err = fmt.Errorf("not valid JSON: %w", err)
		return w
	}
	var doc struct {
		Env   map[string]any               `json:"env"`
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(std, &doc); err != nil {
		w.Err = fmt.Errorf("not the settings shape execgate knows: %w", err)
		return w
	}
	if s, ok := doc.Env["CLAUDE_CODE_SHELL"].(string); ok && j.agent.name == "claude" {
		w.Shell = s
	}
	p := protocol(j.agent.name)
	for g, raw := range doc.Hooks[p.Event] {
		var group struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(raw, &group) != nil || !matcherTakes(group.Matcher, p) {
			continue
		}
		for h, hook := range group.Hooks {
			if hook.Type == "command" && hook.Command != "" {
				w.Hooks = append(w.Hooks, HookCommand{Group: g, Handler: h, Command: hook.Command})
			}
		}
	}
	return w
}

// matcherTakes reports whether a hook group's matcher selects the agent's
// shell tool: no matcher, "*", or a pattern matching one of its names (the
// agents read matchers as regular expressions).
func matcherTakes(m *string, p hookproto.Protocol) bool {
	if m == nil || *m == "" || *m == "*" {
		return true
	}
	re, err := regexp.Compile(`^(?:` + *m + `)$`)
	if err != nil {
		return false
	}
	for _, tool := range append([]string{p.Matcher}, p.Tools...) {
		if re.MatchString(tool) {
			return true
		}
	}
	return false
}
