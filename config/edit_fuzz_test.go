package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/execgate/execgate/pattern"
)

// fuzzAgent is the agent the fuzzed edits touch; everything else in the
// file must come through them untouched.
const fuzzAgent = "fuzz-edit-agent"

// FuzzStoreUpdate writes raw as the configuration file and applies one of
// the edit functions to it through Store.Update, then tries to install raw
// over a valid file as `execgate config edit` would. It asserts that a file
// ParseConfig rejects is never rewritten (byte for byte) and never
// installed, and that an edit of a file it accepts keeps every other entry:
// the decoded tree outside the edited agent is what it was.
func FuzzStoreUpdate(f *testing.F) {
	vectors, _ := filepath.Glob(filepath.Join("testdata", "config", "*.json"))
	for _, v := range vectors {
		if strings.HasSuffix(v, ".want.json") {
			continue
		}
		if raw, err := os.ReadFile(v); err == nil {
			for op := range byte(5) {
				f.Add(raw, op)
			}
		}
	}
	f.Add([]byte(""), byte(0))
	f.Add([]byte(`{"version": 1, "agents": {"fuzz-edit-agent": {"allowlist": [{"pattern": "ls"}]}, "*": {"denylist": [{"pattern": "rm **"}]}}, "x": [1.50, 1e3]}`), byte(3))
	f.Fuzz(func(t *testing.T, raw []byte, op byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "exec-approvals.json")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, parseErr := ParseConfig(raw)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s := &Store{Path: path}
		_, err := s.Update(ctx, "", func(d *Document) error { return fuzzEdit(d, op) })
		after, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if parseErr != nil || err != nil {
			if parseErr != nil && err == nil {
				t.Fatalf("Update edited a file ParseConfig rejects (%v)", parseErr)
			}
			if !bytes.Equal(after, raw) {
				t.Fatalf("a refused update rewrote the file (%v):\n%q\n->\n%q", err, raw, after)
			}
		} else {
			if _, _, err := ParseConfig(after); err != nil {
				t.Fatalf("Update wrote a file ParseConfig rejects: %v", err)
			}
			before, _ := decodeObject(raw)
			now, err := decodeObject(after)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := before["version"]; !ok {
				before["version"] = json.Number("1")
			}
			stripAgent(before, op)
			stripAgent(now, op)
			if !reflect.DeepEqual(before, now) {
				t.Fatalf("entries outside the edited agent changed:\n%#v\n->\n%#v", before, now)
			}
		}

		// Installing raw by hand edit: only if it parses, and byte for byte.
		edit := filepath.Join(dir, "edited.json")
		valid := []byte("{\"version\": 1}\n")
		if err := os.WriteFile(edit, valid, 0o600); err != nil {
			t.Fatal(err)
		}
		e, err := (&Store{Path: edit}).BeginEdit()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(e.Copy, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = e.Install(ctx)
		got, _ := os.ReadFile(edit)
		var invalid *InvalidEditError
		switch {
		case parseErr != nil:
			if !errors.As(err, &invalid) || !bytes.Equal(got, valid) {
				t.Fatalf("an invalid edit was installed (err %v): %q", err, got)
			}
			if kept, _ := os.ReadFile(e.Copy); !bytes.Equal(kept, raw) {
				t.Fatal("the invalid edit's copy was not kept")
			}
		case err != nil:
			t.Fatalf("a valid edit was refused: %v", err)
		case !bytes.Equal(got, raw):
			t.Fatalf("a valid edit was not installed byte for byte")
		}
	})
}

// fuzzEdit applies one of Document's edit functions to fuzzAgent.
func fuzzEdit(d *Document, op byte) error {
	switch op % 5 {
	case 0:
		d.AddAllowlist(fuzzAgent, pattern.Entry{Pattern: "git status", Source: "fuzz"})
	case 1:
		d.AddDenylist(fuzzAgent, pattern.Entry{Pattern: "rm -rf **"})
	case 2:
		return d.SetPolicyField(fuzzAgent, "ask", "always")
	case 3:
		d.RemoveEntry(fuzzAgent, "ls")
	case 4:
		d.Touch(fuzzAgent, "ls", "ls -l", "/bin/ls", time.UnixMilli(1))
	}
	return nil
}

// stripAgent removes fuzzAgent (and an agents object left empty by that),
// and for Touch, which also looks in "*"'s allowlist, what it records there.
func stripAgent(root map[string]any, op byte) {
	agents, ok := root["agents"].(map[string]any)
	if !ok {
		return
	}
	delete(agents, fuzzAgent)
	if star, ok := agents[WildcardAgent].(map[string]any); ok && op%5 == 4 {
		items, _ := star["allowlist"].([]any)
		for _, it := range items {
			if obj, ok := it.(map[string]any); ok && obj["pattern"] == "ls" {
				delete(obj, "lastUsedAt")
				delete(obj, "lastUsedCommand")
				delete(obj, "lastResolvedPath")
			}
		}
	}
	if len(agents) == 0 {
		delete(root, "agents")
	}
}
