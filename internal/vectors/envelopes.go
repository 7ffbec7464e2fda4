// Package vectors reads the test vectors in testdata/ that the tests of
// several packages share, so that each is described in one place.
package vectors

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Envelopes are testdata/envelopes/shapes.json: agents' envelopes as the
// agents send them, the payloads to put in them, and tampered envelopes
// that must not be taken for agents' ones.
type Envelopes struct {
	Shapes   []Shape   `json:"shapes"`
	Payloads []Payload `json:"payloads"`
	Tampered []struct {
		Name string   `json:"name"`
		Argv []string `json:"argv"`
	} `json:"tampered"`
}

// Shape is one agent's envelope: an argv template.
type Shape struct {
	Name string `json:"name"`
	// Agent is the policy id of the agent whose envelope this is; "" for
	// a shape that is no envelope (the payload is the whole command).
	Agent string   `json:"agent"`
	Argv  []string `json:"argv"`
	// NoHeredoc is set for a shape that cannot carry a here-document.
	NoHeredoc bool `json:"noHeredoc"`
}

// Payload is a command as the model wrote it.
type Payload struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Heredoc bool   `json:"heredoc"`
}

// ReadEnvelopes reads the envelope vectors.
func ReadEnvelopes() (Envelopes, error) {
	var v Envelopes
	path := filepath.Join(root(), "testdata", "envelopes", "shapes.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// Fill substitutes the placeholders of an argv template: {{HOME}},
// {{TMP}}, {{PAYLOAD}}, {{CLAUDE}} (the payload quoted as Claude Code
// quotes it for eval) and {{NULLIN}} (" < /dev/null" unless the payload
// has a here-document).
func Fill(argv []string, home, tmp, payload string, heredoc bool) []string {
	nullin := " < /dev/null"
	if heredoc {
		nullin = ""
	}
	r := strings.NewReplacer("{{HOME}}", home, "{{TMP}}", tmp, "{{PAYLOAD}}", payload,
		"{{CLAUDE}}", "'"+strings.ReplaceAll(payload, "'", `'"'"'`)+"'", "{{NULLIN}}", nullin)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Replace(a)
	}
	return out
}

// root is the repository's root directory, found from this file's place in
// it, so that tests in any package read the same files.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Captured is one testdata/envelopes/captured/AGENT@VERSION.json: every
// distinct argv that version of the agent CLI handed the shim in the
// end-to-end tests, with the parts that change from run to run replaced by
// placeholders (those of Fill, and {{ID}} for random names, {{PATH}} for
// the PATH the agent had).
type Captured struct {
	Agent   string          `json:"agent"`
	Version string          `json:"version"`
	Shapes  []CapturedShape `json:"shapes"`
}

// CapturedShape is one argv, with what it was first seen running.
type CapturedShape struct {
	Seen string   `json:"seen"`
	Argv []string `json:"argv"`
}

// ReadCaptured reads one captured file; a missing file is returned as the
// error from os.ReadFile, with an empty Captured.
func ReadCaptured(path string) (Captured, error) {
	var c Captured
	raw, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ReadAllCaptured reads every file in testdata/envelopes/captured.
func ReadAllCaptured() ([]Captured, error) {
	paths, err := filepath.Glob(filepath.Join(root(), "testdata", "envelopes", "captured", "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Captured
	for _, p := range paths {
		c, err := ReadCaptured(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
