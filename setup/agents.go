package setup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/hookproto"
)

// hookTimeout is how long an agent lets `execgate hook` run before giving
// up on it. It is far longer than execgate's own wait for a human (its
// timeoutMs, one minute by default): an agent whose hook times out goes on
// and runs the command, so execgate must always answer first.
const hookTimeoutSeconds = 600

// hookSupport says how an agent is integrated.
type hookSupport int

const (
	noHook       hookSupport = iota // recipes only: the agent has no hooks
	optionalHook                    // the shim by default, a hook with --hook
	onlyHook                        // a hook: the agent ignores $SHELL
)

// agent is one row of the integration table.
type agent struct {
	name, title string
	hooks       hookSupport
	// settings returns the agent's settings file from the home directory
	// and the environment; nil means the agent has none execgate edits.
	settings func(home string, getenv func(string) string) string
	// comments: the agent reads its settings file as JSON with comments.
	comments bool
	plan     func(p paths, hook bool) plan
}

// paths are where execgate's parts are, and how a shell command names them.
type paths struct {
	exe, shims, bash    string // bash is the shim
	qExe, qShims, qBash string // shell-quoted
	// shell is the shim an agent that takes a shell path is given: the
	// bash shim, or the zsh shim for a user whose login shell is zsh.
	shell, qShell string
}

func newPaths(exe, shims string, zsh bool) (paths, error) {
	p := paths{exe: exe, shims: shims, bash: filepath.Join(shims, "bash")}
	p.shell = p.bash
	if zsh {
		p.shell = filepath.Join(shims, "zsh")
	}
	for _, q := range []struct {
		dst *string
		src string
	}{{&p.qExe, p.exe}, {&p.qShims, p.shims}, {&p.qBash, p.bash}, {&p.qShell, p.shell}} {
		quoted, err := syntax.Quote(q.src, syntax.LangBash)
		if err != nil {
			return p, fmt.Errorf("path %q cannot be written in a shell command: %w", q.src, err)
		}
		*q.dst = quoted
	}
	return p, nil
}

// hookCommand is the command an agent's hook runs.
func (p paths) hookCommand(agent string) string { return p.qExe + " hook " + agent }

// protocol is the hook protocol of the agent called name, which the table
// below names: where its hook goes in the settings comes from there.
func protocol(name string) hookproto.Protocol {
	p, ok := hookproto.ByName(name)
	if !ok {
		panic("setup: no hook protocol for " + name) // the tables disagree: a bug
	}
	return p
}

// protocolHookEdit adds the hook entry for agent: under hooks.EVENT, for
// the agent's shell tool.
func protocolHookEdit(agent string, hook any) edit {
	p := protocol(agent)
	return hookEdit([]string{"hooks", p.Event}, p.Matcher, hook)
}

// plan is everything one integration consists of.
type plan struct {
	about   []string // what the agent reads, and why this works
	edits   []edit   // merged into the settings file
	guards  []guard  // settings that would keep the integration from working
	recipes []recipe // shell lines to use by hand
	notes   []string // what else the user must do
	shim    bool     // the edits run the shim, so it must be installed
}

// recipe is a shell line, with a comment saying what it is for.
type recipe struct{ comment, line string }

// guard is a setting that, when it has value, keeps the integration from
// working; Apply warns about it.
type guard struct {
	path    []string
	value   string // JSON
	warning string
}

