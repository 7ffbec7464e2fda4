package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// world is a throwaway home on a real disk, with a canary private key and
// start-up file, and a workspace inside it: the place the tests of
// resolution on disk attack.
type world struct {
	t    *testing.T
	root string
	home string
	ws   string
	env  map[string]string
}

// canaryKey is the content of the world's ~/.ssh/id_rsa.
const canaryKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nCANARY-KEY-0123\n-----END OPENSSH PRIVATE KEY-----\n"

// newWorld makes root/home (HOME) with .ssh/id_rsa and .bashrc, and the
// workspace root/home/src/repo. t.TempDir lies under the temporary
// directory, so every world is also a home under /tmp.
func newWorld(t *testing.T) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	w := &world{t: t, root: root, home: filepath.Join(root, "home"), env: map[string]string{}}
	w.ws = filepath.Join(w.home, "src", "repo")
	w.mkdir(w.ws)
	w.write(filepath.Join(w.home, ".ssh", "id_rsa"), canaryKey)
	w.write(filepath.Join(w.home, ".bashrc"), "# canary bashrc\n")
	w.write(filepath.Join(w.ws, "README.md"), "# repo\n")
	return w
}

func (w *world) mkdir(p string) {
	w.t.Helper()
	require.NoError(w.t, os.MkdirAll(p, 0o755))
}

func (w *world) write(p, content string) {
	w.t.Helper()
	w.mkdir(filepath.Dir(p))
	require.NoError(w.t, os.WriteFile(p, []byte(content), 0o600))
}

// link makes the symbolic link name (relative to the workspace unless
// absolute) pointing to target, as written.
func (w *world) link(target, name string) {
	w.t.Helper()
	if !filepath.IsAbs(name) {
		name = filepath.Join(w.ws, name)
	}
	w.mkdir(filepath.Dir(name))
	require.NoError(w.t, os.Symlink(target, name))
}

func (w *world) request(cmd string) Request {
	return Request{
		Command: cmd, Cwd: w.ws, Home: w.home,
		Getenv: func(k string) string { return w.env[k] },
		Policy: config.BuiltinPolicy(),
	}
}

// analyze judges cmd run in the workspace.
func (w *world) analyze(cmd string) Result {
	w.t.Helper()
	return testEngine(w.t).Analyze(w.request(cmd))
}

// evaluate decides cmd with allow as the allowlist.
func (w *world) evaluate(cmd string, allow ...string) Result {
	w.t.Helper()
	req := w.request(cmd)
	req.Allow = pattern.NewMatcher(entries(allow...), fakePath)
	return testEngine(w.t).Evaluate(req)
}

// requireNotSafe fails unless cmd is needs-review or dangerous, with a
// reason containing want.
func (w *world) requireNotSafe(cmd, want string) Result {
	w.t.Helper()
	res := w.analyze(cmd)
	require.NotEqual(w.t, Safe, res.Risk, "%q must not be safe", cmd)
	if want != "" {
		require.Contains(w.t, strings.ToLower(strings.Join(res.Reasons, "\n")), strings.ToLower(want), "%q", cmd)
	}
	return res
}

// requireSafe fails unless cmd is safe.
func (w *world) requireSafe(cmd string) {
	w.t.Helper()
	res := w.analyze(cmd)
	require.Equal(w.t, Safe, res.Risk, "%q: %v", cmd, res.Reasons)
}

// bash runs cmd under the real bash in the workspace, with the world's
// HOME, and returns its standard output.
func (w *world) bash(cmd string) string {
	w.t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		w.t.Skip("bash not found")
	}
	c := exec.Command(bash, "-c", cmd)
	c.Dir = w.ws
	c.Env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	out, _ := c.Output()
	return string(out)
}

// allowOf is an allowlist matcher of patterns.
func allowOf(patterns ...string) *pattern.Matcher {
	return pattern.NewMatcher(entries(patterns...), fakePath)
}
