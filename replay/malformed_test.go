package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// transcriptFixture is one transcript of testdata/replay: its name as a
// reader sees it and its bytes.
type transcriptFixture struct {
	name string
	raw  []byte
}

func transcriptFixtures(t testing.TB) []transcriptFixture {
	t.Helper()
	var out []transcriptFixture
	root := fixtures(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !isTranscriptName(path) && !strings.HasSuffix(path, ".traj.json") {
			return err
		}
		raw, err := os.ReadFile(path)
		out = append(out, transcriptFixture{name: path, raw: raw})
		return err
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(out), 6)
	return out
}

// readBytes reads raw as the transcript named name.
func readBytes(t testing.TB, name string, raw []byte) *collect {
	t.Helper()
	c := &collect{}
	require.NoError(t, Read(name, bytes.NewReader(raw), bytes.NewReader(raw), c))
	return c
}

func texts(cs []Command) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}

// lineEnds are the offsets where each line's content ends (before its
// newline); line n is lineEnds[n-1].
func lineEnds(raw []byte) []int {
	var ends []int
	for i, b := range raw {
		if b == '\n' {
			ends = append(ends, i)
		}
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		ends = append(ends, len(raw))
	}
	return ends
}

// cutPoints are where a file is cut short: every line's end and start,
// and the middle of every line.
func cutPoints(raw []byte) []int {
	var cuts []int
	start := 0
	for _, end := range lineEnds(raw) {
		cuts = append(cuts, start, (start+end)/2, end)
		start = end + 1
	}
	return cuts
}

// TestTruncated cuts every transcript short at every line and in the
// middle of every line, as a crash or a session still being written
// leaves it: the commands before the cut are all found, none after it,
// and a cut inside a record is one clear problem line.
func TestTruncated(t *testing.T) {
	for _, fx := range transcriptFixtures(t) {
		t.Run(filepath.Base(fx.name), func(t *testing.T) {
			full := readBytes(t, fx.name, fx.raw)
			require.Empty(t, full.problems)
			require.NotEmpty(t, full.commands)
			jsonl := strings.HasSuffix(fx.name, ".jsonl")
			ends := lineEnds(fx.raw)
			prev := 0
			for _, cut := range cutPoints(fx.raw) {
				got := readBytes(t, fx.name, fx.raw[:cut])
				n := len(got.commands)
				require.Equal(t, texts(full.commands[:n]), texts(got.commands), "cut at %d: not a prefix", cut)
				assert.GreaterOrEqual(t, n, prev, "cut at %d: fewer commands than a shorter cut", cut)
				prev = n
				assert.LessOrEqual(t, len(got.problems), 1, "cut at %d: %v", cut, got.problems)
				for _, p := range got.problems {
					assert.Equal(t, fx.name, p.File)
					assert.True(t, p.Line >= 1 && p.Line <= len(ends), "cut at %d: problem on line %d of %d", cut, p.Line, len(ends))
				}
				if !jsonl {
					continue
				}
				// JSON Lines: exactly the commands of the complete lines.
				want := 0
				for _, c := range full.commands {
					if ends[c.Line-1] <= cut {
						want++
					}
				}
				assert.Equal(t, want, n, "cut at %d", cut)
				atBoundary := cut == 0 || fx.raw[cut-1] == '\n' || slices.Contains(ends, cut)
				if atBoundary {
					assert.Empty(t, got.problems, "cut at %d, a line's end", cut)
				} else if len(got.problems) == 1 {
					assert.Contains(t, got.problems[0].What, "ends in the middle of a record", "cut at %d", cut)
				}
			}
		})
	}
}

// TestLines: a command's line is where its record starts — the line of
// a JSON Lines record, the opening brace of a document's message or step.
func TestLines(t *testing.T) {
	for _, fx := range transcriptFixtures(t) {
		lines := strings.Split(string(fx.raw), "\n")
		for _, c := range readBytes(t, fx.name, fx.raw).commands {
			require.True(t, c.Line >= 1 && c.Line <= len(lines), "%s: line %d", c.Where(), c.Line)
			line := lines[c.Line-1]
			if strings.HasSuffix(fx.name, ".jsonl") {
				assert.Contains(t, line, strings.Fields(c.Text)[0], c.Where())
			} else {
				assert.Equal(t, "{", strings.TrimSpace(line), c.Where())
			}
		}
	}
}

