package shim

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testGate = "/run/user/1/execgate/gate-x.bash"

func TestPlanGate(t *testing.T) {
	g := testGate
	tests := []struct {
		argv    []string
		want    []string
		hook    gateHook
		startup string
	}{
		{[]string{"bash"}, []string{"bash", "--rcfile", g, "-i"}, hookRCFile, "rc"},
		{[]string{"/usr/lib/shims/bash", "-i"}, []string{"/usr/lib/shims/bash", "--rcfile", g, "-i", "-i"}, hookRCFile, "rc"},
		{[]string{"-bash"}, []string{"bash", "--norc", "--noprofile", "-i"}, hookPrompt, "profile"},
		{[]string{"bash", "-l"}, []string{"bash", "--norc", "--noprofile", "-i"}, hookPrompt, "profile"},
		{[]string{"bash", "--login", "--noediting"}, []string{"bash", "--noediting", "--norc", "--noprofile", "-i"}, hookPrompt, "profile"},
		{[]string{"bash", "--noprofile", "-l"}, []string{"bash", "--norc", "--noprofile", "-i"}, hookPrompt, ""},
		{[]string{"bash", "--norc"}, []string{"bash", "--norc", "--noprofile", "-i"}, hookPrompt, ""},
		{[]string{"bash", "--rcfile", "/x/rc", "-e"}, []string{"bash", "--rcfile", g, "-i", "-e"}, hookRCFile, "rc"},
		{[]string{"bash", "-elx", "-o", "pipefail", "+O", "extglob", "-s", "a", "-b"},
			[]string{"bash", "--norc", "--noprofile", "-i", "-ex", "-o", "pipefail", "+O", "extglob", "-s", "a", "-b"}, hookPrompt, "profile"},
		{[]string{"bash", "-eo", "pipefail", "-s"}, []string{"bash", "--rcfile", g, "-i", "-eo", "pipefail", "-s"}, hookRCFile, "rc"},
		{[]string{"bash", "-il", "--", "x"}, []string{"bash", "--norc", "--noprofile", "-i", "-i", "--", "x"}, hookPrompt, "profile"},
		{[]string{"sh"}, []string{"sh", "-i"}, hookEnv, "env"},
		{[]string{"-sh"}, []string{"sh", "-i"}, hookEnv, "profile-sh env"},
		{[]string{"sh", "--noprofile", "-l"}, []string{"sh", "-i"}, hookEnv, "env"},
		{[]string{"bash", "--posix"}, []string{"bash", "--posix", "-i"}, hookEnv, "env"},
		{[]string{"bash", "-o", "posix", "-l"}, []string{"bash", "-i", "-o", "posix"}, hookEnv, "env"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.argv, " "), func(t *testing.T) {
			p, err := planGate(tt.argv, g, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.argv)
			assert.Equal(t, tt.hook, p.mode.hook)
			assert.Equal(t, tt.startup, strings.Join(p.mode.startup, " "))
			assert.Contains(t, p.env, "EXECGATE_GATE_HOOK="+string(tt.hook))
			assert.Contains(t, p.env, "EXECGATE_GATE_STARTUP="+tt.startup)
		})
	}

	p, err := planGate([]string{"bash", "--init-file", "/x/rc"}, g, nil)
	require.NoError(t, err)
	assert.Equal(t, "/x/rc", p.rcfile, "the caller's rc file is run by the gate, and named for review")
	assert.Contains(t, p.env, "EXECGATE_GATE_RC=/x/rc")

	for _, argv := range [][]string{
		{"bash", "-r"}, {"bash", "--restricted"}, {"sh", "-p"}, {"bash", "--posix", "-o", "privileged"},
		{"bash", "-c", "true"}, {"bash", "--rcfile"},
	} {
		_, err := planGate(argv, g, nil)
		assert.Error(t, err, "%q", argv)
	}
}

// TestPlanGateEnvironment: the hook's variable is replaced, and what the
// caller had set is handed to the gate to put back.
func TestPlanGateEnvironment(t *testing.T) {
	environ := []string{"PATH=/bin", "PROMPT_COMMAND=history -a", "ENV=$HOME/.shrc", "EXECGATE_GATE_BIN=/stale"}
	p, err := planGate([]string{"bash", "--norc"}, testGate, environ)
	require.NoError(t, err)
	env := gateEnviron(environ, p.drop, p.env)
	assert.Contains(t, env, "PROMPT_COMMAND=. "+testGate)
	assert.Contains(t, env, "EXECGATE_GATE_SAVED=history -a")
	assert.Contains(t, env, "ENV=$HOME/.shrc")
	assert.NotContains(t, env, "PROMPT_COMMAND=history -a")
	assert.NotContains(t, env, "EXECGATE_GATE_BIN=/stale")

	p, err = planGate([]string{"sh"}, testGate, environ)
	require.NoError(t, err)
	env = gateEnviron(environ, p.drop, p.env)
	assert.Contains(t, env, "ENV="+testGate)
	assert.Contains(t, env, "EXECGATE_GATE_SAVED=$HOME/.shrc")
	assert.Contains(t, env, "PROMPT_COMMAND=history -a")

	p, err = planGate([]string{"bash", "-l"}, "/tmp/it's here/gate.bash", nil)
	require.NoError(t, err)
	assert.Contains(t, p.env, `PROMPT_COMMAND=. "/tmp/it's here/gate.bash"`)
	_, err = planGate([]string{"sh"}, "/tmp/$HOME/gate.bash", nil)
	assert.Error(t, err, "$ENV is expanded: such a path would read as another")
}

