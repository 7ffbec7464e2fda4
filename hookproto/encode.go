package hookproto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/execgate/execgate/internal/denial"
	"github.com/execgate/execgate/internal/display"
)

// preToolUseOutput is Claude Code's and Codex's PreToolUse answer.
type preToolUseOutput struct {
	HookSpecificOutput struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	} `json:"hookSpecificOutput"`
}

// preToolUse encodes the PreToolUse answer. Codex (canAllow false) knows
// neither "allow" without a rewritten input nor "ask": an allowance is
// silence, which leaves Codex's own sandbox and approvals in force, unless
// it carries the rewritten input (Verdict.Input), and an ask is refused
// rather than sent where it would be read as a failed hook.
func preToolUse(canAllow bool) func(Verdict) Answer {
	return func(v Verdict) Answer {
		if v.Decision == NoOpinion || v.Decision == Allow && !canAllow && len(v.Input) == 0 {
			return Answer{}
		}
		if v.Decision == Ask && !canAllow {
			v.Decision = Deny
		}
		var out preToolUseOutput
		out.HookSpecificOutput.HookEventName = "PreToolUse"
		out.HookSpecificOutput.PermissionDecision = v.Decision.String()
		out.HookSpecificOutput.PermissionDecisionReason = v.Reason
		if v.Decision == Allow {
			out.HookSpecificOutput.UpdatedInput = v.Input
		}
		return Answer{Stdout: encodeJSON(out)}
	}
}

// beforeToolOutput is Gemini CLI's BeforeTool answer.
type beforeToolOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
}

// beforeTool encodes Gemini CLI's BeforeTool answer. A refusal is
// {"decision":"deny"} on stdout with exit 0, which Gemini shows as a denied
// tool call and sends the reason to the model; exit 2 would block too, but
// as a hook that failed. An "ask" is refused, as releases that do not know
// it would run the command.
func beforeTool(v Verdict) Answer {
	switch v.Decision {
	case NoOpinion:
		return Answer{}
	case Allow:
		return Answer{Stdout: encodeJSON(beforeToolOutput{Decision: "allow"})}
	}
	return Answer{Stdout: encodeJSON(beforeToolOutput{Decision: "deny", Reason: v.Reason})}
}

// encodeJSON writes v as one line of JSON, leaving <, > and & readable
// (they are common in shell commands).
func encodeJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // of fixed types: cannot fail
	return b.String()
}

// Write writes ans as the hook's output and returns the status to exit
// with. If stdout fails, it refuses all the same, through the one channel
// left: a line on stderr and ExitBlock (exit 1 would let every agent run
// the tool).
func Write(stdout, stderr io.Writer, ans Answer) int {
	if _, err := io.WriteString(stdout, ans.Stdout); err != nil {
		fmt.Fprintln(stderr, denial.Errorf("cannot write the answer: %v", err))
		return ExitBlock
	}
	_, _ = io.WriteString(stderr, ans.Stderr)
	return ans.Exit
}

// hookOutput is the union of the fields the agents act on in a hook's
// JSON answer.
type hookOutput struct {
	Continue           *bool  `json:"continue"`
	StopReason         string `json:"stopReason"`
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	HookSpecificOutput *struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	} `json:"hookSpecificOutput"`
}

// maxParsedReason bounds the reason Parse quotes from an answer.
const maxParsedReason = 300

// exitVerdict reads the exit status, which every agent reads the same way:
// ExitBlock refuses with stderr as the reason, any status but 0 is a
// failed hook and the tool runs. ok is true for exit 0: read stdout.
func exitVerdict(a Answer) (v Verdict, ok bool) {
	switch a.Exit {
	case 0:
		return Verdict{}, true
	case ExitBlock:
		return Verdict{Decision: Deny, Reason: display.Line(a.Stderr, maxParsedReason)}, false
	}
	return Verdict{Decision: NoOpinion, Reason: fmt.Sprintf("exit status %d, a failed hook: the agent runs the tool", a.Exit)}, false
}

// parsePreToolUse reads a PreToolUse answer as Claude Code and Codex act on
// it: hookSpecificOutput.permissionDecision, or the older top-level
// "decision". Codex takes "allow" and "ask" for a failed hook and runs the
// tool.
func parsePreToolUse(codex bool) func(Answer) Verdict {
	return func(a Answer) Verdict {
		v, ok := exitVerdict(a)
		if !ok {
			return v
		}
		out, v, ok := jsonOutput(a)
		if !ok {
			return v
		}
		if out.Continue != nil && !*out.Continue {
			return Verdict{Decision: Deny, Reason: display.Line(out.StopReason, maxParsedReason)}
		}
		decision, reason := out.Decision, out.Reason
		if h := out.HookSpecificOutput; h != nil && h.PermissionDecision != "" {
			decision, reason = h.PermissionDecision, h.PermissionDecisionReason
		}
		reason = display.Line(reason, maxParsedReason)
		switch decision {
		case "deny", "block":
			return Verdict{Decision: Deny, Reason: reason}
		case "allow", "approve":
			if codex && (out.HookSpecificOutput == nil || len(out.HookSpecificOutput.UpdatedInput) == 0) {
				return Verdict{Decision: NoOpinion, Reason: "Codex does not support allow without updatedInput: a failed hook, the tool runs"}
			}
			v := Verdict{Decision: Allow, Reason: reason}
			if out.HookSpecificOutput != nil {
				v.Input = out.HookSpecificOutput.UpdatedInput
			}
			return v
		case "ask":
			if codex {
				return Verdict{Decision: NoOpinion, Reason: "Codex does not support ask: a failed hook, the tool runs"}
			}
			return Verdict{Decision: Ask, Reason: reason}
		}
		return Verdict{Decision: NoOpinion, Reason: "no decision in the answer"}
	}
}

