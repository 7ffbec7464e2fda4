package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// mockModel is a model server on 127.0.0.1 speaking one agent's API. It
// answers a conversation with N tool results with one shell tool call
// carrying the N+1th of its commands, and any later turn (or a side request
// without the shell tool, such as a title or a next-speaker check) with
// plain text. It keeps every request body, so that a test can read the tool
// results the CLI sent back.
type mockModel struct {
	srv      *httptest.Server
	commands []string
	api      modelAPI

	mu   sync.Mutex
	reqs []recorded
}

// recorded is one request the mock received.
type recorded struct {
	Method, Path string
	Body         []byte
}

// modelAPI is one model API: how to answer a request, and how to find the
// tool results in the requests the CLI sent.
type modelAPI interface {
	serve(m *mockModel, w http.ResponseWriter, r *http.Request, body []byte)
	toolResults(body []byte) []string
}

// finalText is what the mock answers once it has the tool's result.
const finalText = "All done."

// newMockModel starts a mock model server for api; it stops with the test.
func newMockModel(t *testing.T, api modelAPI, command string) *mockModel {
	t.Helper()
	return newScriptedModel(t, api, command)
}

// newScriptedModel starts a mock model server for api that calls the shell
// tool with each of commands in turn, one per turn.
func newScriptedModel(t *testing.T, api modelAPI, commands ...string) *mockModel {
	t.Helper()
	m := &mockModel{commands: commands, api: api}
	m.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.reqs = append(m.reqs, recorded{Method: r.Method, Path: r.URL.RequestURI(), Body: body})
		m.mu.Unlock()
		api.serve(m, w, r, body)
	}))
	// Loopback only, IPv4, whatever the machine's resolver says.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mock model server: %v", err)
	}
	m.srv.Listener = l
	m.srv.Start()
	t.Cleanup(m.srv.Close)
	return m
}

// next is the command to call the shell tool with once done tool results
// came back, and false when the script is over.
func (m *mockModel) next(done int) (string, bool) {
	if done < len(m.commands) {
		return m.commands[done], true
	}
	return "", false
}

// URL is the server's base address.
func (m *mockModel) URL() string { return m.srv.URL }

// requests returns what the mock received so far.
func (m *mockModel) requests() []recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

// toolResults are the tool results the CLI sent back, in order, without
// repeats (every later request carries the earlier ones again).
func (m *mockModel) toolResults() []string {
	var out []string
	for _, r := range m.requests() {
		for _, res := range m.api.toolResults(r.Body) {
			if !slices.Contains(out, res) {
				out = append(out, res)
			}
		}
	}
	return out
}

// describe lists the requests for a failure message.
func (m *mockModel) describe() string {
	var b strings.Builder
	for i, r := range m.requests() {
		body := string(r.Body)
		if len(body) > 400 {
			body = body[:400] + "…"
		}
		fmt.Fprintf(&b, "  request %d: %s %s %s\n", i+1, r.Method, r.Path, body)
	}
	return b.String()
}

