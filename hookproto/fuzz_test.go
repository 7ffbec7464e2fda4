package hookproto_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/execgate/execgate/hookproto"
	"github.com/execgate/execgate/internal/denial"
)

// wellFormed is an oracle, written apart from Decode: whether raw is a JSON
// object in valid UTF-8 with the agent's event, and whether it calls one of
// its shell tools with a non-blank command string.
func wellFormed(p hookproto.Protocol, raw []byte) (ok, shell bool) {
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return false, false
	}
	var top map[string]any
	if json.Unmarshal(raw, &top) != nil {
		return false, false
	}
	if event, _ := top["hook_event_name"].(string); event != p.Event {
		return false, false
	}
	tool, isString := top["tool_name"].(string)
	if !isString {
		return false, false
	}
	if !slices.Contains(p.Tools, tool) {
		return true, false
	}
	input, _ := top["tool_input"].(map[string]any)
	command, _ := input["command"].(string)
	return strings.TrimSpace(command) != "", true
}

// FuzzHookInput feeds arbitrary bytes to the input decoder of every agent,
// with a judge that allows everything: it must never panic, and nothing
// but a well-formed shell-tool request may reach the judge (and so be
// allowed); silence only for a well-formed call of another tool. What
// reaches the judge has an absolute directory to judge it in.
func FuzzHookInput(f *testing.F) {
	paths, _ := filepath.Glob("../testdata/hook/*/*.input")
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.ReplaceAll(raw, []byte("@CWD@"), []byte("/tmp")))
	}
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","command":"rm -rf /"}}`))
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","Tool_Name":"Read","tool_input":{"command":"ls"}}`))
	f.Add([]byte(`{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls","dir_path":"/"}}`))
	f.Add([]byte(`{"cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"exec_command","tool_input":{"command":"ls","workdir":".."}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, p := range hookproto.All() {
			judged := false
			v, err := p.Answer(raw, func(req hookproto.Request) hookproto.Verdict {
				judged = true
				if !filepath.IsAbs(req.Cwd) || !filepath.IsAbs(req.Workspace) {
					t.Errorf("%s: judged in %q, workspace %q: not absolute", p.Name, req.Cwd, req.Workspace)
				}
				return hookproto.Verdict{Decision: hookproto.Allow, Reason: "execgate: allowed by policy"}
			})
			ok, shell := wellFormed(p, raw)
			switch {
			case err != nil:
				if judged || v.Decision != hookproto.NoOpinion {
					t.Fatalf("%s: refused input was judged", p.Name)
				}
				ans := p.Encode(hookproto.Verdict{Decision: hookproto.Deny, Reason: denial.Line(err.Error())})
				if got := p.Parse(ans); got.Decision != hookproto.Deny {
					t.Fatalf("%s: a refusal encoded as %+v reads back as %v", p.Name, ans, got)
				}
			case judged:
				if !ok || !shell {
					t.Fatalf("%s: judged (and would allow) input that is not a shell-tool request: %q", p.Name, raw)
				}
			default:
				if !ok || shell {
					t.Fatalf("%s: no opinion on input that is not a well-formed call of another tool: %q", p.Name, raw)
				}
			}
		}
	})
}
