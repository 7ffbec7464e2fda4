package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/internal/denial"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/internal/jsonstrict"
	"github.com/execgate/execgate/shim"
)

// The three agents' pre-tool hooks, as their sources say (read 2026):
//
//	                 Claude Code                Codex                          Gemini CLI
//	event            PreToolUse                 PreToolUse                     BeforeTool
//	shell tool       Bash                       Bash (shell, shell_command,    run_shell_command
//	                                            exec_command, local_shell)
//	tool_input       command, description,      command (a string; an argv     command, description,
//	                 timeout, run_in_background is shlex-joined)               dir_path, is_background
//	allow            exit 0, permissionDecision exit 0, no output: "allow"     exit 0, {"decision":"allow"};
//	                 "allow": Claude's own      without updatedInput is        Gemini's own confirmation
//	                 prompt is skipped          rejected as unsupported        still applies
//	deny             exit 0, permissionDecision exit 0, permissionDecision     exit 2, the reason on stderr
//	                 "deny" + reason (told to   "deny" + a non-empty reason    (sent to the model as the
//	                 Claude); or exit 2+stderr  (or exit 2 + stderr)           tool's error)
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
// 600), core/src/tools/hook_names.rs (shell tools report "Bash");
// google-gemini/gemini-cli docs/hooks/reference.md,
// packages/core/src/hooks/hookRunner.ts (60 s default, exit 0/2/other),
// hooks/types.ts (only deny/block and ask are acted on), tools/shell.ts
// (dir_path, relative to the workspace).
//
// Every agent runs the tool when the hook fails, times out or exits with a
// status other than 0 and 2, so execgate must answer, in time, on every
// path: bad input is refused in the agent's own format, never by crashing.

// maxHookInput bounds the hook's input: a shell tool call is a few KiB.
const maxHookInput = 1 << 20

// exitBlock is the status every agent reads as "blocked, the reason is on
// stderr".
const exitBlock = 2

// Time budget: the default is the agent's own hook timeout less
// hookMargin, and the context ends hookGrace after the budget, so that an
// answer always goes out before the agent gives up on the hook.
const (
	hookMargin = 5 * time.Second
	hookGrace  = 500 * time.Millisecond
)

// hookDecision is what the hook tells the agent.
type hookDecision int

const (
	hookNoOpinion hookDecision = iota // not a shell command: the agent's normal flow applies
	hookAllow
	hookDeny
	hookAsk // the agent asks its user itself
)

// hookVerdict is a decision with the one line that explains it.
type hookVerdict struct {
	decision hookDecision
	reason   string
}

// hookAnswer is a verdict in an agent's protocol.
type hookAnswer struct {
	stdout, stderr string
	exit           int
}

// hookAgent is one agent's pre-tool hook protocol.
type hookAgent struct {
	name    string   // the argument: claude, codex, gemini
	via     string   // shown to approvers and logged: "Claude Code"
	agent   string   // the policy's agent id, as config.DetectAgent names it
	event   string   // hook_event_name of the pre-tool hook
	tools   []string // tool names that run shell commands
	dirKeys []string // tool_input keys naming the directory the command runs in, relative to cwd
	timeout time.Duration
	// deferAsk: when the policy wants a person and no approver is
	// connected, answer "ask" and let the agent's own prompt ask its user
	// (instead of applying askFallback).
	deferAsk bool
	encode   func(hookVerdict) hookAnswer
}

// hookAgents is the protocol table.
func hookAgents() []hookAgent {
	return []hookAgent{
		{name: "claude", via: "Claude Code", agent: "claude-code", event: "PreToolUse", tools: []string{"Bash"},
			timeout: 600 * time.Second, deferAsk: true, encode: preToolUse(true)},
		// Codex reports its shell tools as Bash; the internal names are
		// judged too, should a version send them, rather than let through.
		{name: "codex", via: "Codex", agent: "codex", event: "PreToolUse",
			tools:   []string{"Bash", "shell", "shell_command", "exec_command", "local_shell"},
			timeout: 600 * time.Second, encode: preToolUse(false)},
		{name: "gemini", via: "Gemini CLI", agent: "gemini-cli", event: "BeforeTool", tools: []string{"run_shell_command"},
			dirKeys: []string{"dir_path", "directory"}, timeout: 60 * time.Second, encode: beforeTool},
	}
}

