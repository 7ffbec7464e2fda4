package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// readDocument reads a transcript that is one JSON document:
//
//   - a Gemini CLI chat of the versions before 0.5x
//     (~/.gemini/tmp/HASH/chats/session-….json): {"sessionId",
//     "projectHash", "messages": [{"type": "gemini", "toolCalls": […]}]};
//   - a Gemini CLI checkpoint or log (checkpoint-TAG.json, logs.json):
//     an array of the model's contents ({"role", "parts": [{"functionCall"}]})
//     or of the user's prompts, which hold no commands;
//   - a mini-swe-agent trajectory (*.traj.json, documented in its
//     docs/usage/output_files.md and docs/advanced/v2_migration.md):
//     {"info": {"config": {"environment": {"cwd"}}}, "messages": […]}, the
//     assistant's commands in each message's extra.actions (v2), in its
//     tool_calls, or (v1) in the one ```bash block of its content;
//   - a SWE-agent trajectory (*.traj, documented in its
//     docs/usage/trajectories.md): {"trajectory": [{"action", "state":
//     {"working_dir"}}], "history": […]}, each step's action run in the
//     working directory the step before left.
//
// The document is read token by token: a file of any size is held one
// message or step at a time.
func readDocument(in *input, s Sink) error {
	// A trajectory is one session; it names none, its file does.
	d := &docReader{in: in, s: s, doc: newJSONDoc(in.r, in.at), session: in.name}
	err := d.top()
	if err == nil {
		return nil
	}
	if se, ok := err.(sinkError); ok {
		return se.err
	}
	var ce ctxError
	if errors.As(err, &ce) {
		return err
	}
	line, what := d.doc.describe(err)
	if d.commands > 0 {
		what += fmt.Sprintf(" (the %d commands before it were read)", d.commands)
	}
	in.report(s, line, what)
	return nil
}

// sinkError carries the sink's own error out of the walk unchanged.
type sinkError struct{ err error }

func (e sinkError) Error() string { return e.err.Error() }

type docReader struct {
	in       *input
	s        Sink
	doc      *jsonDoc
	session  string
	commands int

	gemini *gemini
	// cwd is where a trajectory's commands run: mini-swe-agent's
	// configured directory, or the directory SWE-agent's last step left.
	cwd string
	// bashBlock finds mini-swe-agent v1's one ```bash block.
	bashBlock *regexp.Regexp
}

func (d *docReader) top() error {
	tok, err := d.doc.dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return d.object()
	case json.Delim('['):
		return d.contents()
	}
	return fmt.Errorf("not a transcript replay reads: the document is %s, not an object or an array", describeToken(tok))
}

// object reads the keys of the top-level object (its '{' read).
func (d *docReader) object() error {
	for d.doc.dec.More() {
		tok, err := d.doc.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		switch key {
		case "sessionId":
			var id string
			if _, err := d.decode(&id, "sessionId"); err != nil && err != errSkipped {
				return err
			}
			if id != "" {
				d.geminiChat().session = id
			}
		case "projectHash":
			d.geminiChat()
			err = d.doc.skip()
		case "info":
			err = d.info()
		case "messages":
			err = d.doc.array(d.message)
		case "trajectory":
			err = d.doc.array(d.step)
		default:
			err = d.doc.skip() // SWE-agent's history restates the steps
		}
		if err != nil {
			return err
		}
	}
	return d.doc.delim('}')
}

// decode reads the next value into v; a value of the wrong shape is
// reported and skipped (ok false), any other error ends the document.
func (d *docReader) decode(v any, what string) (line int, err error) {
	line, err = d.doc.decode(v)
	if err != nil && recoverable(err) {
		d.in.report(d.s, line, what+": "+describeJSON(err))
		return line, errSkipped
	}
	return line, err
}

// errSkipped marks a record reported and skipped; the walk goes on.
const errSkipped = constError("skipped")

func (d *docReader) geminiChat() *gemini {
	if d.gemini == nil {
		d.gemini = newGemini(d.in, d)
		d.gemini.session = d.session
	}
	return d.gemini
}

// info reads a mini-swe-agent trajectory's info: the directory its
// environment runs commands in.
func (d *docReader) info() error {
	var info struct {
		Config struct {
			Environment struct {
				Cwd string `json:"cwd"`
			} `json:"environment"`
		} `json:"config"`
	}
	if _, err := d.decode(&info, "info"); err != nil && err != errSkipped {
		return err
	}
	if cwd := info.Config.Environment.Cwd; cwd != "" {
		d.cwd = cwd
	}
	return nil
}

