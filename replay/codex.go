package replay

import (
	"bytes"
	"encoding/json"
	"path/filepath"
)

// codexLine is one line of a Codex session rollout
// (~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl): {"timestamp", "type",
// "payload"}. Rollouts written before the summer of 2025 have no
// envelope: their first line is the session ({"id", "timestamp",
// "instructions"}) and the others are the items themselves.
type codexLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	ID        string          `json:"id"`
}

// codexMeta is the session_meta and turn_context payloads: where the
// session, and each turn, runs.
type codexMeta struct {
	ID  string `json:"id"`
	Cwd string `json:"cwd"`
}

// codexItem is a response item that may run a command: a function call
// to one of Codex's shell tools, or a local_shell_call.
type codexItem struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Action    *struct {
		Type             string   `json:"type"`
		Command          []string `json:"command"`
		WorkingDirectory string   `json:"working_directory"`
	} `json:"action"`
}

// codexArgs are the arguments of Codex's shell tools: shell (and its old
// name container.exec) takes an argv, shell_command a command string,
// exec_command a command string and the shell to run it with.
type codexArgs struct {
	Command json.RawMessage `json:"command"`
	Cmd     *string         `json:"cmd"`
	Workdir string          `json:"workdir"`
	Shell   string          `json:"shell"`
}

// codexMarked reports whether a line has one of the words a line that
// matters contains; other lines are only checked to be JSON.
func codexMarked(line []byte) bool {
	return bytes.Contains(line, []byte(`"session_meta"`)) || bytes.Contains(line, []byte(`"turn_context"`)) ||
		bytes.Contains(line, []byte(`"function_call"`)) || bytes.Contains(line, []byte(`"local_shell_call"`))
}

// readCodex reads a Codex rollout: every call of its shell tools, in the
// directory it names (workdir, relative to the turn's cwd) or the turn's.
// Calls of apply_patch are skipped: Codex applies those itself.
func readCodex(in *input, s Sink) error {
	seen := newIDSet()
	session := in.name // until the rollout names its session
	root := ""
	return in.eachLine(s, func(n int, line []byte) error {
		if n > 1 && !codexMarked(line) {
			return in.checkJSON(s, n, line)
		}
		var l codexLine
		if err := json.Unmarshal(line, &l); err != nil {
			in.report(s, n, describeJSON(err))
			return nil
		}
		item := l.Payload
		switch l.Type {
		case "session_meta", "turn_context":
			var m codexMeta
			if err := json.Unmarshal(l.Payload, &m); err != nil {
				in.report(s, n, l.Type+": "+describeJSON(err))
				return nil
			}
			if m.Cwd != "" {
				root = m.Cwd
			}
			if l.Type == "session_meta" && m.ID != "" {
				session = m.ID
			}
			return nil
		case "response_item":
		case "function_call", "local_shell_call":
			item = line // an item of an old rollout
		default:
			if n == 1 && l.ID != "" && l.Type == "" {
				session = l.ID // an old rollout's session line
			}
			return nil
		}
		var it codexItem
		if err := json.Unmarshal(item, &it); err != nil {
			in.report(s, n, "a tool call: "+describeJSON(err))
			return nil
		}
		c := Command{Cwd: root, Root: root, Session: session, Agent: agentCodex, Time: parseTime(l.Timestamp), File: in.name, Line: n}
		var argv []string
		switch {
		case it.Type == "local_shell_call" && it.Action != nil && it.Action.Type == "exec":
			argv = it.Action.Command
			c.Cwd = joinDir(root, it.Action.WorkingDirectory)
		case it.Type == "function_call":
			var ok bool
			if argv, ok = in.codexCall(s, n, it, &c); !ok {
				return nil
			}
		default:
			return nil
		}
		if !seen.add(it.CallID) {
			return nil
		}
		if argv != nil {
			text, dialect, err := fromArgv(argv)
			if err != nil {
				in.report(s, n, it.Name+": "+err.Error())
				return nil
			}
			c.Text, c.Dialect = text, dialect
		}
		if isApplyPatch(argv, c.Text) {
			s.Skipped(c, skipApplyPatch)
			return nil
		}
		return s.Command(c)
	})
}

// codexCall reads a function call's arguments into c (or returns the
// argv it runs); ok is false for a call that is not to a shell tool.
func (in *input) codexCall(s Sink, n int, it codexItem, c *Command) (argv []string, ok bool) {
	switch it.Name {
	case "shell", "container.exec", "shell_command", "exec_command", "local_shell":
	default:
		return nil, false // update_plan, write_stdin, an MCP tool …
	}
	var a codexArgs
	if err := json.Unmarshal([]byte(it.Arguments), &a); err != nil {
		in.report(s, n, it.Name+" arguments: "+describeJSON(err))
		return nil, false
	}
	c.Cwd = joinDir(c.Root, a.Workdir)
	switch {
	case a.Cmd != nil:
		c.Text, c.Dialect = *a.Cmd, dialectOf(a.Shell)
		return nil, true
	case len(a.Command) > 0 && a.Command[0] == '"':
		if err := json.Unmarshal(a.Command, &c.Text); err != nil {
			in.report(s, n, it.Name+" command: "+describeJSON(err))
			return nil, false
		}
		c.Dialect = dialectOf(a.Shell)
		return nil, true
	case len(a.Command) > 0 && a.Command[0] == '[':
		if err := json.Unmarshal(a.Command, &argv); err != nil {
			in.report(s, n, it.Name+" command: "+describeJSON(err))
			return nil, false
		}
		if len(argv) == 0 {
			in.report(s, n, it.Name+": an empty command")
			return nil, false
		}
		return argv, true
	}
	in.report(s, n, it.Name+": a call without a command")
	return nil, false
}

// joinDir is dir resolved against root: dir when it is absolute, root
// when dir is empty.
func joinDir(root, dir string) string {
	switch {
	case dir == "":
		return root
	case filepath.IsAbs(dir):
		return filepath.Clean(dir)
	case root == "":
		return ""
	}
	return filepath.Join(root, dir)
}
