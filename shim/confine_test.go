package shim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/prompt"
	"github.com/execgate/execgate/sandbox"
)

// confinedWorld runs programs through the shim in a workspace beside a
// home with a canary key, nobody to ask, and returns what happened.
type confinedWorld struct {
	home, ws string
	env      map[string]string
	asked    int
}

func newConfinedWorld(t *testing.T) *confinedWorld {
	t.Helper()
	root := t.TempDir()
	w := &confinedWorld{home: filepath.Join(root, "home"), ws: filepath.Join(root, "home", "proj")}
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, ".git"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(w.home, ".ssh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(w.home, ".ssh", "id_rsa"), []byte("CANARY\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.home, ".bashrc"), []byte("# mine\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "steal.py"), []byte(`import os
try:
    print(open(os.path.expanduser("~/.ssh/id_rsa")).read())
except OSError as e:
    print("refused:", e.strerror)
try:
    open(os.path.expanduser("~/.bashrc"), "a").write("pwned\n")
except OSError as e:
    print("refused:", e.strerror)
open("out.txt", "w").write("workspace ok\n")
`), 0o600))
	w.env = map[string]string{"HOME": w.home, "XDG_STATE_HOME": filepath.Join(root, "state"),
		"XDG_CONFIG_HOME": filepath.Join(root, "config"), "PATH": "/usr/local/bin:/usr/bin:/bin", "EXECGATE_AGENT": "test"}
	return w
}

func (w *confinedWorld) run(t *testing.T, program string, extraEnv ...string) (int, string, string) {
	t.Helper()
	cwd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(w.ws))
	defer os.Chdir(cwd)
	stdout, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	stderr, err := os.CreateTemp(t.TempDir(), "err")
	require.NoError(t, err)
	env := map[string]string{}
	for k, v := range w.env {
		env[k] = v
	}
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	status := Main(context.Background(), Options{
		Argv: []string{"bash", "-c", program}, Stdout: stdout, Stderr: stderr,
		Getenv: func(k string) string { return env[k] }, Environ: environ,
		Asker: askerFunc(func(context.Context, prompt.Request) (prompt.Answer, error) {
			w.asked++
			return prompt.Answer{}, prompt.ErrUnavailable
		}),
	})
	out, _ := os.ReadFile(stdout.Name())
	errOut, _ := os.ReadFile(stderr.Name())
	return status, string(out), string(errOut)
}

// A workspace program nobody read runs unasked, confined: it writes the
// workspace, and its reads of the key and writes to .bashrc fail.
func TestConfinedOutcome(t *testing.T) {
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("cannot confine here: %s", st.Reason)
	}
	w := newConfinedWorld(t)
	status, out, errOut := w.run(t, "python3 steal.py")
	assert.Equal(t, 0, status, errOut)
	assert.Equal(t, 0, w.asked)
	assert.NotContains(t, out, "CANARY")
	assert.Equal(t, 2, strings.Count(out, "refused: Permission denied"), out)
	b, _ := os.ReadFile(filepath.Join(w.home, ".bashrc"))
	assert.Equal(t, "# mine\n", string(b))
	b, _ = os.ReadFile(filepath.Join(w.ws, "out.txt"))
	assert.Equal(t, "workspace ok\n", string(b))
	audit, err := os.ReadFile(filepath.Join(w.env["XDG_STATE_HOME"], "execgate", "audit.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(audit), `"decidedBy":"confined"`)
	assert.Contains(t, string(audit), `"confined":"writes the workspace`)
}

// Where confinement is off (or the kernel cannot), nothing runs as
// "confined": the same command asks, and with nobody to ask is refused.
func TestNoSandboxAsks(t *testing.T) {
	w := newConfinedWorld(t)
	status, out, errOut := w.run(t, "python3 steal.py", sandbox.OffEnv+"=off")
	assert.Equal(t, ExitDenied, status)
	assert.Equal(t, 1, w.asked)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "execgate: denied")
	_, err := os.Stat(filepath.Join(w.ws, "out.txt"))
	assert.True(t, os.IsNotExist(err))
}

// A proven-safe command runs confined too, with no write at all.
func TestSafeCommandConfined(t *testing.T) {
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("cannot confine here: %s", st.Reason)
	}
	w := newConfinedWorld(t)
	status, out, _ := w.run(t, "ls")
	assert.Equal(t, 0, status)
	assert.Equal(t, "steal.py\n", out)
	audit, err := os.ReadFile(filepath.Join(w.env["XDG_STATE_HOME"], "execgate", "audit.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(audit), `"confined":"reads the workspace`)
}
