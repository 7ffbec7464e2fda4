package replay

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// geminiRunShell is Gemini CLI's shell tool.
const geminiRunShell = "run_shell_command"

// geminiCall is one tool call of a Gemini CLI chat message; the shell
// tool's args are {"command", "description", "dir_path"} ("directory" in
// older versions), the directory relative to the project's root.
type geminiCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Timestamp string `json:"timestamp"`
	Args      struct {
		Command   *string `json:"command"`
		DirPath   string  `json:"dir_path"`
		Directory string  `json:"directory"`
	} `json:"args"`
}

// geminiMessage is a message of a Gemini CLI chat: the model's ("gemini")
// carry the tool calls.
type geminiMessage struct {
	ID        string       `json:"id"`
	Type      string       `json:"type"`
	Timestamp string       `json:"timestamp"`
	ToolCalls []geminiCall `json:"toolCalls"`
}

// geminiRecord is one line of a Gemini CLI chat log
// (~/.gemini/tmp/PROJECT/chats/session-….jsonl, Gemini CLI 0.5x and
// later): the session's header first, then each message as it is
// written and rewritten (the same id again, now with its tool calls),
// and {"$set": {…}} updates, which may restate the whole history.
type geminiRecord struct {
	SessionID string `json:"sessionId"`
	geminiMessage
	Set *struct {
		SessionID string          `json:"sessionId"`
		Messages  []geminiMessage `json:"messages"`
	} `json:"$set"`
}

// gemini reads the commands of one Gemini CLI chat.
type gemini struct {
	in      *input
	s       Sink
	session string
	root    string
	seen    *idSet
}

func newGemini(in *input, s Sink) *gemini {
	return &gemini{in: in, s: s, session: in.name, // until the chat names its session
		root: geminiProjectRoot(in.name), seen: newIDSet()}
}

// readGeminiLog reads a Gemini CLI chat log (JSON Lines).
func readGeminiLog(in *input, s Sink) error {
	g := newGemini(in, s)
	return in.eachLine(s, func(n int, line []byte) error {
		if n > 1 && !bytes.Contains(line, []byte(`"`+geminiRunShell+`"`)) && !bytes.Contains(line, []byte(`"sessionId"`)) {
			return in.checkJSON(s, n, line)
		}
		var r geminiRecord
		if err := json.Unmarshal(line, &r); err != nil {
			in.report(s, n, describeJSON(err))
			return nil
		}
		if r.SessionID != "" {
			g.session = r.SessionID
		}
		if r.Set != nil {
			if r.Set.SessionID != "" {
				g.session = r.Set.SessionID
			}
			for _, m := range r.Set.Messages {
				if err := g.message(n, m); err != nil {
					return err
				}
			}
		}
		return g.message(n, r.geminiMessage)
	})
}

// message reports the shell calls of m, read on line n.
func (g *gemini) message(n int, m geminiMessage) error {
	for _, call := range m.ToolCalls {
		if call.Name != geminiRunShell {
			continue
		}
		if call.Args.Command == nil {
			g.in.report(g.s, n, "a run_shell_command call without a command")
			continue
		}
		if !g.seen.add(call.ID) {
			continue
		}
		dir := call.Args.DirPath
		if dir == "" {
			dir = call.Args.Directory
		}
		ts := call.Timestamp
		if ts == "" {
			ts = m.Timestamp
		}
		c := Command{Text: *call.Args.Command, Cwd: joinDir(g.root, dir), Root: g.root, Session: g.session,
			Agent: agentGemini, Time: parseTime(ts), File: g.in.name, Line: n}
		if err := g.s.Command(c); err != nil {
			return err
		}
	}
	return nil
}

// geminiProjectRoot is the project a chat file belongs to: Gemini CLI
// keeps each project's chats in ~/.gemini/tmp/NAME/chats, with the
// project's path in ~/.gemini/tmp/NAME/.project_root (or, by NAME, in
// ~/.gemini/projects.json). "" when neither says: older versions name
// the directory by a hash of the path, which cannot be turned back.
func geminiProjectRoot(file string) string {
	chats := filepath.Dir(file)
	if filepath.Base(chats) != "chats" {
		return ""
	}
	dir := filepath.Dir(chats)
	if b, err := readSmall(filepath.Join(dir, ".project_root")); err == nil {
		if root := strings.TrimSpace(string(b)); filepath.IsAbs(root) {
			return filepath.Clean(root)
		}
	}
	b, err := readSmall(filepath.Join(filepath.Dir(filepath.Dir(dir)), "projects.json"))
	if err != nil {
		return ""
	}
	var p struct {
		Projects map[string]string `json:"projects"`
	}
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	name := filepath.Base(dir)
	for root, n := range p.Projects {
		if n == name && filepath.IsAbs(root) {
			return filepath.Clean(root)
		}
	}
	return ""
}

// maxSmallFile bounds the side files replay reads whole.
const maxSmallFile = 1 << 20

// readSmall reads a file of at most maxSmallFile bytes.
func readSmall(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(io.LimitReader(f, maxSmallFile))
	return buf.Bytes(), err
}
