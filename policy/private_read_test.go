package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Reading a file no credential list names is safe only where a read is
// proven free of secrets: a token store nobody listed is not.
func TestUnlistedSecretsAreNotSafe(t *testing.T) {
	w := newWorld(t)
	for _, f := range []string{
		".config/wandb/settings",
		".config/github-copilot/hosts.json",
		".config/replicate/token",
		".age/key.txt",
		".config/Code/User/globalStorage/state.vscdb",
	} {
		w.write(filepath.Join(w.home, f), "token=CANARY\n")
		w.requireNotSafe("cat ~/"+f, "home directory outside the workspace")
		w.requireNotSafe("head -c 100 ~/"+f, "home directory")
		w.requireNotSafe("grep token ~/"+f, "home directory")
	}
	w.requireNotSafe("cat < ~/.config/replicate/token", "home directory")
	w.requireNotSafe("grep -r token ~/.config", "")
	w.requireNotSafe("cat ../../.config/wandb/settings", "home directory")
	w.requireNotSafe("cat /etc/master.passwd", "")
	w.requireNotSafe("cat /proc/1/environ", "")
	w.requireNotSafe("cat /proc/1/cmdline", "process")
	w.requireNotSafe("cat /proc/self/mem", "process")
	w.requireNotSafe("cat /proc/1/fd/3", "process")
	w.requireNotSafe("cat ~root/.config/x", "")
	w.requireNotSafe("cat /home/someone/notes.txt", "home directory")

	// What is proven free of secrets stays safe: the workspace, the
	// system's files, listing names, a process's state, published code
	// in the package caches.
	w.write(filepath.Join(w.home, "go/pkg/mod/example.com/m@v1.0.0/m.go"), "package m\n")
	for _, cmd := range []string{
		"cat README.md",
		"grep -rn repo .",
		"cat /etc/hostname",
		"cat /proc/cpuinfo",
		"cat /proc/1/status",
		"ls ~/.config",
		"wc -c ~/.config/replicate/token",
		"find ~/.config -name settings",
		"cat ~/go/pkg/mod/example.com/m@v1.0.0/m.go",
	} {
		w.requireSafe(cmd)
	}
}

// A file another user owns is theirs, wherever it lies.
func TestAnotherUsersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user takes root")
	}
	w := newWorld(t)
	p := filepath.Join(w.root, "theirs.txt")
	w.write(p, "x\n")
	require.NoError(t, os.Chown(p, 65534, 65534))
	w.requireNotSafe("cat "+p, "another user")
	// In the workspace, the files are the project's, whoever owns them
	// (a checkout mounted into a container).
	q := filepath.Join(w.ws, "mounted.txt")
	w.write(q, "x\n")
	require.NoError(t, os.Chown(q, 65534, 65534))
	w.requireSafe("cat mounted.txt")
}

// jq's -f reads a program from a file: /dev/stdin with $ENV in it prints
// the environment.
func TestJqEnvironmentFromStdin(t *testing.T) {
	w := newWorld(t)
	w.requireNotSafe("jq -n -f /dev/stdin <<< '$ENV'", "input")
	w.requireNotSafe("jq -n --from-file=/dev/stdin <<< '$ENV'", "input")
	w.write(filepath.Join(w.ws, "env.jq"), "$ENV | keys\n")
	w.write(filepath.Join(w.ws, "ok.jq"), ".name\n")
	w.requireNotSafe("jq -n -f env.jq", "environment")
	w.requireSafe("jq -f ok.jq package.json")
}
