package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
)

// A listing of workspace files piped into a reader (find . | xargs cat)
// was safe whatever the workspace held, while cat .env asks: a workspace
// may hold its own secrets. Now it reads them as cat .env does when the
// workspace holds a credential file the listing's places and name tests
// can reach (find -name '*.py' cannot list .env, grep -l … lib does not
// look in src).
func TestWorkspaceListingOfSecrets(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	home := t.TempDir()
	ws := filepath.Join(t.TempDir(), "proj")
	for _, d := range []string{"src/node_modules", "lib"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "app.py"), []byte("x = 1\n"), 0o644))
	readsSecrets := func(command string) bool {
		t.Helper()
		res := e.Evaluate(Request{Command: command, Cwd: ws, Home: home, Policy: pol})
		for _, seg := range res.Segments {
			for _, r := range seg.Reasons {
				if strings.Contains(r.Text, "the workspace holds credentials") {
					return true
				}
			}
		}
		return false
	}
	reaching := []string{
		"find . | xargs cat",
		"find . -type f | xargs grep -n TOKEN",
		"git ls-files | xargs cat",
		"find . -name '*.py' -o -name '.e*' | xargs cat",
		"find . ! -name '*.py' | xargs cat",
		"find . -iname '*.ENV' | xargs cat",
		"find src | xargs cat",
		"grep -l x src/* | xargs cat",
	}
	notReaching := []string{
		"find . -name '*.py' | xargs grep -n foo",
		"find . -type f -name '*.py' -not -path './src/node_modules/*' | xargs wc -l",
		"grep -rl x lib | xargs sed -i s/x/y/",
	}
	for _, c := range append(reaching, notReaching...) {
		assert.False(t, readsSecrets(c), "no secrets in the workspace: %s", c)
		if !strings.Contains(c, "sed -i") {
			assert.Equal(t, Safe, e.Evaluate(Request{Command: c, Cwd: ws, Home: home, Policy: pol}).Risk, c)
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", ".env"), []byte("TOKEN=canary\n"), 0o600))
	assert.NotEqual(t, Safe, e.Evaluate(Request{Command: "cat src/.env", Cwd: ws, Home: home, Policy: pol}).Risk)
	for _, c := range reaching {
		assert.True(t, readsSecrets(c), "the workspace holds src/.env: %s", c)
	}
	for _, c := range notReaching {
		assert.False(t, readsSecrets(c), "its places and name tests cannot list src/.env: %s", c)
	}
}

// find's -exec reads what find lists as xargs does: the command given {}
// reads the workspace's credential files only where the expression before
// it can list one. Without one it is no read of credentials (it was, for
// every find -exec: "names come from its input"); a find over the whole
// disk still is.
func TestFindExecReadsWhatItLists(t *testing.T) {
	e := testEngine(t)
	home := t.TempDir()
	ws := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "scripts", "ci.sh"), []byte("set -e\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=canary\n"), 0o600))
	credentials := readsInputCredentials(t, e, ws, home)
	for _, c := range []string{
		"find . -name '*.sh' -exec grep -l 'set -e' {} +",
		"find scripts -type f -exec wc -l {} \\;",
		"find . -name '*.py' -not -path './node_modules/*' -exec grep -n TODO {} +",
		"find . -name '*.sh' -exec test -x {} \\; -exec cat {} +",
	} {
		assert.False(t, credentials(c), "cannot list .env: %s", c)
	}
	for _, c := range []string{
		"find . -exec cat {} +",
		"find . -type f -exec grep -n TOKEN {} +",
		"find . -name '.e*' -exec cat {} \\;",
		"find . -name '*.sh' -o -name '.env' -exec cat {} +",
		"find / -name '*.sh' -exec cat {} +",
		"find $DIR -name '*.sh' -exec cat {} +",
		"find . -name '*.sh' -execdir cat {} +",
		// What another command's test lets through, or tests after it.
		"find . -name '*.sh' -exec true \\; -o -exec cat {} +",
		"find . -name '*.sh' -exec false \\; , -exec cat {} +",
		"find . -exec cat {} + -name '*.sh'",
		"find . \\( -name '*.sh' \\) -exec cat {} +",
		"find . -name \"$P\" -exec cat {} +",
	} {
		assert.True(t, credentials(c), "may read .env or what lies outside: %s", c)
	}
}

// readsInputCredentials says of a command run in ws whether a segment
// reads names from its input that may be credentials (reads-input-names),
// under the default policy.
func readsInputCredentials(t *testing.T, e *Engine, ws, home string) func(string) bool {
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	return func(command string) bool {
		t.Helper()
		res := e.Evaluate(Request{Command: command, Cwd: ws, Home: home, Policy: pol})
		return slices.ContainsFunc(res.Segments, func(s *Segment) bool {
			return slices.ContainsFunc(s.Reasons, func(r Reason) bool { return r.Rule == "reads-input-names" })
		})
	}
}
