package approve

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseKeys(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a", []string{"a"}},
		{"jk", []string{"j", "k"}},
		{"\x1b[A", []string{"up"}},
		{"\x1b[B\x1bOA", []string{"down", "up"}},
		{"\x03", []string{"ctrl+c"}},
		{"\x04", []string{"ctrl+d"}},
		{"\x1b", []string{"esc"}},
		// Alt-a, F5, a focus report, a mouse report: nothing in them is a key.
		{"\x1ba", []string{""}},
		{"\x1b[15~", []string{""}},
		{"\x1b[I", []string{""}},
		{"\x1b[<0;12;5M", []string{""}},
		{"\x1b[1;5A", []string{""}},
		{"\x1b[", []string{""}},
		{"\x1bO", []string{""}},
		{"é", []string{"é"}},
		{"\r\x7f\xff", []string{"enter", "backspace", ""}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, parseKeys([]byte(tt.in)), "%q", tt.in)
	}
}

func FuzzParseKeys(f *testing.F) {
	f.Add([]byte("\x1b[1;5A\x1b"))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys := parseKeys(b)
		if len(b) > 0 && len(keys) == 0 {
			t.Fatalf("%q gave no keys", b)
		}
	})
}
