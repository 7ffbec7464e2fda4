package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShimTooDeep: a program too deeply nested to parse, whether a -c
// string, a script file or stdin, is refused (nobody is there to ask)
// without crashing the shim, under both engines. The script file holds
// 150 000 nested arithmetic parentheses, which overflowed the parser's
// stack; a -c string is capped by the kernel at 128 KiB, so it holds 60 000.
func TestShimTooDeep(t *testing.T) {
	realBash(t)
	nested := func(n int) string {
		return "touch made; echo $((" + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "))"
	}
	for _, config := range []string{"", `{"version": 1, "shell": {"engine": "interp"}}`} {
		e := newShimEnv(t, config)
		script := filepath.Join(e.work, "deep.sh")
		require.NoError(t, os.WriteFile(script, []byte(nested(150_000)), 0o644))
		for name, o := range map[string]outcome{
			"-c":     runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", "-c", nested(60_000)), ""),
			"script": runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", script), ""),
			"stdin":  runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash"), nested(150_000)),
		} {
			denyLine(t, o, "execgate: denied: ")
			assert.Contains(t, o.stderr, "too deeply nested to check", "%s, config %q", name, config)
			assert.NoFileExists(t, filepath.Join(e.work, "made"))
		}
	}
}
