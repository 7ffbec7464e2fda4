package setup

import (
	"errors"
	"os"
	"reflect"
	"testing"
)

// FuzzMerge feeds arbitrary bytes to the merge of every agent's entries:
// it never panics, and either refuses the file or yields one the agent can
// read that holds the entries, that a second merge leaves alone, and from
// which taking the entries out gives back the original content.
func FuzzMerge(f *testing.F) {
	for sample := range samples(f) {
		if raw, err := os.ReadFile(sample); err == nil {
			f.Add(raw)
		}
	}
	for _, s := range []string{
		"", " ", "{}", "[]", "null", `{"env":null}`, `{"env":{"CLAUDE_CODE_SHELL":1}}`,
		`{"hooks":{"PreToolUse":[1,"x",{"matcher":"Bash","hooks":"no"}]}}`,
		"{\"hooks\":{\"BeforeTool\":[],},}", "{/*c*/\"hooks\"/*d*/:/*e*/{//f\n}}",
		`{"a":1,"a":2}`, "{\"\\u0065nv\":{}}", "\ufeff{}", "{\"env\":{\"X\":\"\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	jobs := map[string]*job{}
	for _, c := range []struct {
		agent string
		hook  bool
	}{{"claude", false}, {"claude", true}, {"codex", false}, {"gemini", false}} {
		j, err := goldenOptions(c.agent, c.hook).job()
		if err != nil {
			f.Fatal(err)
		}
		jobs[c.agent+map[bool]string{true: "-hook"}[c.hook]] = j
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for name, j := range jobs {
			merged, applied, _, err := j.merge(raw)
			if err != nil {
				var de *docError
				if !errors.As(err, &de) {
					t.Fatalf("%s: a refusal that is not about the file: %v", name, err)
				}
				continue
			}
			doc, err := parseDocument(merged, j.agent.comments)
			if err != nil {
				t.Fatalf("%s: merged file does not parse: %v\n%q", name, err, merged)
			}
			for _, e := range j.plan.edits {
				if !doc.has(e) {
					t.Fatalf("%s: merged file lacks %s:\n%q", name, dotted(e.path), merged)
				}
			}
			if _, more, _, err := j.merge(merged); err != nil || len(more) > 0 {
				t.Fatalf("%s: second merge: %v, %d more edits\n%q", name, err, len(more), merged)
			}
			for i := len(applied) - 1; i >= 0; i-- {
				if res, err := doc.revert(applied[i]); err != nil || res != revertDone {
					t.Fatalf("%s: revert %s: %v, %v\n%q", name, dotted(applied[i].Path), res, err, merged)
				}
			}
			orig, err := parseDocument(raw, j.agent.comments)
			if err != nil {
				t.Fatalf("%s: input that merged does not parse: %v", name, err)
			}
			back, err := parseDocument(doc.pack(), j.agent.comments)
			if err != nil {
				t.Fatalf("%s: reverted file does not parse: %v\n%q", name, err, doc.pack())
			}
			if a, b := decode(orig.root), decode(back.root); !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: revert did not give the original back:\n%q\n%q", name, raw, doc.pack())
			}
		}
	})
}
