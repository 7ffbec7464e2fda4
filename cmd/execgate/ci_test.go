package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCINoBinaries runs .ci/no-binaries, the CI step that keeps build
// outputs out of git, on a repository of its own: silent and successful
// with text, a script and a link to a program; one line naming each
// tracked ELF or Mach-O file, and failure, once one is added.
func TestCINoBinaries(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	script, err := filepath.Abs("../../.ci/no-binaries")
	require.NoError(t, err)
	repo := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	_, err = run(git, "init", "-q")
	require.NoError(t, err)
	elf, err := os.ReadFile("/bin/sh")
	require.NoError(t, err)
	require.Equal(t, "\x7fELF", string(elf[:4]), "this test reads an ELF /bin/sh")
	files := map[string][]byte{
		"README.md":    []byte("# text\n"),
		"build.sh":     []byte("#!/bin/sh\necho build\n"),
		"almost/ELF":   []byte("\x7fEL"), // too short to be one
		"data/mach.go": []byte("package data // \xfe\xed\xfa\xce later in the file\n"),
	}
	for name, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, name), data, 0o755))
	}
	require.NoError(t, os.Symlink("/bin/sh", filepath.Join(repo, "sh-link")))
	_, err = run(git, "add", "-A")
	require.NoError(t, err)
	out, err := run(script)
	require.NoError(t, err, "%s", out)
	assert.Empty(t, out)

	require.NoError(t, os.WriteFile(filepath.Join(repo, "execgate"), elf, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "bin darwin"), []byte("\xcf\xfa\xed\xfe\x07\x00\x00\x01"), 0o755))
	_, err = run(git, "add", "-A")
	require.NoError(t, err)
	out, err = run(script)
	require.Error(t, err)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2, "%s", out)
	assert.Contains(t, lines[0], "bin darwin: tracked by git but an executable binary (Mach-O)")
	assert.Contains(t, lines[1], "execgate: tracked by git but an executable binary (ELF)")
}
