package replay

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/policy"
)

// The shapes below are the ones the agents' other versions write, which
// the e2e run does not produce (written by hand from their formats).

// TestCodexShapes: every shell tool Codex has had, and its tools that are
// not shell commands.
func TestCodexShapes(t *testing.T) {
	rollout := strings.Join([]string{
		`{"timestamp":"2025-09-01T10:00:00.000Z","type":"session_meta","payload":{"id":"sess-1","cwd":"/p"}}`,
		`{"timestamp":"2025-09-01T10:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"go test ./...\"],\"workdir\":\"/p\"}","call_id":"c1"}}`,
		`{"timestamp":"2025-09-01T10:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\",\"-la\",\"my dir\"]}","call_id":"c2"}}`,
		`{"timestamp":"2025-09-01T10:00:03.000Z","type":"turn_context","payload":{"cwd":"/q"}}`,
		`{"timestamp":"2025-09-01T10:00:04.000Z","type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"make\",\"workdir\":\"sub\"}","call_id":"c3"}}`,
		`{"timestamp":"2025-09-01T10:00:05.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"print -l *(.)\",\"shell\":\"/bin/zsh\"}","call_id":"c4"}}`,
		`{"timestamp":"2025-09-01T10:00:06.000Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"c5","status":"completed","action":{"type":"exec","command":["bash","-c","git diff"],"working_directory":"/r"}}}`,
		`{"timestamp":"2025-09-01T10:00:07.000Z","type":"response_item","payload":{"type":"function_call","name":"container.exec","arguments":"{\"command\":[\"sh\",\"-c\",\"npm test\"]}","call_id":"c6"}}`,
		`{"timestamp":"2025-09-01T10:00:08.000Z","type":"response_item","payload":{"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":1,\"chars\":\"y\\n\"}","call_id":"c7"}}`,
		`{"timestamp":"2025-09-01T10:00:09.000Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** End Patch","call_id":"c8"}}`,
		`{"timestamp":"2025-09-01T10:00:10.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"apply_patch\",\"*** Begin Patch\\n*** End Patch\"]}","call_id":"c9"}}`,
		`{"timestamp":"2025-09-01T10:00:11.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"go test ./...\"],\"workdir\":\"/p\"}","call_id":"c1"}}`,
		`{"timestamp":"2025-09-01T10:00:12.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[]}","call_id":"c10"}}`,
	}, "\n") + "\n"
	got := readBytes(t, "/h/.codex/sessions/2025/09/01/rollout-x.jsonl", []byte(rollout))
	assert.Equal(t, []string{"go test ./...", "ls -la 'my dir'", "make", "print -l *(.)", "git diff", "npm test"}, texts(got.commands))
	var cwds []string
	for _, c := range got.commands {
		cwds = append(cwds, c.Cwd)
		assert.Equal(t, "sess-1", c.Session)
		assert.Equal(t, policy.AgentCodex, c.Agent)
	}
	assert.Equal(t, []string{"/p", "/p", "/q/sub", "/q", "/r", "/q"}, cwds)
	assert.Equal(t, policy.DialectZsh, got.commands[3].Dialect)
	assert.Equal(t, []string{`apply_patch $'*** Begin Patch\n*** End Patch'`}, got.skipped)
	require.Len(t, got.problems, 1, "the empty argv")
	assert.Equal(t, 13, got.problems[0].Line)

	// A rollout from before the envelope: the session line, then the items.
	old := `{"id":"old-1","timestamp":"2025-05-01T09:00:00.000Z","instructions":null}
{"record_type":"state"}
{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cargo test\"],\"workdir\":\"/w\"}","call_id":"o1"}
`
	got = readBytes(t, "/h/old.jsonl", []byte(old))
	require.Len(t, got.commands, 1)
	assert.Equal(t, Command{Text: "cargo test", Cwd: "/w", Session: "old-1", Agent: policy.AgentCodex, File: "/h/old.jsonl", Line: 3}, got.commands[0])
}