func hookAgentNamed(name string) (hookAgent, bool) {
	for _, a := range hookAgents() {
		if a.name == name {
			return a, true
		}
	}
	return hookAgent{}, false
}

// preToolUseOutput is Claude Code's and Codex's PreToolUse answer.
type preToolUseOutput struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

// preToolUse encodes the PreToolUse answer. Codex (canAllow false) knows
// neither "allow" without a rewritten input nor "ask": an allowance is
// silence, which leaves Codex's own sandbox and approvals in force, and an
// ask is refused rather than sent where it would be read as a failed hook.
func preToolUse(canAllow bool) func(hookVerdict) hookAnswer {
	words := map[hookDecision]string{hookAllow: "allow", hookDeny: "deny", hookAsk: "ask"}
	return func(v hookVerdict) hookAnswer {
		if v.decision == hookNoOpinion || v.decision == hookAllow && !canAllow {
			return hookAnswer{}
		}
		if v.decision == hookAsk && !canAllow {
			v.decision = hookDeny
		}
		var out preToolUseOutput
		out.HookSpecificOutput.HookEventName = "PreToolUse"
		out.HookSpecificOutput.PermissionDecision = words[v.decision]
		out.HookSpecificOutput.PermissionDecisionReason = v.reason
		return hookAnswer{stdout: encodeJSON(out)}
	}
}

// beforeTool encodes Gemini CLI's BeforeTool answer: a refusal is exit 2
// with the reason on stderr; an "ask" is refused, as releases that do not
// know it would run the command.
func beforeTool(v hookVerdict) hookAnswer {
	switch v.decision {
	case hookNoOpinion:
		return hookAnswer{}
	case hookAllow:
		return hookAnswer{stdout: encodeJSON(map[string]string{"decision": "allow"})}
	}
	return hookAnswer{stderr: v.reason + "\n", exit: exitBlock}
}

func encodeJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // of fixed types: cannot fail
	return b.String()
}

type hookFlags struct {
	timeout time.Duration
}

