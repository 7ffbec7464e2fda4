package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// transcriptScript is the session the mock model plays for each agent: a
// few ordinary commands, one that changes directory, a write and a
// deletion that the default policy asks about (refused, with nobody to
// ask), a loop over several lines, and a patch in Codex's own form.
var transcriptScript = []string{
	"git status",
	"ls -la",
	"cd sub && pwd",
	"git log --oneline -1",
	"echo hi > notes.txt",
	"rm -rf ~/precious",
	"for f in *; do\n  echo \"$f\"\ndone",
	"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\nEOF",
}

// fixtureHome stands for the world's home directory in the kept
// transcripts; testdata/replay/README.md says how tests put a real
// directory in its place.
const fixtureHome = "/tmp/execgate-replay-fixture"

// replayed is one line of `execgate replay --jsonl`.
type replayed struct {
	Command  string `json:"command"`
	Agent    string `json:"agent"`
	Cwd      string `json:"cwd"`
	Unknown  string `json:"unknownDirectory"`
	Risk     string `json:"risk"`
	Decision string `json:"decision"`
}

// TestTranscripts drives each agent CLI through transcriptScript by its
// hook route, then replays the transcript the CLI wrote with `execgate
// replay --jsonl`: it must find the commands the model sent, in order,
// each in the directory it ran in, and judge each as the hook did (the
// same risk; allowed exactly when the hook allowed it). With
// EXECGATE_E2E_UPDATE=1 the transcripts are kept, redacted, as the
// fixtures in testdata/replay/captured.
func TestTranscripts(t *testing.T) {
	enabled(t)
	pins := readPins(t)
	for _, a := range agents {
		t.Run(a.name, func(t *testing.T) {
			p := pinFor(pins, a.name)
			bin := install(t, p)
			w := newWorld(t)
			must(t, os.MkdirAll(filepath.Join(w.work, "sub"), 0o755))
			m := newScriptedModel(t, a.api, transcriptScript...)
			env := a.wire(t, w, routeHook, m)
			r := w.runAgent(a.argv(bin), env...)
			if got := len(m.toolResults()); got != len(transcriptScript) {
				t.Fatalf("%s ran %d of the %d commands\nstdout %s\nstderr %s", a.name, got, len(transcriptScript), r.stdout, r.stderr)
			}
			dir := transcriptDir(w, a.name)
			out := w.execgate("replay", "--jsonl", dir)
			var got []replayed
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var rp replayed
				if err := json.Unmarshal([]byte(line), &rp); err != nil {
					t.Fatalf("replay --jsonl: %q: %v\n%s", line, err, out)
				}
				got = append(got, rp)
			}
			checkReplayed(t, w, a, got)
			if os.Getenv("EXECGATE_E2E_UPDATE") == "1" {
				keepTranscripts(t, w, a.name, dir)
			}
		})
	}
}

// transcriptDir is where agent keeps its transcripts in w.
func transcriptDir(w *world, agent string) string {
	return filepath.Join(agentDir(w, agent), map[string]string{"claude": "projects", "codex": "sessions", "gemini": "tmp"}[agent])
}

// agentDir is agent's own directory in w (~/.claude, ~/.codex, ~/.gemini).
func agentDir(w *world, agent string) string { return filepath.Join(w.home, "."+agent) }

func checkReplayed(t *testing.T, w *world, a agentKind, got []replayed) {
	t.Helper()
	want := slices.Clone(transcriptScript)
	if a.name == "codex" {
		want = want[:len(want)-1] // Codex applies its patch itself: no command
	}
	var commands []string
	for _, g := range got {
		commands = append(commands, g.Command)
	}
	if !slices.Equal(commands, want) {
		t.Fatalf("replay found %q, want %q", commands, want)
	}
	audit := map[string][]string{} // command → the hook's decisions
	risks := map[string]string{}
	for _, ev := range w.audit() {
		if ev.Source == "hook" && (ev.Event == "exec.allowed" || ev.Event == "exec.denied" || ev.Event == "exec.deferred") {
			audit[ev.Command] = append(audit[ev.Command], ev.Decision)
			risks[ev.Command] = ev.Risk
		}
	}
	for i, g := range got {
		if g.Agent != a.policy {
			t.Errorf("%q judged as agent %q, want %q", g.Command, g.Agent, a.policy)
		}
		wantCwd := w.work
		if a.name == "claude" && i > 2 {
			wantCwd = filepath.Join(w.work, "sub") // Claude Code stays where cd left it
		}
		if g.Cwd != wantCwd || g.Unknown != "" {
			t.Errorf("%q: judged in %q (unknown: %q), want %q", g.Command, g.Cwd, g.Unknown, wantCwd)
		}
		decisions, ok := audit[g.Command]
		if !ok {
			if g.Command != transcriptScript[len(transcriptScript)-1] {
				t.Errorf("%q: the hook did not judge it (audit:%s)", g.Command, describeAudit(w))
			}
			continue
		}
		// A hook that rewrites the command to run through the shim allows
		// what replay runs confined.
		replayAllows := g.Decision == "allow" || g.Decision == "confined" && confines(a.name, routeHook)
		if name, _, _ := strings.Cut(g.Command, " "); replayAllows && decisions[0] != "allow" && g.Decision == "confined" {
			// The hook rewrites only what runs the same in the shim's
			// child shell: not a name that is no program on PATH (a
			// function of the user's shell, perhaps), which asks as
			// before (docs/sandbox.md, the hook route).
			if _, err := exec.LookPath(name); err != nil {
				replayAllows = false
			}
		}
		if risks[g.Command] != g.Risk || (decisions[0] == "allow") != replayAllows {
			t.Errorf("%q: replay says %s/%s, the hook said %s/%s", g.Command, g.Risk, g.Decision, risks[g.Command], decisions[0])
		}
	}
}

