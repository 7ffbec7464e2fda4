package interp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/policy/shparse"
)

// tooDeep overflows the parser's stack if parsed: 150 000 nested
// arithmetic parentheses, 300 KB.
var tooDeep = "echo $((" + strings.Repeat("(", 150_000) + "1" + strings.Repeat(")", 150_000) + "))"

// TestEngineRefusesTooDeep: RunEngine does not parse a program too deep to
// parse; it refuses it before anything runs.
func TestEngineRefusesTooDeep(t *testing.T) {
	dir := t.TempDir()
	_, err := RunEngine(context.Background(), EngineOptions{Program: "touch made\n" + tooDeep, Dir: dir, Check: allowAll})
	var ue *UnsupportedError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "too deeply nested to check")
	assert.NoFileExists(t, filepath.Join(dir, "made"))
}

// TestEngineTooDeepAtRunTime: code the program builds while it runs and
// hands to a builtin that parses it (eval, source, trap, alias, unset), or
// a script without #! that the engine would run itself, is refused with
// status 126 when it is too deep to parse; the process survives.
func TestEngineTooDeepAtRunTime(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "deep.sh"), []byte(tooDeep), 0o755))
	// 2^18 parentheses, built at run time: the program text is shallow.
	build := `x='(('; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17; do x=$x$x; done; `
	for _, tc := range []struct{ name, prog, stderr string }{
		{"eval", build + `eval "$x"; echo never`, "execgate: not run: eval: too deeply nested to check"},
		{"builtin eval", build + `builtin eval "$x"; echo never`, "execgate: not run: eval: too deeply nested to check"},
		{"command eval", build + `command eval "$x"; echo never`, "execgate: not run: eval: too deeply nested to check"},
		{"trap", build + `trap "$x" EXIT; echo never`, "execgate: not run: trap: too deeply nested to check"},
		{"alias", build + `alias a="$x"; echo never`, "execgate: not run: alias: too deeply nested to check"},
		{"source", `source ./deep.sh; echo never`, "execgate: not run: source: too deeply nested to check"},
		{"dot", `. deep.sh; echo never`, "execgate: not run: .: too deeply nested to check"},
		{"script without #!", `./deep.sh; echo "after $?"`, "execgate: not run: ./deep.sh: too deeply nested to check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := runProgram(t, dir, tc.prog, allowAll)
			assert.True(t, strings.HasPrefix(got.Stderr, tc.stderr), "stderr %q", got.Stderr)
			assert.Equal(t, 1, strings.Count(got.Stderr, "\n"), "one line")
			if tc.name == "script without #!" {
				assert.Equal(t, "after 126\n", got.Stdout, "a refused command; the program goes on")
				return
			}
			assert.Empty(t, got.Stdout)
			assert.Equal(t, ExitRefused, got.Status)
		})
	}
	got, _ := runProgram(t, dir, `eval 'echo $((1+(2)))'; trap 'echo bye' EXIT; alias a=b; unset 'u[1]'`, allowAll)
	assert.Equal(t, engineOutcome{Stdout: "3\nbye\n"}, got, "shallow code runs")
}

// TestUnsupportedTooDeep: literal eval and trap code too deep to parse is
// reported, not parsed. Quote removal can make a shallow text deep: a word
// spelt with empty quotes inside is no reserved word, but the `if` it
// becomes is.
func TestUnsupportedTooDeep(t *testing.T) {
	escaped := strings.Repeat(`i''f\ `, shparse.MaxNesting/4) + "x"
	for _, src := range []string{"eval " + escaped, "trap " + escaped + " EXIT"} {
		require.NoError(t, shparse.CheckNesting(src))
		f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
		require.NoError(t, err)
		assert.NotEmpty(t, Unsupported(f), "%.10s", src)
	}
	f, err := syntax.NewParser().Parse(strings.NewReader("eval "+escaped), "")
	require.NoError(t, err)
	assert.Contains(t, strings.Join(Unsupported(f), "; "), "too deeply nested to check")
}