func newHookCmd(g *globals) *cobra.Command {
	var f hookFlags
	names := make([]string, 0, 3)
	for _, a := range hookAgents() {
		names = append(names, a.name)
	}
	cmd := &cobra.Command{
		Use:   "hook claude|codex|gemini",
		Short: "Answer an agent's pre-tool hook: allow, deny or ask about a shell command",
		Long: `hook reads the pre-tool-use JSON an agent sends its hooks on stdin, judges
the shell command in it under the policy exactly as the shim would, and
answers in that agent's protocol: Claude Code's and Codex's PreToolUse,
Gemini CLI's BeforeTool. Other tools (file reads, edits) get no answer, so
the agent's normal permissions apply. Input that is not a well-formed
request is refused, never let through.

When the policy wants a person, only the hub's approvers are asked (run
"execgate hub" and "execgate approve"): the agent's interface owns the
terminal, and a prompt there would fight it for keystrokes. With no approver
connected, Claude Code is told to ask its user itself; Codex and Gemini CLI,
which cannot, get what askFallback says (deny by default).

Approvers get --timeout to answer, by default the agent's own hook timeout
less 5s, and the answer goes out at most half a second after it. If the
agent's settings give the hook a shorter timeout, pass a shorter --timeout
too: an agent that gives up on a hook runs the command.

The policy is the agent's (claude-code, codex, gemini-cli) unless --agent
or $EXECGATE_AGENT names another.`,
		Example: `  # ~/.claude/settings.json and ~/.codex/hooks.json
  {"hooks": {"PreToolUse": [{"matcher": "Bash",
    "hooks": [{"type": "command", "command": "execgate hook claude"}]}]}}
  # ~/.gemini/settings.json
  {"hooks": {"BeforeTool": [{"matcher": "run_shell_command",
    "hooks": [{"type": "command", "command": "execgate hook gemini"}]}]}}`,
		ValidArgs: names,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("hook needs one agent: %s", strings.Join(names, ", "))
			}
			if _, ok := hookAgentNamed(args[0]); !ok {
				return usagef("hook: unknown agent %q (want %s)", args[0], strings.Join(names, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, _ := hookAgentNamed(args[0])
			return runHook(g, a, f)
		},
	}
	cmd.Flags().DurationVar(&f.timeout, "timeout", 0, "give approvers `DURATION` to answer (default: the agent's hook timeout less 5s: claude and codex 9m55s, gemini 55s)")
	return cmd
}

// runHook answers one hook invocation. Its exit status is part of the
// answer: a usage error exits 2 (exitUsage), which every agent reads as a
// refusal (exitBlock).
func runHook(g *globals, a hookAgent, f hookFlags) (err error) {
	budget := a.timeout - hookMargin
	if f.timeout < 0 {
		return usagef("--timeout %s: want a positive duration", f.timeout)
	}
	if f.timeout > 0 {
		budget = f.timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget+hookGrace)
	defer cancel()
	agentID := cmp.Or(g.agent, g.getenv("EXECGATE_AGENT"), a.agent)
	getenv := func(k string) string {
		if k == "EXECGATE_CONFIG" {
			return configPath(g) // --config reaches the shim's loader
		}
		return g.getenv(k)
	}

	var v hookVerdict
	defer func() {
		// A bug must still end in a refusal the agent understands.
		if p := recover(); p != nil {
			v = hookVerdict{hookDeny, denial.Errorf("internal error: %v", p).Error()}
		}
		err = writeHookAnswer(g, a.encode(v))
	}()
	raw, err := readHookInput(ctx, g.stdin)
	if err == nil {
		v, err = a.answer(raw, func(req hookRequest) hookVerdict {
			return a.judge(ctx, req, budget, shim.JudgeOptions{Agent: agentID, Getenv: getenv, Stderr: stderrFile(g)})
		})
	}
	if err != nil {
		// Judge never saw it: the refusal is logged here.
		reason := err.Error()
		v = hookVerdict{hookDeny, denial.Line(reason)}
		shim.Refuse(shim.JudgeOptions{Agent: agentID, Via: a.via, Source: "hook", Getenv: getenv, Stderr: stderrFile(g)}, "", reason)
	}
	slog.Debug("hook", "agent", a.name, "decision", v.decision, "reason", v.reason)
	return nil
}

// writeHookAnswer writes the answer. If stdout fails, the exit status 2 and
// a line on stderr still refuse: exit 1 would let every agent run the tool.
func writeHookAnswer(g *globals, ans hookAnswer) error {
	if _, err := io.WriteString(g.stdout, ans.stdout); err != nil {
		fmt.Fprintln(g.stderr, denial.Errorf("cannot write the answer: %v", err))
		return exitCodeError{exitBlock}
	}
	io.WriteString(g.stderr, ans.stderr)
	if ans.exit != 0 {
		return exitCodeError{ans.exit}
	}
	return nil
}

func stderrFile(g *globals) *os.File {
	f, _ := g.stderr.(*os.File)
	return f
}

// readHookInput reads the whole input, keeping at most maxHookInput+1
// bytes. The rest is read and dropped rather than left unread: Codex takes
// a failed write to the hook's stdin for a failed hook, and runs the tool.
func readHookInput(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		raw []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		var b bytes.Buffer
		n, err := b.ReadFrom(io.LimitReader(r, maxHookInput+1))
		if err == nil && n > maxHookInput {
			_, err = io.Copy(io.Discard, r)
		}
		done <- result{b.Bytes(), err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, fmt.Errorf("read the hook input: %w", res.err)
		}
		return res.raw, nil
	case <-ctx.Done():
		return nil, errors.New("the hook input did not end within the time budget")
	}
}

// hookRequest is a well-formed request to run a shell command.
type hookRequest struct {
	command string
	cwd     string // "" when the input names no directory that exists
}

// answer decides on one hook input: bad input is an error (to be refused),
// a tool that is not a shell command gets no opinion, and a shell command
// goes to judge.
func (a hookAgent) answer(raw []byte, judge func(hookRequest) hookVerdict) (hookVerdict, error) {
	req, shell, err := a.decode(raw)
	if err != nil || !shell {
		return hookVerdict{}, err
	}
	return judge(req), nil
}

