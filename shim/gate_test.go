package shim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noShim is a world where no shell name resolves to execgate.
var noShim = gateEnv{gated: func(string) bool { return false }}

// TestGateRulesExamples: every row of the table refuses each of its
// examples, for that row's reason.
func TestGateRulesExamples(t *testing.T) {
	for _, r := range gateRules {
		require.NotEmpty(t, r.examples, r.id)
		for _, ex := range r.examples {
			assert.Equal(t, r.reason, disarms(ex, noShim), "%s: %q", r.id, ex)
		}
	}
}

// TestGateAllowsOrdinaryLines: lines that leave the gate alone, the near
// misses of each rule included, pass (Judge still judges them).
func TestGateAllowsOrdinaryLines(t *testing.T) {
	for _, line := range []string{
		"echo hello", "ls -la | grep go", "git status && git diff", "cd /tmp; make test",
		"trap -p DEBUG", "trap -l", "trap 'echo bye' EXIT", "trap - INT", "trap",
		"shopt -s extdebug", "shopt -u nullglob", "shopt extdebug", "set -T", "set +e", "set -o functrace", "set +o errexit",
		"enable", "enable -a", "bind -p", "bind '\"\\C-t\": forward-char'", "complete -F _git git", "compgen -c gi",
		"echo __execgat", "for i in 1 2; do echo $i; done", "f() { echo hi; }; f", "cd() { builtin cd \"$@\"; }",
		"bash -c 'echo hi'", "bash script.sh", "sh -c true", "echo 'echo hi' | bash", "bash < script.sh",
		"bash <<'EOF'\necho hi\nEOF", "exec >/dev/null", "exec 3<file", "exec ls", "command -v bash", "zsh -c 'echo hi'",
		"eval 'echo hi'", "eval \"$cmd\"", "history", "history -a",
		"export PATH=$PATH:/opt/bin", "declare -a arr=(1 2)", "read -r line < f", "printf -v out %s x", "local x",
		"export EDITOR=vim", "mapfile -t lines < f",
	} {
		assert.Empty(t, disarms(line, noShim), "%q", line)
	}
}

// TestGateFollowsNestedCode: what eval or a trap handler runs later in
// this shell is read too, and so are wrappers.
func TestGateFollowsNestedCode(t *testing.T) {
	for _, line := range []string{
		"eval 'trap - DEBUG'", "eval trap - DEBUG", "trap 'trap - DEBUG' INT", "eval \"eval 'shopt -u extdebug'\"",
		"echo hi; command builtin trap - DEBUG", "if true; then set +T; fi", "(set +o functrace)",
		"x=$(enable -n kill)", "nohup env FOO=1 bash",
	} {
		assert.NotEmpty(t, disarms(line, noShim), "%q", line)
	}
}

// TestGateShellThroughShim: a shell that resolves to execgate is gated in
// turn, so starting it is fine.
func TestGateShellThroughShim(t *testing.T) {
	shimmed := gateEnv{gated: func(name string) bool { return name == "bash" }}
	assert.Empty(t, disarms("bash", shimmed))
	assert.Empty(t, disarms("exec bash -l", shimmed))
	assert.NotEmpty(t, disarms("/bin/bash", shimmed))
	assert.NotEmpty(t, disarms("exec sh", shimmed))

	// gateEnvFor resolves through PATH to this very executable.
	dir := t.TempDir()
	self, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, os.Symlink(self, filepath.Join(dir, "bash")))
	env := gateEnvFor(func(k string) string {
		if k == "PATH" {
			return dir
		}
		return ""
	})
	assert.True(t, env.gated("bash"))
	assert.True(t, env.gated(filepath.Join(dir, "bash")))
	assert.False(t, env.gated("zsh"))
	assert.False(t, env.gated("/bin/sh"))
}