// sse writes server-sent events: pairs of event name ("" for none) and
// JSON data.
func sse(w http.ResponseWriter, events ...any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for i := 0; i+1 < len(events); i += 2 {
		data, _ := json.Marshal(events[i+1])
		if name, _ := events[i].(string); name != "" {
			fmt.Fprintf(w, "event: %s\n", name)
		}
		fmt.Fprintf(w, "data: %s\n\n", data)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// anthropic is the Anthropic Messages API (Claude Code), streaming or not.
type anthropic struct{}

type anthropicRequest struct {
	Stream bool `json:"stream"`
	Tools  []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (anthropicRequest) blocks(raw json.RawMessage) []anthropicBlock {
	var bs []anthropicBlock
	if json.Unmarshal(raw, &bs) != nil {
		return nil
	}
	return bs
}

func (anthropic) serve(m *mockModel, w http.ResponseWriter, r *http.Request, body []byte) {
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"mock: not here"}}`, http.StatusNotFound)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		writeJSON(w, map[string]any{"input_tokens": 10})
		return
	}
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	hasBash := slices.ContainsFunc(req.Tools, func(t struct {
		Name string `json:"name"`
	}) bool {
		return t.Name == "Bash"
	})
	done := len(anthropic{}.toolResults(body))
	command, more := m.next(done)
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	var block map[string]any
	stop := "end_turn"
	if hasBash && more {
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_e2e_%d", done+1), "name": "Bash",
			"input": map[string]any{"command": command, "description": "Run the scenario's command"}}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": finalText}
	}
	msg := map[string]any{"id": "msg_e2e", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
		writeJSON(w, msg)
		return
	}
	start := map[string]any{"id": "msg_e2e", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}
	var blockStart, delta map[string]any
	if stop == "tool_use" {
		input, _ := json.Marshal(block["input"])
		blockStart = map[string]any{"type": "tool_use", "id": block["id"], "name": "Bash", "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
	} else {
		blockStart = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": finalText}
	}
	sse(w,
		"message_start", map[string]any{"type": "message_start", "message": start},
		"content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": blockStart},
		"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta},
		"content_block_stop", map[string]any{"type": "content_block_stop", "index": 0},
		"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 5}},
		"message_stop", map[string]any{"type": "message_stop"},
	)
}

func (anthropic) toolResults(body []byte) []string {
	var req anthropicRequest
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []string
	for _, msg := range req.Messages {
		for _, b := range req.blocks(msg.Content) {
			if b.Type != "tool_result" {
				continue
			}
			var s string
			if json.Unmarshal(b.Content, &s) != nil {
				var parts []anthropicBlock
				json.Unmarshal(b.Content, &parts)
				var texts []string
				for _, p := range parts {
					texts = append(texts, p.Text)
				}
				s = strings.Join(texts, "\n")
			}
			out = append(out, s)
		}
	}
	return out
}

// openAIResponses is the OpenAI Responses API, streaming (Codex).
type openAIResponses struct{}

type responsesRequest struct {
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Input []struct {
		Type   string          `json:"type"`
		CallID string          `json:"call_id"`
		Output json.RawMessage `json:"output"`
	} `json:"input"`
}

// codexShellArguments are the shell tools Codex may offer, with the
// arguments each takes.
var codexShellArguments = []struct {
	name string
	args func(command string) any
}{
	{"shell_command", func(c string) any { return map[string]any{"command": c} }},
	{"exec_command", func(c string) any { return map[string]any{"cmd": c} }},
	{"shell", func(c string) any { return map[string]any{"command": []string{"bash", "-lc", c}} }},
}

func (openAIResponses) serve(m *mockModel, w http.ResponseWriter, r *http.Request, body []byte) {
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		http.Error(w, `{"error":{"message":"mock: not here"}}`, http.StatusNotFound)
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var item map[string]any
	done := len(openAIResponses{}.toolResults(body))
	if command, more := m.next(done); more {
		for _, tool := range codexShellArguments {
			if slices.ContainsFunc(req.Tools, func(t struct {
				Type string `json:"type"`
				Name string `json:"name"`
			}) bool {
				return t.Name == tool.name
			}) {
				args, _ := json.Marshal(tool.args(command))
				item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_e2e_%d", done+1), "call_id": fmt.Sprintf("call_e2e_%d", done+1),
					"name": tool.name, "arguments": string(args), "status": "completed"}
				break
			}
		}
	}
	if item == nil {
		item = map[string]any{"type": "message", "id": "msg_e2e", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": finalText, "annotations": []any{}}}}
	}
	resp := map[string]any{"id": "resp_e2e", "object": "response", "status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}
	sse(w,
		"response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_e2e", "status": "in_progress", "output": []any{}}},
		"response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item},
		"response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item},
		"response.completed", map[string]any{"type": "response.completed", "response": resp},
	)
}

func (openAIResponses) toolResults(body []byte) []string {
	var req responsesRequest
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []string
	for _, in := range req.Input {
		if !strings.HasSuffix(in.Type, "_output") {
			continue
		}
		var s string
		if json.Unmarshal(in.Output, &s) != nil {
			s = string(in.Output)
		}
		out = append(out, s)
	}
	return out
}

// gemini is the Gemini API's generateContent and streamGenerateContent
// (Gemini CLI).
type gemini struct{}

type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string `json:"text"`
			FunctionResponse *struct {
				Name     string          `json:"name"`
				Response json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
}

func (gemini) serve(m *mockModel, w http.ResponseWriter, r *http.Request, body []byte) {
	path := r.URL.Path
	switch {
	case strings.HasSuffix(path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 10})
		return
	case !strings.HasSuffix(path, ":generateContent") && !strings.HasSuffix(path, ":streamGenerateContent"):
		http.Error(w, `{"error":{"code":404,"message":"mock: not here","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	hasShell := false
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			hasShell = hasShell || f.Name == "run_shell_command"
		}
	}
	var part map[string]any
	command, more := m.next(len(gemini{}.toolResults(body)))
	switch {
	case hasShell && more:
		part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command",
			"args": map[string]any{"command": command, "description": "Run the scenario's command"}}}
	case req.GenerationConfig.ResponseMimeType == "application/json":
		// A side question wanting JSON (the next-speaker check): the user
		// speaks next, so the CLI stops.
		part = map[string]any{"text": `{"reasoning": "The task is done.", "next_speaker": "user"}`}
	default:
		part = map[string]any{"text": finalText}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-2.5-pro",
	}
	if strings.HasSuffix(path, ":streamGenerateContent") {
		sse(w, "", resp)
		return
	}
	writeJSON(w, resp)
}

func (gemini) toolResults(body []byte) []string {
	var req geminiRequest
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse == nil {
				continue
			}
			var resp struct {
				Output string `json:"output"`
				Error  string `json:"error"`
			}
			if json.Unmarshal(p.FunctionResponse.Response, &resp) == nil && resp.Output+resp.Error != "" {
				out = append(out, strings.TrimSpace(resp.Output+"\n"+resp.Error))
				continue
			}
			out = append(out, string(p.FunctionResponse.Response))
		}
	}
	return out
}
