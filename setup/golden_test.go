package setup

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// Fixed paths make the golden files the same on every machine.
const (
	goldenExe   = "/opt/execgate/bin/execgate"
	goldenHome  = "/home/user"
	goldenState = "/home/user/.local/state/execgate"
)

func goldenOptions(agent string, hook bool) Options {
	return Options{Agent: agent, Hook: hook, Exe: goldenExe, Home: goldenHome, StateDir: goldenState,
		Getenv: func(string) string { return "" }}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateGolden {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./setup -update")
	assert.Equal(t, string(want), string(got), "golden file %s", path)
}

// variant is one way of applying to a sample: the agent its file name
// names, with or without --hook.
type variant struct {
	name string // in golden file names
	hook bool
}

func variantsFor(agent string) []variant {
	if agent == "claude" {
		return []variant{{"env", false}, {"hook", true}}
	}
	return []variant{{"hook", false}}
}

// samples returns the sample settings files: testdata/setup/in/AGENT-*.json.
func samples(t testing.TB) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../testdata/setup/in/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]string{}
	for _, f := range files {
		agent, _, _ := strings.Cut(filepath.Base(f), "-")
		out[f] = agent
	}
	return out
}

func goldenPath(sample string, v variant) string {
	return filepath.Join("../testdata/setup/applied", strings.TrimSuffix(filepath.Base(sample), ".json")+"."+v.name+".json")
}

// TestMergeGolden pins what applying does to realistic settings files (other
// hooks, permissions, unicode, comments, tabs, CRLF, one-line files): every
// byte of the original survives, and the entries are laid out like their
// neighbours. Applying the result again changes nothing, and taking the
// entries out gives the original back.
func TestMergeGolden(t *testing.T) {
	for sample, agent := range samples(t) {
		raw, err := os.ReadFile(sample)
		require.NoError(t, err)
		for _, v := range variantsFor(agent) {
			t.Run(filepath.Base(sample)+"/"+v.name, func(t *testing.T) {
				j, err := goldenOptions(agent, v.hook).job()
				require.NoError(t, err)
				merged, applied, _, err := j.merge(raw)
				require.NoError(t, err)
				compareGolden(t, goldenPath(sample, v), merged)

				again, more, _, err := j.merge(merged)
				require.NoError(t, err)
				assert.Empty(t, more, "a second apply changes nothing")
				assert.Equal(t, string(merged), string(again))

				doc, err := parseDocument(merged, j.agent.comments)
				require.NoError(t, err)
				for i := len(applied) - 1; i >= 0; i-- {
					res, err := doc.revert(applied[i])
					require.NoError(t, err)
					assert.Equal(t, revertDone, res)
				}
				reverted := doc.pack()
				if bytes.Equal(merged, raw) {
					return // the sample already had the integration
				}
				// Taking the entries out restores the original's content;
				// an empty container the merge filled comes back as {}.
				back, err := parseDocument(reverted, j.agent.comments)
				require.NoError(t, err)
				orig, err := parseDocument(raw, j.agent.comments)
				require.NoError(t, err)
				assert.Equal(t, decode(orig.root), decode(back.root))
			})
		}
	}
}

// TestShowGoldenZsh pins `execgate setup claude` for a user whose login
// shell is zsh: the zsh shim when a real zsh exists, the bash shim when
// none does (the zsh shim would have no shell to run).
func TestShowGoldenZsh(t *testing.T) {
	for _, c := range []struct {
		name, loginShell, zsh, golden, link string
	}{
		{"zsh login, zsh present", "/usr/bin/zsh", "/usr/bin/zsh", "claude-zsh.txt", "zsh"},
		{"zsh login, no zsh", "/usr/bin/zsh", "", "claude.txt", "bash"},
		{"bash login, zsh present", "/bin/bash", "/usr/bin/zsh", "claude.txt", "bash"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := goldenOptions("claude", false)
			o.LoginShell, o.Zsh = c.loginShell, c.zsh
			var out bytes.Buffer
			notes, err := Show(&out, o)
			require.NoError(t, err)
			if c.golden == "claude-zsh.txt" {
				compareGolden(t, "../testdata/setup/show/"+c.golden, out.Bytes())
			} else {
				want, err := os.ReadFile("../testdata/setup/show/" + c.golden)
				require.NoError(t, err)
				assert.Equal(t, string(want), out.String())
			}
			require.Len(t, notes, 1)
			assert.Contains(t, notes[0], "has no "+c.link+" link to execgate")
		})
	}
}

// TestLoginShell: $SHELL first (what Claude Code reads), else the user's
// passwd entry.
func TestLoginShell(t *testing.T) {
	passwd := filepath.Join(t.TempDir(), "passwd")
	require.NoError(t, os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/bash\nada:x:1000:1000:Ada:/home/ada:/usr/bin/zsh\n"), 0o644))
	env := func(v string) func(string) string { return func(string) string { return v } }
	assert.Equal(t, "/bin/fish", LoginShell(env("/bin/fish"), passwd, 1000))
	assert.Equal(t, "/usr/bin/zsh", LoginShell(env(""), passwd, 1000))
	assert.Equal(t, "/bin/bash", LoginShell(env(""), passwd, 0))
	assert.Equal(t, "", LoginShell(env(""), passwd, 42))
	assert.Equal(t, "", LoginShell(env(""), filepath.Join(t.TempDir(), "none"), 0))
}

// TestShowGolden pins what `execgate setup AGENT` prints.
func TestShowGolden(t *testing.T) {
	for _, agent := range Agents() {
		vs := []variant{{"", false}}
		if agent == "claude" {
			vs = append(vs, variant{"-hook", true})
		}
		for _, v := range vs {
			var out bytes.Buffer
			notes, err := Show(&out, goldenOptions(agent, v.hook))
			require.NoError(t, err)
			compareGolden(t, "../testdata/setup/show/"+agent+v.name+".txt", out.Bytes())
			if agent == "codex" || v.hook {
				assert.Empty(t, notes, "the hook does not need the shim")
			} else {
				require.Len(t, notes, 1, "the shim is not installed under /opt")
				assert.Contains(t, notes[0], "/opt/execgate/lib/execgate/shims has no bash link to execgate; run ./install.sh")
			}
		}
	}
}
