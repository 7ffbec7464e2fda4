package self

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaries: each binary finds its sibling when install.sh put it
// there, and only then; execgate-shell's CLI is the execgate beside it.
func TestBinaries(t *testing.T) {
	dir := t.TempDir()
	cli, shell := filepath.Join(dir, CLIName), filepath.Join(dir, ShellName)
	require.NoError(t, os.WriteFile(shell, []byte("x"), 0o755))

	assert.Equal(t, []string{shell}, binariesOf(shell), "no CLI beside it yet")
	_, err := cliOf(shell)
	assert.ErrorContains(t, err, "run install.sh again")

	require.NoError(t, os.WriteFile(cli, []byte("y"), 0o755))
	assert.Equal(t, []string{shell, cli}, binariesOf(shell))
	assert.Equal(t, []string{cli, shell}, binariesOf(cli))
	got, err := cliOf(shell)
	require.NoError(t, err)
	assert.Equal(t, cli, got)
	got, err = cliOf(cli)
	require.NoError(t, err)
	assert.Equal(t, cli, got)

	other := filepath.Join(dir, "bash")
	assert.Equal(t, []string{other, cli}, binariesOf(other), "a binary under another name still knows the CLI beside it")
}

// TestIsRunningBinary: the running executable is itself, through a link
// too; another file is not.
func TestIsRunningBinary(t *testing.T) {
	exe, err := Executable()
	require.NoError(t, err)
	assert.True(t, Is(exe))
	link := filepath.Join(t.TempDir(), "bash")
	require.NoError(t, os.Symlink(exe, link))
	assert.True(t, Is(link))
	other := filepath.Join(t.TempDir(), "x")
	require.NoError(t, os.WriteFile(other, nil, 0o755))
	assert.False(t, Is(other))
	assert.False(t, Is(filepath.Join(t.TempDir(), "missing")))
}

// TestExecutableResolved: run through a symbolic link to its directory and
// one to itself, the binary still reports its real path (what FindShell
// and doctor compare), here without resolving it again on Linux.
func TestExecutableResolved(t *testing.T) {
	if os.Getenv("EXECGATE_SELF_PRINT") != "" {
		exe, err := Executable()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Print(exe)
		return
	}
	test, err := os.Executable()
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(test)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Dir(real), filepath.Join(dir, "dirlink")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "dirlink", filepath.Base(real)), filepath.Join(dir, "bash")))
	cmd := exec.Command(filepath.Join(dir, "bash"), "-test.run=^TestExecutableResolved$")
	cmd.Env = append(os.Environ(), "EXECGATE_SELF_PRINT=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(out), real), "got %q, want %q", out, real)
}