func TestExpandAliases(t *testing.T) {
	aliases := map[string]string{
		"ll":    "ls -alF",
		"ls":    "ls --color=auto",
		"s":     "sudo ",
		"del":   "rm -rf",
		"both":  "echo a; del",
		"loop":  "loop2",
		"loop2": "loop",
	}
	for in, want := range map[string]string{
		"ll":                      "ls --color=auto -alF",
		"ls x":                    "ls --color=auto x",
		"s ll":                    "sudo  ls --color=auto -alF",
		"echo ll":                 "echo ll",
		"'ll'":                    "'ll'",
		"\\ll":                    "\\ll",
		"del x; del y":            "rm -rf x; rm -rf y",
		"both z":                  "echo a; rm -rf z",
		"x=$(del /); echo ok":     "x=$(rm -rf /); echo ok",
		"loop":                    "loop",
		"if true; then del d; fi": "if true; then rm -rf d; fi",
		"echo 'unclosed":          "echo 'unclosed",
	} {
		assert.Equal(t, want, expandAliases(in, aliases), "%q", in)
	}
	assert.Equal(t, "ll", expandAliases("ll", nil))
}

func TestCompleteHeader(t *testing.T) {
	assert.Equal(t, "for i in 1 2; do :; done", completeHeader("for i in 1 2"))
	assert.Equal(t, "case $x in esac", completeHeader("case $x in"))
	assert.Equal(t, "[[ -f x ]]", completeHeader("[[ -f x ]]"))
	assert.Equal(t, "echo 'broken", completeHeader("echo 'broken"))
}

func TestPromptCode(t *testing.T) {
	assert.Equal(t, []string{"rm -rf ~"}, promptCode(`PS1='$(rm -rf ~) \$ '`))
	assert.Equal(t, []string{"pwd", "git branch --show-current"}, promptCode(`export PS1='\w $(pwd) `+"`git branch --show-current`"+` $ '`))
	assert.Empty(t, promptCode(`PS1='\u@\h:\w\$ '`))
	assert.Empty(t, promptCode(`FOO='$(rm -rf ~)'`))
	assert.Empty(t, promptCode(`PS1="$X"`), "a value known only at run time")
}

// TestGateRefusesAndRecords: a disarming line is refused without asking,
// in one line, and logged; the alias-expanded line is what is judged.
func TestGateRefusesAndRecords(t *testing.T) {
	state := t.TempDir()
	config := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"version":1,"defaults":{"security":"full","ask":"off"}}`), 0o600))
	getenv := func(k string) string {
		switch k {
		case "XDG_STATE_HOME":
			return state
		case "EXECGATE_CONFIG":
			return config
		case "PATH":
			return "/nonexistent"
		case "BASH_ENV":
			return "/tmp/env.sh" // read by the shells a line starts, not by the line
		}
		return ""
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer devnull.Close()
	base := JudgeOptions{Agent: "a", Getenv: getenv, Environ: []string{}, Stderr: devnull}

	o := GateOptions{JudgeOptions: base}
	o.Command = "echo hi; trap - DEBUG"
	j := Gate(context.Background(), o)
	assert.False(t, j.Allow)
	assert.Equal(t, "dangerous", j.Risk)
	assert.True(t, strings.HasPrefix(j.Message, "execgate: denied: changes the DEBUG trap"), j.Message)
	assert.NotContains(t, j.Message, "\n")

	o.Command = "hi"
	o.Aliases = map[string]string{"hi": "echo rc-alias"}
	j = Gate(context.Background(), o)
	assert.True(t, j.Allow, j.Message)
	assert.NotContains(t, strings.Join(j.Reasons, "\n"), "BASH_ENV")

	var evs []Event
	path, err := DefaultAuditPath(getenv)
	require.NoError(t, err)
	l := AuditLog{Path: path}
	require.NoError(t, l.Read(time.Time{}, func(ev Event, _ []byte) error { evs = append(evs, ev); return nil }))
	require.Len(t, evs, 2)
	assert.Equal(t, EventDenied, evs[0].Event)
	assert.Equal(t, "interactive", evs[0].Source)
	assert.Equal(t, "echo hi; trap - DEBUG", evs[0].Command)
	assert.Equal(t, EventAllowed, evs[1].Event)
	assert.Equal(t, "echo rc-alias", evs[1].Command)
	assert.Equal(t, "interactive", evs[1].Source)
}