// agentTable is the integrations, in the order the help lists them.
func agentTable() []agent {
	return []agent{
		{
			name: "claude", title: "Claude Code", hooks: optionalHook,
			settings: func(home string, getenv func(string) string) string {
				if dir := getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(dir) {
					return filepath.Join(dir, "settings.json")
				}
				return filepath.Join(home, ".claude", "settings.json")
			},
			plan: func(p paths, hook bool) plan {
				if hook {
					return plan{
						about: []string{"Claude Code runs PreToolUse hooks before every tool call: this one has execgate judge each Bash command."},
						edits: []edit{protocolHookEdit("claude",
							commandHook{Type: "command", Command: p.hookCommand("claude"), Timeout: hookTimeoutSeconds})},
						guards: []guard{{path: []string{"disableAllHooks"}, value: "true",
							warning: "disableAllHooks is true in it: Claude Code runs no hooks, this one included"}},
					}
				}
				about := []string{"Claude Code runs its Bash tool in the shell that CLAUDE_CODE_SHELL names: make that the execgate shim."}
				if p.shell != p.bash {
					about = append(about, "Your login shell is zsh: the zsh shim judges each command as zsh reads it and runs the real zsh.")
				}
				return plan{
					about:   about,
					edits:   []edit{{path: []string{"env", "CLAUDE_CODE_SHELL"}, value: jsonValue(p.shell)}},
					recipes: []recipe{{"or for one session only:", "CLAUDE_CODE_SHELL=" + p.qShell + " claude"}},
					shim:    true,
				}
			},
		},
		{
			name: "codex", title: "Codex", hooks: onlyHook,
			settings: func(home string, getenv func(string) string) string {
				if dir := getenv("CODEX_HOME"); filepath.IsAbs(dir) {
					return filepath.Join(dir, "hooks.json")
				}
				return filepath.Join(home, ".codex", "hooks.json")
			},
			plan: func(p paths, _ bool) plan {
				return plan{
					about: []string{"Only hooks reach Codex: it runs commands with /bin/bash by absolute path, never through",
						"$SHELL or PATH, so no shim can gate it. It runs PreToolUse hooks from hooks.json beside",
						"its config.toml: this one has execgate judge each Bash command."},
					edits: []edit{protocolHookEdit("codex",
						commandHook{Type: "command", Command: p.hookCommand("codex"), Timeout: hookTimeoutSeconds})},
					notes: []string{
						"Codex runs a new or changed hook only once you trust it: review it with /hooks in Codex's TUI.",
						"Until then it skips the hook without a word, and codex exec never asks; execgate doctor tells whether it is trusted.",
						"Codex runs no hooks when its config.toml has [features] hooks = false (versions before hooks were on by default need codex_hooks = true there).",
					},
				}
			},
		},
		{
			name: "gemini", title: "Gemini CLI", hooks: onlyHook, comments: true,
			settings: func(home string, _ func(string) string) string {
				return filepath.Join(home, ".gemini", "settings.json")
			},
			plan: func(p paths, _ bool) plan {
				return plan{
					about: []string{"Gemini CLI runs BeforeTool hooks from its settings.json: one on run_shell_command has execgate judge each shell command."},
					edits: []edit{protocolHookEdit("gemini",
						geminiHook{Name: "execgate", Type: "command", Command: p.hookCommand("gemini"), Timeout: hookTimeoutSeconds * 1000})},
					guards: []guard{{path: []string{"hooksConfig", "enabled"}, value: "false",
						warning: "hooksConfig.enabled is false in it: Gemini CLI runs no hooks, this one included"}},
					recipes: []recipe{{"also, or instead: Gemini CLI runs bash from PATH, so put the shim first:",
						"PATH=" + p.qShims + ":$PATH gemini"}},
				}
			},
		},
		{
			name: "aider", title: "aider",
			plan: func(p paths, _ bool) plan {
				return plan{
					about:   []string{"aider runs shell commands with $SHELL: start it with the execgate shim as its shell."},
					recipes: []recipe{{"", "SHELL=" + p.qBash + " aider"}},
				}
			},
		},
		{
			name: "shell", title: "generic tools",
			plan: func(p paths, _ bool) plan {
				return plan{
					about: []string{"Tools that run commands through a shell can run them through the execgate shim."},
					recipes: []recipe{
						{"tools that use $SHELL:", "SHELL=" + p.qBash + " TOOL"},
						{"make (for one run):", "make SHELL=" + p.qBash},
						{"npm scripts (undo: npm config delete script-shell):", "npm config set script-shell " + p.qBash},
						{"pnpm scripts (undo: pnpm config delete script-shell):", "pnpm config set script-shell " + p.qBash},
					},
				}
			},
		},
	}
}

// commandHook is a hook entry as Claude Code and Codex write it (timeout in
// seconds); the field order is the order written to the file.
type commandHook struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// geminiHook is a hook entry as Gemini CLI writes it (timeout in
// milliseconds).
type geminiHook struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// hookGroup is an entry of a hook event's list: a matcher and its hooks.
type hookGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []any  `json:"hooks"`
}

// hookEdit adds a hook group to the event list at path. A group for the
// same matcher that already runs the same command is recognised as this
// one, whatever else it says (a timeout the user changed, say): adding a
// second would run execgate twice.
func hookEdit(path []string, matcher string, hook any) edit {
	command := ""
	switch h := hook.(type) {
	case commandHook:
		command = h.Command
	case geminiHook:
		command = h.Command
	}
	return edit{
		path:     path,
		value:    jsonValue(hookGroup{Matcher: matcher, Hooks: []any{hook}}),
		appendTo: true,
		same: func(elem any) bool {
			g, ok := elem.(map[string]any)
			if !ok || g["matcher"] != matcher {
				return false
			}
			hooks, _ := g["hooks"].([]any)
			for _, h := range hooks {
				if h, ok := h.(map[string]any); ok && h["command"] == command {
					return true
				}
			}
			return false
		},
	}
}

// jsonValue encodes one of execgate's own values, leaving <, > and &
// readable (they are common in shell commands).
func jsonValue(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only strings, ints and these structs are encoded.
		panic(fmt.Sprintf("setup: encode %T: %v", v, err))
	}
	return bytes.TrimSpace(buf.Bytes())
}