// keepTranscripts copies the transcripts under dir into
// testdata/replay/captured/AGENT, laid out as in the agent's own
// directory (captured/claude/projects/… for ~/.claude/projects/…), redacted: the world's home becomes
// fixtureHome, and any string longer than maxKept (the agents' own
// prompts, long tool output) becomes a note of its length. Gemini CLI's
// project files beside its chats are kept too: they say which directory
// a chat ran in.
func keepTranscripts(t *testing.T, w *world, agent, dir string) {
	t.Helper()
	dst := filepath.Join("..", "testdata", "replay", "captured", agent)
	must(t, os.RemoveAll(dst))
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		base := filepath.Base(path)
		if !strings.HasSuffix(base, ".jsonl") && !strings.HasSuffix(base, ".json") && base != ".project_root" {
			return nil
		}
		rel, err := filepath.Rel(agentDir(w, agent), path)
		if err != nil {
			return err
		}
		rel = strings.ReplaceAll(rel, claudeProjectName(w.home), claudeProjectName(fixtureHome))
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		kept, err := redactTranscript(raw, w.home, base == ".project_root")
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, secret := range []string{"sk-ant-", "e2e-dummy", w.home, strings.TrimPrefix(w.home, "/")} {
			if bytes.Contains(kept, []byte(secret)) {
				return fmt.Errorf("%s: %q is still in it after redaction", path, secret)
			}
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, kept, 0o644)
	})
	must(t, err)
	// projects.json sits above the transcripts' directory.
	if agent == "gemini" {
		raw, err := os.ReadFile(filepath.Join(agentDir(w, agent), "projects.json"))
		must(t, err)
		kept, err := redactTranscript(raw, w.home, false)
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dst, "projects.json"), kept, 0o644))
	}
	t.Logf("kept %s's transcripts in %s", agent, dst)
}

// claudeProjectName is the directory name Claude Code gives a project's
// sessions: its path with every character but letters and digits a dash.
func claudeProjectName(home string) string {
	work := filepath.Join(home, "work")
	b := []byte(work)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// maxKept is the longest string a kept transcript keeps.
const maxKept = 400

// redactTranscript puts fixtureHome for home and shortens long strings,
// line by line for JSON Lines (each line's keys in their order), keeping
// the shape of every record. plain is for a text file (.project_root).
func redactTranscript(raw []byte, home string, plain bool) ([]byte, error) {
	raw = bytes.ReplaceAll(raw, []byte(home), []byte(fixtureHome))
	if plain {
		return raw, nil
	}
	if json.Valid(raw) { // one document, not JSON Lines
		var out bytes.Buffer
		err := redactValue(&out, json.NewDecoder(bytes.NewReader(raw)))
		out.WriteByte('\n')
		return out.Bytes(), err
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := redactValue(&out, json.NewDecoder(bytes.NewReader(sc.Bytes()))); err != nil {
			return nil, err
		}
		out.WriteByte('\n')
	}
	return out.Bytes(), sc.Err()
}

// redactValue copies one JSON value token by token, shortening long
// strings.
func redactValue(out *bytes.Buffer, dec *json.Decoder) error {
	dec.UseNumber()
	type frame struct {
		object bool
		n      int
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		closing := tok == json.Delim('}') || tok == json.Delim(']')
		if len(stack) > 0 && !closing {
			top := &stack[len(stack)-1]
			switch {
			case top.object && top.n%2 == 1:
				out.WriteByte(':')
			case top.n > 0:
				out.WriteByte(',')
			}
			top.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			out.WriteString(v.String())
			if v == '{' || v == '[' {
				stack = append(stack, frame{object: v == '{'})
			} else {
				stack = stack[:len(stack)-1]
			}
		case string:
			isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].n%2 == 1
			if !isKey && len(v) > maxKept {
				v = fmt.Sprintf("[redacted: %d bytes]", len(v))
			}
			b, _ := marshalNoEscape(v)
			out.Write(b)
		case json.Number:
			out.WriteString(v.String())
		case bool:
			fmt.Fprint(out, v)
		case nil:
			out.WriteString("null")
		}
		if len(stack) == 0 {
			return nil
		}
	}
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}
