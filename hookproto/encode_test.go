package hookproto_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hookproto"
)

// TestEncode pins each verdict's answer in each agent's protocol: a refusal
// is JSON on stdout with exit 0 for all three, which each shows as a denied
// tool call (Gemini CLI shows exit 2 as a failed hook); Codex, which knows
// neither allow nor ask, gets silence and a refusal.
func TestEncode(t *testing.T) {
	const reason = "execgate: denied: <x> & \"y\""
	deny := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"execgate: denied: <x> & \"y\""}}` + "\n"
	for _, tt := range []struct {
		agent string
		v     hookproto.Verdict
		want  hookproto.Answer
	}{
		{"claude", hookproto.Verdict{Decision: hookproto.NoOpinion}, hookproto.Answer{}},
		{"claude", hookproto.Verdict{Decision: hookproto.Allow, Reason: "ok"}, hookproto.Answer{Stdout: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok"}}` + "\n"}},
		{"claude", hookproto.Verdict{Decision: hookproto.Deny, Reason: reason}, hookproto.Answer{Stdout: deny}},
		{"claude", hookproto.Verdict{Decision: hookproto.Ask, Reason: "why"}, hookproto.Answer{Stdout: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"why"}}` + "\n"}},
		{"codex", hookproto.Verdict{Decision: hookproto.Allow, Reason: "ok"}, hookproto.Answer{}},
		{"codex", hookproto.Verdict{Decision: hookproto.Deny, Reason: reason}, hookproto.Answer{Stdout: deny}},
		{"codex", hookproto.Verdict{Decision: hookproto.Ask, Reason: reason}, hookproto.Answer{Stdout: deny}},
		{"gemini", hookproto.Verdict{Decision: hookproto.NoOpinion}, hookproto.Answer{}},
		{"gemini", hookproto.Verdict{Decision: hookproto.Allow, Reason: "ok"}, hookproto.Answer{Stdout: `{"decision":"allow"}` + "\n"}},
		{"gemini", hookproto.Verdict{Decision: hookproto.Deny, Reason: reason}, hookproto.Answer{Stdout: `{"decision":"deny","reason":"execgate: denied: <x> & \"y\""}` + "\n"}},
		{"gemini", hookproto.Verdict{Decision: hookproto.Ask, Reason: reason}, hookproto.Answer{Stdout: `{"decision":"deny","reason":"execgate: denied: <x> & \"y\""}` + "\n"}},
	} {
		t.Run(tt.agent+"/"+tt.v.Decision.String(), func(t *testing.T) {
			p, ok := hookproto.ByName(tt.agent)
			require.True(t, ok)
			assert.Equal(t, tt.want, p.Encode(tt.v))
		})
	}
}

// TestParse reads answers back as each agent acts on them: Encode's own,
// and the ones a broken or foreign hook gives, which doctor must tell
// apart from a working gate.
func TestParse(t *testing.T) {
	for _, p := range hookproto.All() {
		for _, d := range []hookproto.Decision{hookproto.NoOpinion, hookproto.Allow, hookproto.Deny, hookproto.Ask} {
			v := hookproto.Verdict{Decision: d, Reason: "execgate: because"}
			if d == hookproto.NoOpinion {
				v.Reason = ""
			}
			got := p.Parse(p.Encode(v))
			want := d
			switch {
			case p.Name == "codex" && d == hookproto.Allow:
				want = hookproto.NoOpinion // silence
			case !p.DeferAsk && d == hookproto.Ask:
				want = hookproto.Deny // Codex and Gemini CLI cannot ask: refused
			}
			assert.Equal(t, want, got.Decision, "%s %s: %+v", p.Name, d, got)
			if want == hookproto.Deny {
				assert.Equal(t, "execgate: because", got.Reason, "%s %s", p.Name, d)
			}
		}
	}
	for _, tt := range []struct {
		agent string
		a     hookproto.Answer
		want  hookproto.Decision
	}{
		{"claude", hookproto.Answer{Stderr: "blocked\n", Exit: 2}, hookproto.Deny},
		{"gemini", hookproto.Answer{Stderr: "blocked\n", Exit: 2}, hookproto.Deny},
		{"codex", hookproto.Answer{Stderr: "crash\n", Exit: 1}, hookproto.NoOpinion},
		{"gemini", hookproto.Answer{Exit: 127}, hookproto.NoOpinion},
		{"claude", hookproto.Answer{Stdout: "not json"}, hookproto.NoOpinion},
		{"gemini", hookproto.Answer{Stdout: "not json"}, hookproto.Allow}, // Gemini CLI reads plain text as allow
		{"claude", hookproto.Answer{Stdout: `{"decision":"block","reason":"old style"}`}, hookproto.Deny},
		{"claude", hookproto.Answer{Stdout: `{"continue":false,"stopReason":"stop"}`}, hookproto.Deny},
		{"codex", hookproto.Answer{Stdout: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}`}, hookproto.NoOpinion},
		{"gemini", hookproto.Answer{Stdout: `{"decision":"block","reason":"r"}`}, hookproto.Deny},
		{"gemini", hookproto.Answer{Stdout: `{}`}, hookproto.NoOpinion},
	} {
		p, _ := hookproto.ByName(tt.agent)
		assert.Equal(t, tt.want, p.Parse(tt.a).Decision, "%s %+v", tt.agent, tt.a)
	}
}

