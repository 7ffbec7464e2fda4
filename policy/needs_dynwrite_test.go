package policy

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/execgate/execgate/config"
)

// TestDynamicWriteNamesRunConfined: a file name only known at run time
// (> "$out", mv "$f.new" "$f" in a loop) is written where the kernel lets
// a confined command write — the workspace and its private TMPDIR — so it
// does not need more than the boundary by itself. What it may replace is
// unknown, which WorkLoss weighs: in a repository with uncommitted work it
// still asks; in a clean one it runs confined. An append replaces
// nothing.
func TestDynamicWriteNamesRunConfined(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	ws, home := lossRepo(t) // mod.txt changed, u/notes.md untracked
	confined := func(command string) bool {
		t.Helper()
		res := e.Evaluate(Request{Command: command, Cwd: ws, Home: home, Policy: pol})
		n := NeedsOf(res, ws, home)
		if !n.Within() {
			return false
		}
		n.Destroys = WorkLoss(context.Background(), res, ws, home, nil)
		n.Beyond = append(n.Beyond, n.Destroys...)
		return CanConfine(pol, res, n, true)
	}
	replacing := []string{
		`out=$(mktemp); pytest -q > "$out" 2>&1; tail -5 "$out"`,
		`for f in src/*.py; do sed "s/a/b/" "$f" > "$f.new" && mv "$f.new" "$f"; done`,
		`for t in tests/test_*.py; do python3 -m pytest -q "$t" > "logs/$(basename "$t").log"; done`,
	}
	for _, command := range replacing {
		assert.False(t, confined(command), "%q replaces files only known at run time where work is uncommitted", command)
	}
	appending := `for f in *.txt; do echo "# checked" >> "$f"; done`
	assert.True(t, confined(appending), appending)

	// Commit everything: nothing is lost whatever the names turn out to be.
	assert.NoError(t, os.RemoveAll(filepath.Join(ws, "u")))
	runGit(t, ws, home, "commit", "-qam", "all")
	for _, command := range replacing {
		assert.True(t, confined(command), command)
	}
	for _, command := range []string{
		`out=$(mktemp); curl -s https://example.com > "$out"`,
		`f=~/.bashrc; echo x > "$f" && cat ~/.ssh/id_rsa`,
		`echo x > "$F"; sudo true`,
	} {
		assert.False(t, confined(command), command)
	}
}
