package shim

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Configuration git reads from files the planted-code watch did not list:
// an include the repository's own configuration names inside the work
// tree (include.path = ../team.gitconfig, a common way to share settings),
// and a commondir file in .git, which makes git read the configuration
// and hooks of the directory it names. A confined command rewrote either
// to set core.fsmonitor, which the user's next git status runs,
// unconfined; the next command ran confined, unasked. It asks now.
func TestConfinedPlantedConfigElsewhereAsks(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	fsmonitor := "[core]\n\tfsmonitor = cat ~/.ssh/id_rsa\n\trepositoryformatversion = 0\n"
	for name, c := range map[string]struct {
		setup   string
		plant   string
		planted string
	}{
		"include": {
			setup:   "printf '[core]\\n' > team.gitconfig && git config include.path ../team.gitconfig",
			plant:   "open('team.gitconfig', 'w').write(" + pyQuote(fsmonitor) + ")\n",
			planted: "team.gitconfig",
		},
		// Too large for execgate to read (git reads it): the watch lost
		// sight of every file the configuration names.
		"include unreadable": {
			setup:   "git config include.path ../team.gitconfig && mkdir .githooks",
			plant:   "open('team.gitconfig', 'w').write(" + pyQuote(fsmonitor+"\thooksPath = .githooks\n") + " + '#' * (2 << 20) + '\\n')\nopen('.githooks/pre-commit', 'w').write('cat ~/.ssh/id_rsa\\n')\n",
			planted: "git's configuration cannot be read",
		},
		// .git a link to the repository inside the work tree: the watch
		// listed neither its config nor its hooks.
		"dotgit link": {
			setup:   "mv .git .realgit && ln -s .realgit .git",
			plant:   "open('.git/config', 'a').write(" + pyQuote(fsmonitor) + ")\n",
			planted: ".git/config",
		},
		"commondir": {
			setup: "true",
			plant: "import os\nos.makedirs('.git/x/objects')\nos.makedirs('.git/x/refs')\n" +
				"open('.git/x/config', 'w').write(" + pyQuote(fsmonitor) + ")\nopen('.git/commondir', 'w').write('x\\n')\n",
			planted: ".git/commondir",
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := newConfinedWorld(t)
			require.NoError(t, os.RemoveAll(filepath.Join(w.ws, ".git")))
			setup := exec.Command("/bin/sh", "-c", "git init -q && "+c.setup)
			setup.Dir, setup.Env = w.ws, []string{"HOME=" + w.home, "PATH=" + w.env["PATH"]}
			out, err := setup.CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "harmless.py"), []byte("open('out.txt', 'w').write('ok')\n"), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "plant.py"), []byte(c.plant), 0o600))
			status, _, errOut := w.run(t, "python3 harmless.py")
			require.Equal(t, 0, status, errOut)
			status, _, errOut = w.run(t, "python3 plant.py")
			require.Equal(t, 0, status, errOut)
			require.Equal(t, 0, w.asked, "the planting runs confined, unasked")

			// What git itself now runs: the planted fsmonitor.
			status2 := exec.Command("git", "config", "core.fsmonitor")
			status2.Dir, status2.Env = w.ws, []string{"HOME=" + w.home, "PATH=" + w.env["PATH"]}
			got, err := status2.Output()
			require.NoError(t, err)
			require.Equal(t, "cat ~/.ssh/id_rsa\n", string(got))

			status, _, errOut = w.run(t, "python3 harmless.py")
			assert.Equal(t, ExitDenied, status)
			assert.Equal(t, 1, w.asked)
			assert.Contains(t, errOut, c.planted)
		})
	}
}

// pyQuote is s as a Python string literal.
func pyQuote(s string) string {
	out := []byte{'\''}
	for _, r := range []byte(s) {
		switch r {
		case '\n':
			out = append(out, '\\', 'n')
		case '\t':
			out = append(out, '\\', 't')
		case '\'', '\\':
			out = append(out, '\\', r)
		default:
			out = append(out, r)
		}
	}
	return string(append(out, '\''))
}

// A FIFO put in place of .git/config by a confined command made every
// later command in the workspace hang in the planted-code watch, which
// reads git's configuration: it is no regular file, so the configuration
// cannot be read, and the next command says so and asks.
func TestFifoGitConfigDoesNotHang(t *testing.T) {
	w := newConfinedRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "fifo.py"), []byte(`import os
os.remove(".git/config")
os.mkfifo(".git/config")
`), 0o600))
	status, _, errOut := w.run(t, "python3 fifo.py")
	require.Equal(t, 0, status, errOut)
	done := make(chan struct{})
	var errOut2 string
	go func() {
		defer close(done)
		_, _, errOut2 = w.run(t, "ls")
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		// Let the reader go, so that the test can end.
		if f, err := os.OpenFile(filepath.Join(w.ws, ".git", "config"), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("the next command hung on a FIFO in place of .git/config")
	}
	assert.Contains(t, errOut2, "code that runs outside the sandbox changed", "%q", errOut2)
}