// TestMalformedRecord puts a record that is not JSON, and one that is
// JSON of the wrong shape, between two lines of each JSON Lines
// transcript: each is one problem line naming its line, and every command
// is still found.
func TestMalformedRecord(t *testing.T) {
	for _, fx := range transcriptFixtures(t) {
		if !strings.HasSuffix(fx.name, ".jsonl") {
			continue
		}
		t.Run(filepath.Base(fx.name), func(t *testing.T) {
			full := readBytes(t, fx.name, fx.raw)
			lines := bytes.SplitAfter(fx.raw, []byte("\n"))
			for _, bad := range []string{
				`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":`,
				"\x00\x01 not json at all",
				`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":7}}`,
				`{"type":"assistant","message":{"content":"Bash"},"cwd":5}`,
				`{"id":"x","type":"gemini","toolCalls":[{"name":"run_shell_command","args":{"command":["ls"]}}]}`,
			} {
				for _, at := range []int{1, len(lines) / 2, len(lines) - 1} {
					var b bytes.Buffer
					for i, l := range lines {
						if i == at {
							b.WriteString(bad + "\n")
						}
						b.Write(l)
					}
					got := readBytes(t, fx.name, b.Bytes())
					assert.Equal(t, texts(full.commands), texts(got.commands), "%q at line %d", bad, at+1)
					if len(got.problems) > 0 {
						require.Len(t, got.problems, 1, "%q at line %d", bad, at+1)
						assert.Equal(t, at+1, got.problems[0].Line, "%q: %s", bad, got.problems[0])
					}
					if !json.Valid([]byte(bad)) {
						assert.Len(t, got.problems, 1, "%q at line %d: not reported", bad, at+1)
					}
				}
			}
		})
	}
}

// TestNotATranscript: a file of garbage says so in a bounded number of
// lines, whatever its length.
func TestNotATranscript(t *testing.T) {
	raw := bytes.Repeat([]byte("garbage line\n"), 10000)
	got := readBytes(t, "x.jsonl", raw)
	assert.Empty(t, got.commands)
	assert.Len(t, got.problems, maxProblemsPerFile+1)
	assert.Equal(t, fmt.Sprintf("x.jsonl: %d more records could not be read (not listed)", 10000-maxProblemsPerFile), got.problems[maxProblemsPerFile].String())

	got = readBytes(t, "notes.txt", []byte("hello"))
	require.Len(t, got.problems, 1)
	assert.Contains(t, got.problems[0].String(), "notes.txt: not a transcript replay reads")

	for _, doc := range []string{`"a string"`, `7`, `{"messages": 3}`, `{"trajectory": [1, 2]}`, `[{"role": 5}]`} {
		got = readBytes(t, "x.traj.json", []byte(doc))
		assert.Empty(t, got.commands, doc)
		assert.NotEmpty(t, got.problems, doc)
	}
}

// TestDuplicateRecords: a tool call recorded again (a message rewritten
// as it streamed, a history restated when a session resumes, a record
// written twice) counts once.
func TestDuplicateRecords(t *testing.T) {
	for _, fx := range transcriptFixtures(t) {
		if !strings.HasSuffix(fx.name, ".jsonl") {
			continue
		}
		full := readBytes(t, fx.name, fx.raw)
		var twice bytes.Buffer
		for _, l := range bytes.SplitAfter(fx.raw, []byte("\n")) {
			twice.Write(l)
			twice.Write(l)
		}
		got := readBytes(t, fx.name, twice.Bytes())
		assert.Equal(t, texts(full.commands), texts(got.commands), fx.name)
		assert.Empty(t, got.problems, fx.name)
	}
	// Gemini CLI restating the history in a {"$set": {"messages": …}}.
	chat := `{"sessionId":"s1","projectHash":"h","startTime":"2026-01-01T00:00:00Z","kind":"main"}
{"id":"m1","type":"gemini","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"make test"}}]}
{"$set":{"messages":[{"id":"m1","type":"gemini","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"make test"}}]},{"id":"m2","type":"gemini","toolCalls":[{"id":"c2","name":"run_shell_command","args":{"command":"make lint","dir_path":"sub"}}]}]}}
`
	got := readBytes(t, "/h/.gemini/tmp/p/chats/session-1.jsonl", []byte(chat))
	assert.Equal(t, []string{"make test", "make lint"}, texts(got.commands))
	assert.Empty(t, got.problems)
	for _, c := range got.commands {
		assert.Equal(t, "s1", c.Session)
	}
}
