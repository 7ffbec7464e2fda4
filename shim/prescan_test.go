package shim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/policy/shparse"
)

// tooDeep overflows the parser's stack if parsed: 150 000 nested
// arithmetic parentheses, 300 KB.
var tooDeep = "echo $((" + strings.Repeat("(", 150_000) + "1" + strings.Repeat(")", 150_000) + "))"

// escapedDeep is shallow as written but decodes ($'…') to text too deep to
// parse.
var escapedDeep = "$'" + strings.Repeat(`\x28`, shparse.MaxNesting/4) + "'"

// TestGateTooDeep: every parse of the interactive gate goes through the
// pre-scan; a line too deep to read is refused as one that might disarm
// the gate, never parsed.
func TestGateTooDeep(t *testing.T) {
	require.ErrorIs(t, shparse.CheckNesting(tooDeep), shparse.ErrTooDeep)
	require.NoError(t, shparse.CheckNesting(escapedDeep))

	assert.Contains(t, disarms(tooDeep, noShim), "too deeply nested to check")
	assert.Contains(t, disarms("eval "+escapedDeep, noShim), "too deeply nested to check", "eval code is read too")
	assert.Contains(t, disarms("trap "+escapedDeep+" EXIT", noShim), "too deeply nested to check")

	assert.Nil(t, promptCode(tooDeep))
	code := promptCode("PS1=" + escapedDeep)
	require.Len(t, code, 2)
	assert.Contains(t, code[0], "too deeply nested to check")
	assert.True(t, strings.HasPrefix(code[1], "eval "), "the prompt's text is judged as code: %.20q", code[1])

	assert.Equal(t, tooDeep, completeHeader(tooDeep))
	assert.Equal(t, tooDeep, expandAliases(tooDeep, map[string]string{"echo": "rm -rf /"}))
}

// TestEngineUnsupportedTooDeep: the interp engine is not offered a program
// too deep to parse; the program needs review as it stands.
func TestEngineUnsupportedTooDeep(t *testing.T) {
	s := &session{program: tooDeep}
	assert.Contains(t, strings.Join(s.engineUnsupported(), "; "), "too deeply nested to check")
	s = &session{program: "ls"}
	assert.Empty(t, s.engineUnsupported())
}
