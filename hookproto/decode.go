package hookproto

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/execgate/execgate/internal/jsonstrict"
)

// ReadInput reads a hook's whole input, keeping at most MaxInput+1 bytes
// (Decode refuses more). The rest is read and dropped rather than left
// unread: Codex takes a failed write to the hook's stdin for a failed hook,
// and runs the tool. It gives up when ctx is done.
func ReadInput(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		raw []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		var b bytes.Buffer
		n, err := b.ReadFrom(io.LimitReader(r, MaxInput+1))
		if err == nil && n > MaxInput {
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

// Answer decides on one hook input: bad input is an error (to be refused),
// a tool that is not a shell command gets NoOpinion, and a shell command
// goes to judge.
func (p Protocol) Answer(raw []byte, judge func(Request) Verdict) (Verdict, error) {
	req, shell, err := p.Decode(raw)
	if err != nil || !shell {
		return Verdict{}, err
	}
	return judge(req), nil
}

// Decode reads a hook input. shell is false, with no error, for a
// well-formed call of a tool that is not a shell command. A shell command
// whose directory cannot be known for certain (no cwd, or a relative one)
// is an error: judged elsewhere, its relative paths would name other files
// than the ones it touches.
func (p Protocol) Decode(raw []byte) (req Request, shell bool, err error) {
	if len(raw) > MaxInput {
		return req, false, fmt.Errorf("the hook input is larger than %d bytes", MaxInput)
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
	if event != p.Event {
		return req, false, fmt.Errorf("hook_event_name is %q; execgate hook %s answers %s", event, p.Name, p.Event)
	}
	tool, err := stringField(top, "tool_name", true)
	if err != nil {
		return req, false, err
	}
	if !slices.Contains(p.Tools, tool) {
		return req, false, nil
	}
	var input map[string]json.RawMessage
	if err := json.Unmarshal(top["tool_input"], &input); err != nil || input == nil {
		return req, false, fmt.Errorf("tool_input of %s is missing or not an object", tool)
	}
	if req.Command, err = stringField(input, "command", true); err != nil {
		return req, false, fmt.Errorf("tool_input.%w", err)
	}
	if strings.TrimSpace(req.Command) == "" {
		return req, false, errors.New("tool_input.command is empty")
	}
	if req.Cwd, req.Workspace, err = p.where(top, input); err != nil {
		return req, false, err
	}
	// Only read to know whether the agent would show its user an "ask":
	// a mode that is not a string is one it does not name, and no prompt
	// is presumed (see Protocol.Defers) — the request itself stands.
	req.PermissionMode, _ = stringField(top, "permission_mode", false)
	req.input = input
	return req, true, nil
}

// where finds the directory the command starts in: the input's cwd, or the
// tool's own directory argument resolved against it; and the workspace:
// the session's cwd, narrowed to the start directory when that lies inside
// it (a narrower workspace is only stricter). Both are judged as written,
// without looking at the file system, as the policy judges every path: a
// directory that does not exist is one the agent cannot run the command in.
func (p Protocol) where(top, input map[string]json.RawMessage) (cwd, workspace string, err error) {
	session, err := stringField(top, "cwd", true)
	switch {
	case err != nil:
		return "", "", fmt.Errorf("%w: execgate cannot tell which directory the command's paths are in", err)
	case !filepath.IsAbs(session):
		return "", "", fmt.Errorf("cwd %q is not an absolute path: execgate cannot tell which directory the command's paths are in", session)
	}
	session = filepath.Clean(session)
	cwd = session
	for _, key := range p.dirKeys {
		dir, err := stringField(input, key, false)
		if err != nil {
			return "", "", fmt.Errorf("tool_input.%w", err)
		}
		if dir == "" {
			continue // absent or empty: the agents run it in cwd
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(session, dir)
		}
		cwd = filepath.Clean(dir)
		break
	}
	workspace = session
	if within(cwd, session) {
		workspace = cwd
	}
	return cwd, workspace, nil
}

// within reports whether dir is root or below it; both are clean and
// absolute.
func within(dir, root string) bool {
	return dir == root || root == "/" || strings.HasPrefix(dir, root+"/")
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