// TestInput: the request Input builds is one Decode reads back, in each
// agent's protocol.
func TestInput(t *testing.T) {
	for _, p := range hookproto.All() {
		req, shell, err := p.Decode(p.Input("rm -rf ~/precious", "/home/u/proj"))
		require.NoError(t, err, p.Name)
		assert.True(t, shell, p.Name)
		assert.Equal(t, hookproto.Request{Command: "rm -rf ~/precious", Cwd: "/home/u/proj", Workspace: "/home/u/proj"}, where(req), p.Name)
	}
}

// where is the request without the tool input it keeps for WithCommand.
func where(r hookproto.Request) hookproto.Request {
	return hookproto.Request{Command: r.Command, Cwd: r.Cwd, Workspace: r.Workspace}
}

// An allowance with a rewritten input carries it, every other field as
// sent, to Claude Code as updatedInput, and reads back as an allowance;
// Codex and Gemini CLI never get one.
func TestEncodeUpdatedInput(t *testing.T) {
	for _, p := range hookproto.All() {
		req, shell, err := p.Decode(p.Input("ls", "/home/u/proj"))
		require.NoError(t, err)
		require.True(t, shell)
		in, err := req.WithCommand(`x 'it''s' > "f"`)
		require.NoError(t, err)
		var got map[string]any
		require.NoError(t, json.Unmarshal(in, &got))
		assert.Equal(t, `x 'it''s' > "f"`, got["command"], p.Name)
		ans := p.Encode(hookproto.Verdict{Decision: hookproto.Allow, Reason: "r", Input: in})
		if !p.CanRewrite {
			assert.NotContains(t, ans.Stdout, "updatedInput", p.Name)
			continue
		}
		var out struct {
			HookSpecificOutput struct {
				UpdatedInput map[string]any `json:"updatedInput"`
			} `json:"hookSpecificOutput"`
		}
		require.NoError(t, json.Unmarshal([]byte(ans.Stdout), &out))
		assert.Equal(t, got, out.HookSpecificOutput.UpdatedInput, p.Name)
		assert.Equal(t, hookproto.Allow, p.Parse(ans).Decision, p.Name)
		// A refusal never carries one.
		ans = p.Encode(hookproto.Verdict{Decision: hookproto.Deny, Reason: "r", Input: in})
		assert.NotContains(t, ans.Stdout, "updatedInput", p.Name)
	}
}
