package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetupUndoAllCLI: --undo-all takes no agent and no flag that names
// one; with nothing applied it succeeds; a line that still names the shims
// makes it fail with the line and its fix, so that an uninstall stops.
func TestSetupUndoAllCLI(t *testing.T) {
	e := newSetupEnv(t)
	for _, args := range [][]string{
		{"claude", "--undo-all"}, {"--undo-all", "--apply"}, {"--undo-all", "--undo"},
		{"--undo-all", "--hook"}, {"--undo-all", "--settings", "x.json"},
	} {
		code, out, errOut := e.run(append(args, "--shims", e.shims)...)
		assert.Equal(t, exitUsage, code, "%v: %s%s", args, out, errOut)
		oneLine(t, errOut)
	}

	code, out, errOut := e.run("--undo-all", "--shims", e.shims)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "execgate: no setup --apply is recorded; nothing to undo\n", out)

	bashrc := filepath.Join(e.home, ".bashrc")
	require.NoError(t, os.WriteFile(bashrc, []byte("export SHELL="+filepath.Join(e.shims, "bash")+"\n"), 0o600))
	code, _, errOut = e.run("--undo-all", "--shims", e.shims)
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, "~/.bashrc:1: export SHELL=")
	assert.Contains(t, errOut, "fix: edit "+bashrc)
	assert.Contains(t, errOut, "1 thing still points at execgate")
}
