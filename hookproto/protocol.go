package hookproto

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// The three agents' pre-tool hooks, as their sources say (read 2026):
//
//	                 Claude Code                Codex                          Gemini CLI
//	event            PreToolUse                 PreToolUse                     BeforeTool
//	shell tool       Bash                       Bash (shell, shell_command,    run_shell_command
//	                                            exec_command, local_shell)
//	tool_input       command, description,      command (a string; an argv     command, description,
//	                 timeout, run_in_background is shlex-joined); no workdir   dir_path, is_background
//	where it runs    cwd                        cwd, or tool_input.workdir     dir_path against cwd
//	                                            should a version send it
//	allow            exit 0, permissionDecision exit 0, no output: "allow"     exit 0, {"decision":"allow"};
//	                 "allow": Claude's own      without updatedInput is        Gemini's own confirmation
//	                 prompt is skipped          rejected as unsupported        still applies
//	deny             exit 0, permissionDecision exit 0, permissionDecision     exit 0, {"decision":"deny",
//	                 "deny" + reason (told to   "deny" + a non-empty reason    "reason":…}: the reason goes
//	                 Claude); or exit 2+stderr  (or exit 2 + stderr)           to the model as the tool's
//	                                                                           error (exit 2 + stderr also
//	                                                                           blocks, shown as a failed hook)
//	ask              permissionDecision "ask":  unsupported: the hook counts   "ask" only in recent releases;
//	                 Claude asks the user,      as failed and the tool runs    older ones ignore it and run
//	                 showing the reason
//	default timeout  600 s (60 s in older ones) 600 s (timeout_sec)            60 000 ms
//	timeout, crash,  tool proceeds              tool proceeds                  tool proceeds
//	any other exit   (non-blocking error)       (hook failed)                  (warning)
//
// Sources: Claude Code hooks reference (code.claude.com/docs/en/hooks:
// PreToolUse input, hookSpecificOutput, exit codes, timeout defaults);
// openai/codex codex-rs/hooks/src/events/pre_tool_use.rs,
// engine/output_parser.rs (allow without updatedInput and ask are
// "unsupported" and fail open), engine/discovery.rs (timeout_sec defaults to
// 600), core/src/tools/hook_names.rs (shell tools report "Bash"),
// core/src/tools/handlers/unified_exec/exec_command.rs (pre_tool_use_payload
// sends only {"command"}: the call's workdir is dropped, and cwd is the
// turn's; openai/codex issues 32360, 33986, 37251, 40348);
// google-gemini/gemini-cli docs/hooks/reference.md (BeforeTool: decision
// "deny" with a reason sent to the agent as a tool error; exit 0 "preferred
// for all logic"), packages/core/src/hooks/hookRunner.ts (60 s default; exit
// 0 parses stdout as JSON, and plain text there counts as "allow"; exit 2 is
// a block but the hook is reported as failed; other exits are warnings),
// hooks/types.ts (only deny/block and ask are acted on), tools/shell.ts
// (dir_path, relative to the workspace).

// MaxInput bounds a hook's input: a shell tool call is a few KiB.
const MaxInput = 1 << 20

// ExitBlock is the exit status every agent reads as "blocked, the reason is
// on stderr". It is the channel of last resort: it works when stdout does
// not.
const ExitBlock = 2

// Decision is what a hook tells the agent.
type Decision int

// The decisions, NoOpinion first so that the zero Verdict says nothing.
const (
	NoOpinion Decision = iota // not a shell command: the agent's normal flow applies
	Allow
	Deny
	Ask // the agent asks its user itself
)

// String names the decision as the agents do.
func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	case Ask:
		return "ask"
	}
	return "no-opinion"
}

// Verdict is a decision with the one line that explains it.
type Verdict struct {
	Decision Decision
	Reason   string
	// Input, with Allow, is the tool's input rewritten (Claude Code's
	// updatedInput): the command to run in place of the one asked about.
	// Protocols that cannot rewrite (Protocol.CanRewrite) never get one.
	Input json.RawMessage
}

// Answer is a verdict in an agent's protocol: what the hook process
// writes and the status it exits with.
type Answer struct {
	Stdout, Stderr string
	Exit           int
}

// Request is a well-formed request to run a shell command.
type Request struct {
	Command string
	// Cwd is the absolute directory the command starts in, which its
	// relative paths name files in.
	Cwd string
	// Workspace is the absolute directory of the agent's session (its
	// project): Cwd when Cwd lies inside it, which is only stricter.
	Workspace string
	// PermissionMode is the agent's permission mode as its hook input
	// names it (Claude Code: default, acceptEdits, plan, auto, dontAsk,
	// bypassPermissions); "" when it names none.
	PermissionMode string
	// input is the tool's input as sent, for WithCommand.
	input map[string]json.RawMessage
}