// parseBeforeTool reads a BeforeTool answer as Gemini CLI acts on it; plain
// text on stdout counts as "allow" there.
func parseBeforeTool(a Answer) Verdict {
	v, ok := exitVerdict(a)
	if !ok {
		return v
	}
	out, v, ok := jsonOutput(a)
	if !ok {
		if v.Reason == "stdout is not JSON" {
			return Verdict{Decision: Allow, Reason: "plain text on stdout, which Gemini CLI takes for allow"}
		}
		return v
	}
	if out.Continue != nil && !*out.Continue {
		return Verdict{Decision: Deny, Reason: display.Line(out.StopReason, maxParsedReason)}
	}
	reason := display.Line(out.Reason, maxParsedReason)
	switch out.Decision {
	case "deny", "block":
		return Verdict{Decision: Deny, Reason: reason}
	case "allow", "approve":
		return Verdict{Decision: Allow, Reason: reason}
	case "ask":
		return Verdict{Decision: Ask, Reason: reason}
	}
	return Verdict{Decision: NoOpinion, Reason: "no decision in the answer"}
}

// jsonOutput reads stdout of an exit-0 answer as a JSON object; ok is false,
// with a NoOpinion verdict saying why, when it holds none.
func jsonOutput(a Answer) (out hookOutput, v Verdict, ok bool) {
	s := strings.TrimSpace(a.Stdout)
	if s == "" {
		return out, Verdict{Decision: NoOpinion, Reason: "no answer"}, false
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return out, Verdict{Decision: NoOpinion, Reason: "stdout is not JSON"}, false
	}
	return out, Verdict{}, true
}

// Input returns a request to run command in cwd, as the agent sends it to
// its hook: the same fields, in the same shape. `execgate doctor` sends one
// to the hook command an agent is configured with, to see it answer.
func (p Protocol) Input(command, cwd string) []byte {
	raw, err := json.Marshal(p.input(command, cwd))
	if err != nil {
		// Only strings in fixed structs are encoded.
		panic(fmt.Sprintf("hookproto: encode %s input: %v", p.Name, err))
	}
	return raw
}

// probeSession names the session of a request Input builds.
const probeSession = "execgate-probe"

func claudeInput(command, cwd string) any {
	type toolInput struct {
		Command     string `json:"command"`
		Description string `json:"description"`
	}
	return struct {
		SessionID      string    `json:"session_id"`
		TranscriptPath string    `json:"transcript_path"`
		Cwd            string    `json:"cwd"`
		PermissionMode string    `json:"permission_mode"`
		HookEventName  string    `json:"hook_event_name"`
		ToolName       string    `json:"tool_name"`
		ToolInput      toolInput `json:"tool_input"`
		ToolUseID      string    `json:"tool_use_id"`
	}{probeSession, "", cwd, "default", "PreToolUse", "Bash", toolInput{command, "execgate probe"}, "toolu_" + probeSession}
}

func codexInput(command, cwd string) any {
	type toolInput struct {
		Command string `json:"command"`
	}
	return struct {
		SessionID      string    `json:"session_id"`
		TurnID         string    `json:"turn_id"`
		TranscriptPath *string   `json:"transcript_path"`
		Cwd            string    `json:"cwd"`
		HookEventName  string    `json:"hook_event_name"`
		Model          string    `json:"model"`
		PermissionMode string    `json:"permission_mode"`
		ToolName       string    `json:"tool_name"`
		ToolInput      toolInput `json:"tool_input"`
		ToolUseID      string    `json:"tool_use_id"`
	}{probeSession, "turn-1", nil, cwd, "PreToolUse", "", "default", "Bash", toolInput{command}, "call_" + probeSession}
}

func geminiInput(command, cwd string) any {
	type toolInput struct {
		Command     string `json:"command"`
		Description string `json:"description"`
	}
	return struct {
		SessionID      string    `json:"session_id"`
		TranscriptPath string    `json:"transcript_path"`
		Cwd            string    `json:"cwd"`
		HookEventName  string    `json:"hook_event_name"`
		Timestamp      string    `json:"timestamp"`
		ToolName       string    `json:"tool_name"`
		ToolInput      toolInput `json:"tool_input"`
	}{probeSession, "", cwd, "BeforeTool", time.Now().UTC().Format(time.RFC3339Nano), "run_shell_command", toolInput{command, "execgate probe"}}
}