// TestGeminiShapes: the chat of Gemini CLI's versions before JSON Lines,
// a checkpoint, and its log of prompts.
func TestGeminiShapes(t *testing.T) {
	chat := `{
  "sessionId": "g-1",
  "projectHash": "0123abcd",
  "startTime": "2025-08-01T08:00:00.000Z",
  "lastUpdated": "2025-08-01T08:10:00.000Z",
  "messages": [
    {"id": "m1", "timestamp": "2025-08-01T08:00:00.000Z", "type": "user", "content": "run the tests"},
    {
      "id": "m2",
      "timestamp": "2025-08-01T08:00:05.000Z",
      "type": "gemini",
      "content": "",
      "toolCalls": [
        {"id": "t1", "name": "run_shell_command", "args": {"command": "npm test", "directory": "pkg"}, "status": "success", "timestamp": "2025-08-01T08:00:06.000Z"},
        {"id": "t2", "name": "read_file", "args": {"absolute_path": "/x"}}
      ]
    }
  ]
}`
	got := readBytes(t, "/h/.gemini/tmp/0123abcd/chats/session-2025-08-01.json", []byte(chat))
	require.Len(t, got.commands, 1)
	c := got.commands[0]
	assert.Equal(t, "npm test", c.Text)
	assert.Equal(t, "g-1", c.Session)
	assert.Equal(t, policy.AgentGeminiCLI, c.Agent)
	assert.Equal(t, 8, c.Line)
	assert.Empty(t, c.Cwd, "the project's path is only a hash here")
	assert.Equal(t, "2025-08-01T08:00:06Z", c.Time.Format("2006-01-02T15:04:05Z07:00"))
	assert.Empty(t, got.problems)

	checkpoint := `[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"id":"f1","name":"run_shell_command","args":{"command":"git status"}}}]}]`
	got = readBytes(t, "/h/.gemini/tmp/p/checkpoint-x.json", []byte(checkpoint))
	assert.Equal(t, []string{"git status"}, texts(got.commands))
	assert.Empty(t, got.problems)

	logs := `[{"sessionId":"g-1","messageId":0,"type":"user","message":"run the tests","timestamp":"2025-08-01T08:00:00.000Z"}]`
	got = readBytes(t, "/h/.gemini/tmp/p/logs.json", []byte(logs))
	assert.Empty(t, got.commands)
	assert.Empty(t, got.problems)
}

// TestGeminiProjectRoot: a chat's directory comes from the project's
// .project_root, else from projects.json.
func TestGeminiProjectRoot(t *testing.T) {
	dir, home := materialize(t)
	chats := filepath.Join(dir, "captured", "gemini", "tmp", "work", "chats")
	assert.Equal(t, filepath.Join(home, "work"), geminiProjectRoot(filepath.Join(chats, "session-x.jsonl")))
	require.NoError(t, removeFile(filepath.Join(chats, "..", ".project_root")))
	assert.Equal(t, filepath.Join(home, "work"), geminiProjectRoot(filepath.Join(chats, "session-x.jsonl")), "from projects.json")
	require.NoError(t, removeFile(filepath.Join(dir, "captured", "gemini", "projects.json")))
	assert.Empty(t, geminiProjectRoot(filepath.Join(chats, "session-x.jsonl")))
	assert.Empty(t, geminiProjectRoot("/elsewhere/session-x.jsonl"))
}

// TestClaudeShapes: only the Bash tool's calls are commands; a Bash call
// without a command is a problem.
func TestClaudeShapes(t *testing.T) {
	log := strings.Join([]string{
		`{"type":"summary","summary":"Bash things","leafUuid":"x"}`,
		`{"type":"assistant","cwd":"/p","sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"content":[{"type":"text","text":"I will run Bash"},{"type":"tool_use","id":"a","name":"Bash","input":{"command":"ls","description":"list"}},{"type":"tool_use","id":"b","name":"Read","input":{"file_path":"/p/Bash"}},{"type":"tool_use","id":"c","name":"BashOutput","input":{"bash_id":"1"}}]}}`,
		`{"type":"user","cwd":"/p","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"a","content":"Bash"}]}}`,
		`{"type":"assistant","cwd":"/p","sessionId":"s","message":{"content":[{"type":"tool_use","id":"d","name":"Bash","input":{"description":"no command"}}]}}`,
		`{"type":"assistant","isSidechain":true,"cwd":"/p/sub","sessionId":"s","message":{"content":[{"type":"tool_use","id":"e","name":"Bash","input":{"command":"make test","run_in_background":true}}]}}`,
	}, "\n")
	got := readBytes(t, "/h/.claude/projects/-p/s.jsonl", []byte(log))
	assert.Equal(t, []string{"ls", "make test"}, texts(got.commands))
	assert.Equal(t, "/p/sub", got.commands[1].Cwd)
	require.Len(t, got.problems, 1)
	assert.Equal(t, 4, got.problems[0].Line)
	assert.Contains(t, got.problems[0].What, "without a command")
}
