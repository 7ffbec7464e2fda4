package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"testing"

	"github.com/execgate/execgate/shim"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShimDirectRun checks the shortcut for a lone literal command: the
// shim runs the program itself, without bash, and the program must see
// exactly what bash would have given it — argv, and the environment
// byte for byte and in bash's order (printenv prints it unsorted) — under
// environments that exercise bash's start-up rewrites. Both with output
// captured and with capping off (exec).
func TestShimDirectRun(t *testing.T) {
	bash := realBash(t)
	printenv := lookOrSkip(t, "printenv")
	work := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(work, link))
	pathDir := filepath.Dir(printenv)

	envs := []struct {
		name string
		env  []string
		// direct lists the kinds of command for which the shim is
		// expected to take the shortcut: b do-nothing builtins, s a
		// program named with a slash, p a program found on PATH; "?"
		// when it depends on the machine.
		direct string
	}{
		{"minimal", []string{"PATH=" + pathDir}, "bsp"},
		{"shell-like", []string{"PATH=/nonexistent:" + pathDir + "/", "SHLVL=2", "PWD=" + work, "OLDPWD=/", "HOME=/root", "TERM=dumb"}, "bsp"},
		{"stale PWD", []string{"PATH=" + pathDir, "PWD=/", "OLDPWD=/nonexistent"}, "bsp"},
		{"symlinked PWD", []string{"PATH=" + pathDir, "PWD=" + link, "SHLVL=7"}, "bsp"},
		{"bucket collisions", []string{"PATH=" + pathDir, "AKY=1", "DWX=2", "ZED=3", "AAA=4", "FOO=5"}, "bsp"},
		{"odd names", []string{"PATH=" + pathDir, "ZZZ=1", "A-B=1", "B=2", "1X=2", "_=/stale", "é=3", "Z-Z=4", "0A=5", "9=6"}, "bsp"},
		{"underscore", []string{"PATH=" + pathDir, "ZZZ=1", "_=/stale", "B=2"}, "bsp"},
		{"locale", []string{"PATH=" + pathDir, "LC_ALL=C.UTF-8", "LANG=C"}, "bsp"},
		{"odd SHLVL", []string{"PATH=" + pathDir, "SHLVL=abc"}, "b"},
		{"relative PATH", []string{"PATH=.:" + pathDir}, "bs"},
		{"specials", []string{"PATH=" + pathDir, "IFS=x", "PS4=>", "BASHOPTS=extglob"}, ""},
		{"bash variables", []string{"PATH=" + pathDir, "BASH_FUNC_x=v"}, ""},
		{"inherited", os.Environ(), "?"},
		{"bad locale", []string{"PATH=" + pathDir, "LC_ALL=xx_YY.UTF-8"}, ""},
	}
	commands := []struct {
		src  string
		kind string // as in envs' direct; "" never direct
	}{
		{"printenv", "p"}, {"printenv PATH PWD SHLVL _", "p"}, {"true", "b"}, {"false x", "b"},
		{": y", "b"}, {"ls -d .", "p"}, {"/bin/ls -d .", "s"},
		{"nonexistent-cmd", ""}, {"echo hi", ""}, {"printenv  PATH", ""},
		// Words bash expands go to bash; a tilde inside a word is a letter.
		{"ls -d *", ""}, {"ls -d ~", ""}, {"ls -d ~+", ""}, {"printenv HOME~1 PATH", "p"},
	}
	for i, config := range []string{fullConfig, `{"version": 1, "defaults": {"security": "full", "ask": "off"}, "output": {"maxBytes": 0}}`} {
		capped := i == 0 // an agent is named and stdout is a pipe
		e := newShimEnv(t, config)
		for _, ev := range envs {
			for _, c := range commands {
				t.Run(ev.name+"/"+c.src, func(t *testing.T) {
					env := append(slices.Clone(ev.env), "EXECGATE_CONFIG="+e.config, "EXECGATE_AGENT=test")
					state := filepath.Join(t.TempDir(), "state")
					env = append(env, "XDG_STATE_HOME="+state)
					want := runOutcome(t, withEnv(e.command(t.Context(), bash, "bash", "-c", c.src), work, env), "")
					got := runOutcome(t, withEnv(e.command(t.Context(), e.shim("bash"), "bash", "-c", c.src), work, env), "")
					// The shim's own variables are in both environments;
					// a capped command's also says it is capped, so that a
					// shim inside it does not cap again.
					if capped && c.src == "printenv" {
						assert.Contains(t, got.stdout, "EXECGATE_CAPPED=1\n")
					}
					got.stdout = strings.Replace(got.stdout, "EXECGATE_CAPPED=1\n", "", 1)
					assert.Equal(t, want, got)
					evs := readAuditAt(t, state)
					require.NotEmpty(t, evs)
					if ev.direct == "?" {
						return
					}
					shortcut := c.kind != "" && strings.Contains(ev.direct, c.kind)
					assert.Equal(t, shortcut, evs[0].Direct, "shortcut taken")
				})
			}
		}
	}
}

func readAuditAt(t *testing.T, state string) []shim.Event {
	t.Helper()
	var evs []shim.Event
	l := shim.AuditLog{Path: filepath.Join(state, "execgate", "audit.jsonl")}
	require.NoError(t, l.Read(time.Time{}, func(ev shim.Event, _ []byte) error {
		evs = append(evs, ev)
		return nil
	}))
	return evs
}

func withEnv(cmd *exec.Cmd, dir string, env []string) *exec.Cmd {
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

func lookOrSkip(t *testing.T, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	return p
}