// WithCommand is the request's tool input with its command replaced by
// command, every other field as the agent sent it: what an updatedInput
// that runs command instead must be.
func (r Request) WithCommand(command string) (json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(r.input)+1)
	for k, v := range r.input {
		out[k] = v
	}
	c, err := json.Marshal(command)
	if err != nil {
		return nil, fmt.Errorf("encode the command: %w", err)
	}
	out["command"] = c
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode the tool input: %w", err)
	}
	return b, nil
}

// Protocol is one agent's pre-tool hook protocol.
type Protocol struct {
	Name  string // the argument to `execgate hook`: claude, codex, gemini
	Via   string // shown to approvers and logged: "Claude Code"
	Agent string // the policy's agent id, as config.DetectAgent names it
	Event string // hook_event_name of the pre-tool hook, and its key in the settings
	// Matcher is what the hook's entry in the agent's settings matches:
	// the shell tool's name.
	Matcher string
	// Tools are the tool names that run shell commands.
	Tools []string
	// Timeout is how long the agent waits for a hook by default.
	Timeout time.Duration
	// CanRewrite: an allowance may carry the tool's input rewritten
	// (PreToolUse updatedInput: Claude Code, and Codex, whose parser
	// rejects an allowance without one), which execgate uses to run the
	// command through its shim, confined.
	CanRewrite bool
	// DeferAsk: when the policy wants a person and no approver is
	// connected, answer Ask and let the agent's own prompt ask its user
	// (instead of applying askFallback) — only in the permission modes of
	// PromptModes: in the others the agent answers an "ask" without its
	// user (Claude Code 2.1.332 under --dangerously-skip-permissions ran
	// the command), so askFallback applies as on every other route.
	DeferAsk bool
	// PromptModes are the permission modes in which the agent shows its
	// user a hook's "ask"; a mode it does not name (a new one, or none)
	// is not trusted to.
	PromptModes []string

	dirKeys []string // tool_input keys naming the directory the command runs in, relative to cwd
	encode  func(Verdict) Answer
	parse   func(Answer) Verdict
	input   func(command, cwd string) any
}

// Defers reports whether a request the policy wants a person for, with no
// approver connected, is best answered "ask": the agent's own prompt then
// reaches its user. Otherwise the policy's askFallback decides.
func (p Protocol) Defers(req Request) bool {
	return p.DeferAsk && slices.Contains(p.PromptModes, req.PermissionMode)
}

// All returns the protocol table, one row per agent, in a fresh slice.
func All() []Protocol {
	return []Protocol{
		{Name: "claude", Via: "Claude Code", Agent: "claude-code", Event: "PreToolUse", Matcher: "Bash",
			Tools: []string{"Bash"}, Timeout: 600 * time.Second, DeferAsk: true, CanRewrite: true,
			PromptModes: []string{"default", "acceptEdits", "plan"},
			encode:      preToolUse(true), parse: parsePreToolUse(false), input: claudeInput},
		// Codex reports its shell tools as Bash; the internal names are
		// judged too, should a version send them, rather than let through.
		// Its exec_command and shell_command tools take a workdir that the
		// hook input leaves out (see the sources above): should a version
		// send it, it is where the command runs.
		{Name: "codex", Via: "Codex", Agent: "codex", Event: "PreToolUse", Matcher: "Bash",
			Tools:   []string{"Bash", "shell", "shell_command", "exec_command", "local_shell"},
			Timeout: 600 * time.Second, dirKeys: []string{"workdir"}, CanRewrite: true,
			encode: preToolUse(false), parse: parsePreToolUse(true), input: codexInput},
		{Name: "gemini", Via: "Gemini CLI", Agent: "gemini-cli", Event: "BeforeTool", Matcher: "run_shell_command",
			Tools: []string{"run_shell_command"}, Timeout: 60 * time.Second, dirKeys: []string{"dir_path", "directory"},
			encode: beforeTool, parse: parseBeforeTool, input: geminiInput},
	}
}

// Names returns the agents' names, in the table's order.
func Names() []string {
	var names []string
	for _, p := range All() {
		names = append(names, p.Name)
	}
	return names
}

// ByName returns the protocol of the agent called name (claude, codex,
// gemini).
func ByName(name string) (Protocol, bool) {
	all := All()
	i := slices.IndexFunc(all, func(p Protocol) bool { return p.Name == name })
	if i < 0 {
		return Protocol{}, false
	}
	return all[i], true
}

// Encode writes v in the agent's protocol.
func (p Protocol) Encode(v Verdict) Answer { return p.encode(v) }

// Parse reads an answer back as the agent would act on it: a hook that
// crashed or timed out, or answered in a way the agent ignores, is
// NoOpinion (the agent runs the tool), with a Reason saying what it
// answered. Encode's answers read back as their verdicts, except Codex's
// Allow without a rewritten input, which is silence and so NoOpinion.
func (p Protocol) Parse(a Answer) Verdict { return p.parse(a) }