func TestWriteGate(t *testing.T) {
	rt := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.Mkdir(rt, 0o700))
	state := t.TempDir()
	getenv := func(k string) string {
		return map[string]string{"XDG_RUNTIME_DIR": rt, "XDG_STATE_HOME": state}[k]
	}
	path, err := writeGate(getenv)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(rt, "execgate", gateFileName()), path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, gateScript, string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())

	// A file that is not the gate is replaced, not run.
	require.NoError(t, os.WriteFile(path, []byte("trap - DEBUG\n"), 0o600))
	again, err := writeGate(getenv)
	require.NoError(t, err)
	assert.Equal(t, path, again)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, gateScript, string(b))
	require.NoError(t, os.Chmod(path, 0o644))
	_, err = writeGate(getenv)
	require.NoError(t, err)
	fi, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// A directory others may write to is not used: the state directory is.
	require.NoError(t, os.Chmod(filepath.Join(rt, "execgate"), 0o777))
	path, err = writeGate(getenv)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(state, "execgate", "gate", gateFileName()), path)

	// Nowhere to write: an error, and the shim falls back.
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = writeGate(func(k string) string {
		return map[string]string{"XDG_RUNTIME_DIR": rt, "XDG_STATE_HOME": file}[k]
	})
	assert.Error(t, err)
}

func realBashPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/bin/bash", "/usr/bin/bash"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("bash is not installed")
	return ""
}

func TestProbeBash(t *testing.T) {
	bash := realBashPath(t)
	ctx := context.Background()
	if err := probeBash(ctx, bash); err != nil {
		out, _ := exec.Command(bash, "-c", "echo $BASH_VERSION").Output()
		if v := string(out); strings.HasPrefix(v, "4.") || strings.HasPrefix(v, "5.0") {
			t.Skipf("bash %s predates the HISTCMD the gate needs", strings.TrimSpace(v))
		}
		t.Fatalf("probe of %s: %v", bash, err)
	}
	assert.Error(t, probeBash(ctx, "/nonexistent/bash"))
	// A shell that is no bash (dash as /bin/sh) cannot run the gate.
	if sh, err := filepath.EvalSymlinks("/bin/sh"); err == nil && !strings.Contains(filepath.Base(sh), "bash") {
		assert.Error(t, probeBash(ctx, sh))
	}
}

// TestGateStartupLikeBash runs the real bash both ways, with the caller's
// command line and with the gate's, commands on stdin: the start-up files
// read must be the same ones.
func TestGateStartupLikeBash(t *testing.T) {
	bash := realBashPath(t)
	if err := probeBash(context.Background(), bash); err != nil {
		t.Skip(err)
	}
	home := t.TempDir()
	for name, marker := range map[string]string{
		".bashrc": "rc", ".bash_profile": "bash_profile", ".profile": "profile", ".shrc": "env", "other.rc": "other",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(home, name), []byte("startup=\"$startup "+marker+"\"\n"), 0o644))
	}
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate.bash")
	require.NoError(t, os.WriteFile(gate, []byte(gateScript), 0o600))
	allow := filepath.Join(dir, "allow")
	require.NoError(t, os.WriteFile(allow, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "ENV=" + filepath.Join(home, ".shrc"), "TERM=dumb"}
	run := func(argv, environ []string) string {
		cmd := exec.Command(bash)
		cmd.Args = argv
		cmd.Env = environ
		cmd.Dir = home
		cmd.Stdin = strings.NewReader("echo \"[$startup] $(shopt -p login_shell)\"\n")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no terminal: no job control noise
		out, err := cmd.Output()
		require.NoError(t, err, "%q", argv)
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "[") {
				return line
			}
		}
		t.Fatalf("%q printed %q", argv, out)
		return ""
	}
	for _, argv := range [][]string{
		{"bash", "-i"}, {"-bash", "-i"}, {"bash", "-il"}, {"bash", "--norc", "-i"}, {"bash", "--noprofile", "--login", "-i"},
		{"bash", "--rcfile", filepath.Join(home, "other.rc"), "-i"}, {"sh", "-i"}, {"-sh", "-i"}, {"bash", "--posix", "-i"},
	} {
		t.Run(strings.Join(argv, " "), func(t *testing.T) {
			want := run(argv, env)
			p, err := planGate(argv, gate, env)
			require.NoError(t, err)
			genv := gateEnviron(env, p.drop, append(p.env,
				"EXECGATE_GATE_BIN="+allow, "EXECGATE_GATE_CONFIG=/c", "EXECGATE_GATE_AGENT=a"))
			got := run(p.argv, genv)
			t.Logf("bash read %s", got)
			// The gate makes every shell a non-login one.
			assert.Equal(t, strings.Replace(want, "shopt -s login_shell", "shopt -u login_shell", 1), got)
		})
	}
}
