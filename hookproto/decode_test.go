package hookproto_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hookproto"
)

// TestDecodeWhere: the command is judged where it runs, against the
// session's workspace: the input's cwd, or the tool's own directory (Codex's
// workdir, Gemini's dir_path) resolved against it. Without an absolute cwd
// the directory cannot be known, and the request is refused. The paths need
// not exist: they are judged as written.
func TestDecodeWhere(t *testing.T) {
	const proj, home = "/home/u/proj", "/home/u"
	for _, tt := range []struct {
		name, agent string
		top         map[string]any // merged into the agent's request for "rm -r ./precious" in proj
		input       map[string]any // merged into its tool_input
		cwd, ws     string
		err         string
	}{
		{name: "claude in cwd", agent: "claude", cwd: proj, ws: proj},
		{name: "claude cwd not clean", agent: "claude", top: map[string]any{"cwd": proj + "/./x/.."}, cwd: proj, ws: proj},
		{name: "claude no cwd", agent: "claude", top: map[string]any{"cwd": nil}, err: "cwd is missing: execgate cannot tell which directory the command's paths are in"},
		{name: "claude relative cwd", agent: "claude", top: map[string]any{"cwd": "proj"}, err: `cwd "proj" is not an absolute path: execgate cannot tell which directory the command's paths are in`},
		{name: "claude empty cwd", agent: "claude", top: map[string]any{"cwd": ""}, err: `cwd "" is not an absolute path`},
		{name: "claude cwd not a string", agent: "claude", top: map[string]any{"cwd": 7}, err: "cwd is not a string"},
		{name: "claude ignores workdir", agent: "claude", input: map[string]any{"workdir": home}, cwd: proj, ws: proj},
		{name: "codex no workdir", agent: "codex", cwd: proj, ws: proj},
		{name: "codex workdir home", agent: "codex", input: map[string]any{"workdir": home}, cwd: home, ws: proj},
		{name: "codex workdir relative up", agent: "codex", input: map[string]any{"workdir": ".."}, cwd: home, ws: proj},
		{name: "codex workdir below", agent: "codex", input: map[string]any{"workdir": "sub/"}, cwd: proj + "/sub", ws: proj + "/sub"},
		{name: "codex workdir empty", agent: "codex", input: map[string]any{"workdir": ""}, cwd: proj, ws: proj},
		{name: "codex workdir null", agent: "codex", input: map[string]any{"workdir": nil}, err: "tool_input.workdir is not a string"},
		{name: "codex workdir but no cwd", agent: "codex", top: map[string]any{"cwd": nil}, input: map[string]any{"workdir": home}, err: "cwd is missing"},
		{name: "codex workdir relative, cwd relative", agent: "codex", top: map[string]any{"cwd": "proj"}, input: map[string]any{"workdir": "sub"}, err: "is not an absolute path"},
		{name: "gemini dir_path below", agent: "gemini", input: map[string]any{"dir_path": "sub"}, cwd: proj + "/sub", ws: proj + "/sub"},
		{name: "gemini dir_path outside", agent: "gemini", input: map[string]any{"dir_path": "/etc"}, cwd: "/etc", ws: proj},
		{name: "gemini directory", agent: "gemini", input: map[string]any{"directory": "../other"}, cwd: "/home/u/other", ws: proj},
		{name: "gemini dir_path not a string", agent: "gemini", input: map[string]any{"dir_path": []any{}}, err: "tool_input.dir_path is not a string"},
		{name: "root workspace", agent: "codex", top: map[string]any{"cwd": "/"}, input: map[string]any{"workdir": "etc"}, cwd: "/etc", ws: "/etc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := hookproto.ByName(tt.agent)
			require.True(t, ok)
			req, shell, err := p.Decode(request(t, p, "rm -r ./precious", proj, tt.top, tt.input))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.False(t, shell)
				return
			}
			require.NoError(t, err)
			assert.True(t, shell)
			assert.Equal(t, hookproto.Request{Command: "rm -r ./precious", Cwd: tt.cwd, Workspace: tt.ws}, where(req))
		})
	}
}

// request is p's Input for command in cwd with top's and input's keys set
// (a nil value deletes the key).
func request(t *testing.T, p hookproto.Protocol, command, cwd string, top, input map[string]any) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(p.Input(command, cwd), &m))
	set := func(dst, src map[string]any) {
		for k, v := range src {
			if v == nil {
				if _, isNull := src[k]; isNull && k == "workdir" {
					dst[k] = nil // an explicit null, as a version might send
					continue
				}
				delete(dst, k)
				continue
			}
			dst[k] = v
		}
	}
	set(m, top)
	set(m["tool_input"].(map[string]any), input)
	raw, err := json.Marshal(m)
	require.NoError(t, err)
	return raw
}
