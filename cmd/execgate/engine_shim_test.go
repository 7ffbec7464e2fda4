package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const interpConfig = `{"version": 1, "shell": {"engine": "interp"}, "defaults": {"security": "full", "ask": "off"}}`

// readDifferences reads testdata/shim/interp-differences.txt: "NAME MODE
// reason" per line, the corpus programs the interp engine runs otherwise
// than bash (docs/interp-engine.md explains each kind).
func readDifferences(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("../../testdata/shim/interp-differences.txt")
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, " ", 3)
		require.Len(t, fields, 3, "line %q", line)
		out[fields[0]+" "+fields[1]] = fields[2]
	}
	require.NoError(t, sc.Err())
	return out
}

// TestShimIdentityInterp runs the identity corpus through the interp
// engine (security=full): the same stdout, stderr and exit status as bash,
// except for the listed differences, which must still differ so that the
// list stays honest. Programs the engine cannot run as bash would are
// refused by it and, security being full, run by bash: identical too.
func TestShimIdentityInterp(t *testing.T) {
	realBash(t)
	differences := readDifferences(t)
	// A program on stdin is all of stdin: the engine gives the commands
	// none of it, where bash lets them read the rest of the script.
	seen := compareWithBash(t, newShimEnv(t, interpConfig), identityModes[:2], differences)
	for key := range differences {
		assert.True(t, seen[key], "difference %q names no corpus program", key)
	}
}

// TestShimInterpChecksAtRunTime: under the interp engine with the default
// policy and nobody to ask, dynamic commands that turn out safe run; a
// refused command gets 126 and one line, and the script goes on as bash
// would; a write to a shell start-up file is refused at the redirection;
// what the engine cannot run as bash would is refused before anything
// runs.
func TestShimInterpChecksAtRunTime(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, `{"version": 1, "shell": {"engine": "interp"}}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "a.txt"), []byte("one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "b.txt"), []byte("one\ntwo\n"), 0o644))
	run := func(src string) outcome {
		return runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", "-c", src), "")
	}

	o := run(`for f in *.txt; do wc -l "$f"; done; w=$(command -v wc); "$w" -c a.txt`)
	assert.Equal(t, outcome{stdout: "1 a.txt\n2 b.txt\n4 a.txt\n"}, o)

	o = run(`echo before; rm -rf "$HOME/x"; echo "after $?"`)
	assert.Equal(t, "before\nafter 126\n", o.stdout)
	assert.Equal(t, 0, o.status)
	assert.Equal(t, 1, strings.Count(o.stderr, "\n"), "stderr %q", o.stderr)
	assert.True(t, strings.HasPrefix(o.stderr, "execgate: denied: "), "stderr %q", o.stderr)

	o = run(`set -e; echo before; rm -rf "$HOME/x"; echo not reached`)
	assert.Equal(t, "before\n", o.stdout)
	assert.Equal(t, 126, o.status)

	o = run(`echo evil >> ~/.bashrc; echo "rc=$?"`)
	assert.Equal(t, "rc=1\n", o.stdout)
	assert.Contains(t, o.stderr, "execgate: denied: ")
	_, err := os.Stat(filepath.Join(e.env0("HOME"), ".bashrc"))
	assert.True(t, os.IsNotExist(err), "nothing was written")

	// coproc is not run by the engine: the whole program is refused.
	o = run(`echo first; coproc cat`)
	denyLine(t, o, "execgate: denied: the interp engine cannot run this as bash would: ")

	var denied []string
	for _, ev := range e.readAudit() {
		if ev.Event == "exec.denied" {
			denied = append(denied, ev.Command)
		}
	}
	assert.Contains(t, denied, "rm -rf "+filepath.Join(e.env0("HOME"), "x"))
}

// env0 returns the value of name in e's environment.
func (e *shimEnv) env0(name string) string {
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
