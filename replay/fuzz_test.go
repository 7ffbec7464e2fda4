package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzRead reads data as the transcript named name and checks what any
// input must give: no panic, no error (only the sink's errors stop a
// reader), every command and problem placed in the file, and a bounded
// number of problem lines.
func fuzzRead(t *testing.T, name string, data []byte) {
	c := &collect{}
	if err := Read(name, bytes.NewReader(data), bytes.NewReader(data), c); err != nil {
		t.Fatalf("Read: %v", err)
	}
	lines := bytes.Count(data, []byte("\n")) + 1
	for _, cmd := range c.commands {
		if cmd.File != name || cmd.Line < 1 || cmd.Line > lines {
			t.Fatalf("command %q placed at %s (the input has %d lines)", cmd.Text, cmd.Where(), lines)
		}
		if cmd.Agent != "" && cmd.Session == "" {
			t.Fatalf("command %q of %s without a session", cmd.Text, cmd.Agent)
		}
	}
	for _, p := range c.problems {
		if p.File != name || p.Line < 0 || p.Line > lines || p.What == "" {
			t.Fatalf("problem %q placed at line %d (the input has %d lines)", p, p.Line, lines)
		}
	}
	if len(c.problems) > maxProblemsPerFile+1 {
		t.Fatalf("%d problem lines for one file", len(c.problems))
	}
}

// seedFuzz adds the fixtures whose names end in suffix, and a few
// fragments, to f's corpus.
func seedFuzz(f *testing.F, suffix string, extra ...string) {
	for _, fx := range transcriptFixtures(f) {
		if strings.HasSuffix(fx.name, suffix) {
			f.Add(fx.raw)
		}
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

func FuzzClaude(f *testing.F) {
	seedFuzz(f, "-work/"+filepath.Base(findOne(f, "captured/claude")),
		`{"type":"assistant","cwd":"/w","message":{"content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":"ls"}}]}}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, "/h/.claude/projects/p/s.jsonl", data) })
}

func FuzzCodex(f *testing.F) {
	seedFuzz(f, ".jsonl",
		`{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}`+"\n"+
			`{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"],\"workdir\":\"sub\"}","call_id":"c"}}`,
		`{"type":"response_item","payload":{"type":"local_shell_call","call_id":"c","action":{"type":"exec","command":["zsh","-c","ls"]}}}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, "/h/.codex/sessions/rollout-1.jsonl", data) })
}

func FuzzGemini(f *testing.F) {
	seedFuzz(f, ".jsonl",
		`{"sessionId":"s","projectHash":"h"}`+"\n"+`{"$set":{"messages":[{"type":"gemini","toolCalls":[{"id":"c","name":"run_shell_command","args":{"command":"ls"}}]}]}}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, "/h/.gemini/tmp/p/chats/session-1.jsonl", data) })
}

func FuzzDocument(f *testing.F) {
	seedFuzz(f, ".traj.json")
	seedFuzz(f, ".traj",
		`{"sessionId":"s","messages":[{"type":"gemini","toolCalls":[{"id":"c","name":"run_shell_command","args":{"command":"ls"}}]}]}`,
		`[{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"ls"}}}]}]`,
		`{"trajectory":[{"action":"ls","state":"{\"working_dir\":\"/w\"}"}]}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, "/h/run/instance.traj.json", data) })
}

// findOne is the first file under testdata/replay/dir.
func findOne(f *testing.F, dir string) string {
	var found string
	filepath.Walk(filepath.Join(fixtures(f), dir), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && found == "" {
			found = p
		}
		return nil
	})
	return found
}