// decode reads a hook input. shell is false, with no error, for a
// well-formed call of a tool that is not a shell command.
func (a hookAgent) decode(raw []byte) (req hookRequest, shell bool, err error) {
	if len(raw) > maxHookInput {
		return req, false, fmt.Errorf("the hook input is larger than %d bytes", maxHookInput)
	}
	// Go would replace bad bytes by U+FFFD, judging other text than the
	// agent holds.
	if !utf8.Valid(raw) {
		return req, false, errors.New("the hook input is not valid UTF-8")
	}
	if err := jsonstrict.Check(raw); err != nil {
		return req, false, fmt.Errorf("the hook input is not one JSON object: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return req, false, errors.New("the hook input is not a JSON object")
	}
	event, err := stringField(top, "hook_event_name", true)
	if err != nil {
		return req, false, err
	}
	if event != a.event {
		return req, false, fmt.Errorf("hook_event_name is %q; execgate hook %s answers %s", event, a.name, a.event)
	}
	tool, err := stringField(top, "tool_name", true)
	if err != nil {
		return req, false, err
	}
	if !slices.Contains(a.tools, tool) {
		return req, false, nil
	}
	var input map[string]json.RawMessage
	if err := json.Unmarshal(top["tool_input"], &input); err != nil || input == nil {
		return req, false, fmt.Errorf("tool_input of %s is missing or not an object", tool)
	}
	if req.command, err = stringField(input, "command", true); err != nil {
		return req, false, fmt.Errorf("tool_input.%w", err)
	}
	if strings.TrimSpace(req.command) == "" {
		return req, false, errors.New("tool_input.command is empty")
	}
	cwd, err := stringField(top, "cwd", false)
	if err != nil {
		return req, false, err
	}
	if !filepath.IsAbs(cwd) || !isDir(cwd) {
		cwd = ""
	}
	for _, key := range a.dirKeys {
		dir, err := stringField(input, key, false)
		if err != nil {
			return req, false, fmt.Errorf("tool_input.%w", err)
		}
		if dir == "" {
			continue
		}
		if !filepath.IsAbs(dir) && cwd != "" {
			dir = filepath.Join(cwd, dir)
		}
		// The directory the command starts in is the workspace the policy
		// judges paths against: a narrower one is only stricter.
		if filepath.IsAbs(dir) && isDir(dir) {
			cwd = filepath.Clean(dir)
		}
		break
	}
	req.cwd = cwd
	return req, true, nil
}

// stringField reads m[key] as a string; absent is an error when required.
func stringField(m map[string]json.RawMessage, key string, required bool) (string, error) {
	raw, ok := m[key]
	if !ok {
		if required {
			return "", fmt.Errorf("%s is missing", key)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", fmt.Errorf("%s is not a string", key)
	}
	return s, nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// judge decides on a well-formed shell command with shim.Judge, asking only
// the hub's approvers, and turns the judgement into a verdict.
func (a hookAgent) judge(ctx context.Context, req hookRequest, budget time.Duration, o shim.JudgeOptions) hookVerdict {
	o.Command, o.Cwd, o.Via, o.Source, o.Timeout = req.command, req.cwd, a.via, "hook", budget
	o.Asker = nil // the hub only: see the command's help
	o.Defer = a.deferAsk
	j := shim.Judge(ctx, o)
	switch {
	case j.Unanswered && a.deferAsk:
		// The agent's own prompt reaches the person execgate could not:
		// better than applying askFallback on their behalf.
		return hookVerdict{hookAsk, "execgate: needs approval: " + display.Line(firstReason(j.Reasons), maxAskReason)}
	case j.Allow:
		return hookVerdict{hookAllow, allowReason(j)}
	case ctx.Err() != nil && !j.TimedOut:
		return hookVerdict{hookDeny, denial.Errorf("approval timed out: no answer within the hook's time budget (%s)", budget).Error()}
	}
	// Judge's message is already one refusal line (package denial).
	msg := j.Message
	if msg == "" {
		msg = denial.Line("the command was not allowed")
	}
	return hookVerdict{hookDeny, msg}
}

func firstReason(reasons []string) string {
	switch len(reasons) {
	case 0:
		return "the policy asks for approval"
	case 1:
		return reasons[0]
	}
	return fmt.Sprintf("%s (and %d more)", reasons[0], len(reasons)-1)
}

// allowReason says who let the command through; Claude Code shows it to
// the user.
func allowReason(j shim.Judgement) string {
	switch {
	case j.DecidedBy == shim.ByHub:
		return "execgate: approved by a person (hub)"
	case j.TimedOut:
		return "execgate: approval timed out; allowed by askFallback"
	case j.DecidedBy == shim.ByFallback:
		return "execgate: nobody to ask; allowed by askFallback"
	}
	return "execgate: allowed by policy"
}

// maxAskReason bounds the reason an agent's own prompt shows.
const maxAskReason = 1000
