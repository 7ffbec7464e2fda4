package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/policy"
)

// FuzzCheckJSONL feeds arbitrary input to check --jsonl, with lines capped
// at a few bytes so that the fuzzer reaches over-long lines too. It must
// never panic and must write exactly one JSON object per input line.
func FuzzCheckJSONL(f *testing.F) {
	for _, s := range []string{
		"", "\n", "\"ls\"\n", "\"ls\"", "\"ls\"\r\n\"sudo reboot\"\r\n", "not json\n\"ls\"\n",
		"\"" + strings.Repeat("x", 100) + "\"\n\"ls\"\n", "\"a\\nb\"\n\n\n", "\r\n\r", "\"\\u0000\"\n",
	} {
		f.Add(s, uint8(64))
	}
	engine, err := policy.NewEngine()
	if err != nil {
		f.Fatal(err)
	}
	c := &checker{engine: engine, base: policy.NewRequest(&config.Config{Version: 1}, "test", "/home/agent/project", "/home/agent", nil)}
	f.Fuzz(func(t *testing.T, input string, max uint8) {
		var out bytes.Buffer
		err := checkLinesUpTo(c, strings.NewReader(input), &out, io.Discard, int(max))
		if err != nil {
			if _, ok := err.(exitCodeError); !ok {
				t.Fatalf("checkLines: %v", err)
			}
		}
		want := strings.Count(input, "\n")
		if input != "" && !strings.HasSuffix(input, "\n") {
			want++
		}
		got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if out.Len() == 0 {
			got = nil
		}
		if len(got) != want {
			t.Fatalf("%d input lines, %d output lines:\n%s", want, len(got), out.String())
		}
		for i, line := range got {
			var obj map[string]any
			if err := json.Unmarshal([]byte(line), &obj); err != nil {
				t.Fatalf("output line %d is not a JSON object: %v: %q", i+1, err, line)
			}
		}
	})
}