// docMessage is a message of a Gemini CLI chat or of a mini-swe-agent
// trajectory (an OpenAI chat message with mini-swe-agent's "extra").
type docMessage struct {
	geminiMessage
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Extra   *struct {
		Actions   *[]struct{ Command *string } `json:"actions"`
		Timestamp *float64                     `json:"timestamp"`
	} `json:"extra"`
	OpenAICalls []struct {
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func (d *docReader) message() error {
	var m docMessage
	line, err := d.decode(&m, "a message")
	switch {
	case err == errSkipped:
		return nil
	case err != nil:
		return err
	case m.Type == "gemini" || len(m.ToolCalls) > 0:
		return d.geminiChat().message(line, m.geminiMessage)
	case m.Role == "assistant":
		return d.miniActions(line, m)
	}
	return nil
}

// miniActions reports the commands of one mini-swe-agent assistant
// message.
func (d *docReader) miniActions(line int, m docMessage) error {
	c := Command{Cwd: d.cwd, Session: d.session, File: d.in.name, Line: line}
	if m.Extra != nil && m.Extra.Timestamp != nil {
		sec := *m.Extra.Timestamp
		c.Time = time.Unix(int64(sec), int64((sec-float64(int64(sec)))*1e9)).UTC()
	}
	switch {
	case m.Extra != nil && m.Extra.Actions != nil: // v2: the actions it parsed
		for _, a := range *m.Extra.Actions {
			if a.Command == nil {
				d.in.report(d.s, line, "an action without a command")
				continue
			}
			c.Text = *a.Command
			if err := d.Command(c); err != nil {
				return err
			}
		}
	case len(m.OpenAICalls) > 0:
		for _, call := range m.OpenAICalls {
			if call.Function.Name != "bash" {
				continue
			}
			var args struct {
				Command *string `json:"command"`
			}
			if err := json.Unmarshal([]byte(call.Function.Arguments), &args); err != nil || args.Command == nil {
				d.in.report(d.s, line, "a bash tool call whose arguments have no command")
				continue
			}
			c.Text = *args.Command
			if err := d.Command(c); err != nil {
				return err
			}
		}
	default: // v1: the one ```bash block of the text, else nothing ran
		if text, ok := d.bashAction(m.Content); ok {
			c.Text = text
			return d.Command(c)
		}
	}
	return nil
}

// bashAction is the command of a mini-swe-agent v1 message: its content
// holds exactly one ```bash block (with none, or more than one, it ran
// nothing and told the model so).
func (d *docReader) bashAction(content json.RawMessage) (string, bool) {
	var text string
	if json.Unmarshal(content, &text) != nil {
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(content, &parts) != nil {
			return "", false
		}
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		text = b.String()
	}
	if d.bashBlock == nil {
		d.bashBlock = regexp.MustCompile("(?s)```bash\\s*\\n(.*?)\\n```")
	}
	found := d.bashBlock.FindAllStringSubmatch(text, 2)
	if len(found) != 1 {
		return "", false
	}
	return strings.TrimSpace(found[0][1]), true
}

// step reads one step of a SWE-agent trajectory.
func (d *docReader) step() error {
	var st struct {
		Action *string         `json:"action"`
		State  json.RawMessage `json:"state"`
	}
	line, err := d.decode(&st, "a step")
	if err == errSkipped {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Action != nil && strings.TrimSpace(*st.Action) != "" {
		c := Command{Text: strings.TrimSpace(*st.Action), Cwd: d.cwd, Session: d.session, File: d.in.name, Line: line}
		if err := d.Command(c); err != nil {
			return err
		}
	}
	// The state after the step: where the next one starts. SWE-agent 0.x
	// wrote it as a JSON string holding the object.
	var state struct {
		WorkingDir string `json:"working_dir"`
	}
	raw := st.State
	var inner string
	if json.Unmarshal(raw, &inner) == nil {
		raw = json.RawMessage(inner)
	}
	if json.Unmarshal(raw, &state) == nil && state.WorkingDir != "" {
		d.cwd = state.WorkingDir
	}
	return nil
}

// contents reads a top-level array (its '[' read): a Gemini CLI
// checkpoint's contents, or its log of prompts.
func (d *docReader) contents() error {
	for d.doc.dec.More() {
		var el struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionCall *struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		}
		line, err := d.decode(&el, "a content")
		if err == errSkipped {
			continue
		}
		if err != nil {
			return err
		}
		for _, p := range el.Parts {
			if p.FunctionCall == nil || p.FunctionCall.Name != geminiRunShell {
				continue
			}
			call := geminiCall{ID: p.FunctionCall.ID, Name: geminiRunShell}
			if err := json.Unmarshal(p.FunctionCall.Args, &call.Args); err != nil {
				d.in.report(d.s, line, "run_shell_command args: "+describeJSON(err))
				continue
			}
			if err := d.geminiChat().message(line, geminiMessage{ToolCalls: []geminiCall{call}}); err != nil {
				return err
			}
		}
	}
	return d.doc.delim(']')
}

// Command passes a command on, counting it; the sink's error ends the
// walk as it is.
func (d *docReader) Command(c Command) error {
	d.commands++
	if err := d.s.Command(c); err != nil {
		return sinkError{err}
	}
	return nil
}

func (d *docReader) Problem(p Problem)             { d.s.Problem(p) }
func (d *docReader) Skipped(c Command, why string) { d.s.Skipped(c, why) }
