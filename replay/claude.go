package replay

import (
	"bytes"
	"encoding/json"
)

// claudeEntry is one line of a Claude Code session log
// (~/.claude/projects/PROJECT/SESSION.jsonl): a user or assistant message,
// with the directory the session was in when it was written.
type claudeEntry struct {
	Type      string `json:"type"`
	Cwd       string `json:"cwd"`
	SessionID string `json:"sessionId"`
	Timestamp string `json:"timestamp"`
	Message   *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// claudeBlock is one content block of an assistant message; the Bash
// tool's input is {"command": "…", "description": "…", …}.
type claudeBlock struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Name  string `json:"name"`
	Input struct {
		Command *string `json:"command"`
	} `json:"input"`
}

// claudeBash is the tool whose calls are shell commands.
const claudeBash = "Bash"

// readClaude reads a Claude Code session log: every Bash tool call of the
// assistant, in the directory its entry was written in. Claude Code runs
// the command in the user's shell, which the log does not name: bash is
// assumed.
func readClaude(in *input, s Sink) error {
	seen := newIDSet()
	return in.eachLine(s, func(n int, line []byte) error {
		if !bytes.Contains(line, []byte(`"`+claudeBash+`"`)) {
			return in.checkJSON(s, n, line)
		}
		var e claudeEntry
		if err := json.Unmarshal(line, &e); err != nil {
			in.report(s, n, describeJSON(err))
			return nil
		}
		if e.Type != "assistant" || e.Message == nil || len(e.Message.Content) == 0 || e.Message.Content[0] != '[' {
			return nil
		}
		var blocks []json.RawMessage
		if err := json.Unmarshal(e.Message.Content, &blocks); err != nil {
			in.report(s, n, "message.content: "+describeJSON(err))
			return nil
		}
		for _, raw := range blocks {
			var b claudeBlock
			if err := json.Unmarshal(raw, &b); err != nil {
				in.report(s, n, "a tool call: "+describeJSON(err))
				continue
			}
			if b.Type != "tool_use" || b.Name != claudeBash {
				continue
			}
			if b.Input.Command == nil {
				in.report(s, n, "a Bash tool call without a command")
				continue
			}
			if !seen.add(b.ID) {
				continue
			}
			c := Command{Text: *b.Input.Command, Cwd: e.Cwd, Session: e.SessionID, Agent: agentClaude,
				Time: parseTime(e.Timestamp), File: in.name, Line: n}
			if c.Session == "" {
				c.Session = in.name
			}
			if err := s.Command(c); err != nil {
				return err
			}
		}
		return nil
	})
}
