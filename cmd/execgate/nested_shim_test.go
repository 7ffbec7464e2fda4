package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/sandbox"
)

// TestNestedShimInsideConfined: a confined command that starts a shell
// through the shims on PATH — npm's `sh -c` for a package script, here a
// Python script's subprocess — is let through by that nested shim, whose
// writes the sandbox keeps in the workspace the outer shim checkpointed;
// undoing the outer command takes them back. Before, the nested shim could
// not write its checkpoint from inside the sandbox, asked with nobody
// reachable, and every such script's write was refused.
func TestNestedShimInsideConfined(t *testing.T) {
	realBash(t)
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("this machine cannot confine commands (%s): nothing runs confined here", st.Reason)
	}
	// The interpreter itself: pyenv's python3 is a bash script, which
	// the shims on PATH would judge first.
	py, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("needs python3 for a script that starts a shell")
	}
	python := strings.TrimSpace(string(py))
	e := newShimEnv(t, "")
	for i, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			e.env[i] = "PATH=" + filepath.Join(e.dir, "shims") + ":" + v
		}
	}
	script := "import subprocess, sys\nsys.exit(subprocess.run(['sh', '-c', 'echo nested > nested.txt']).returncode)\n"
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "run.py"), []byte(script), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", python+" run.py"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	b, err := os.ReadFile(filepath.Join(e.work, "nested.txt"))
	require.NoError(t, err, "%+v", o)
	assert.Equal(t, "nested\n", string(b))

	u := e.undo(t)
	require.Equal(t, 0, u.status, "%+v", u)
	assert.NoFileExists(t, filepath.Join(e.work, "nested.txt"), "undo of the confined command takes its nested write back")
	assert.FileExists(t, filepath.Join(e.work, "run.py"))
}

// TestCheckpointedVariableOutsideSandbox: the variable a confined command
// inherits changes nothing outside a sandbox — an agent that sets it gets
// its command checkpointed as always.
func TestCheckpointedVariableOutsideSandbox(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, fullConfig)
	e.env = append(e.env, "EXECGATE_CHECKPOINTED="+e.work)
	o := runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", "-c", "echo x > f"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	list := e.undo(t, "--list")
	require.Equal(t, 0, list.status, "%+v", list)
	assert.Contains(t, list.stdout, "echo x > f", "the command was checkpointed")
}
