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
	"github.com/execgate/execgate/shim"
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

// TestVersionManagerShimInsideConfined: with the shims first on PATH, a
// version manager's shim (pyenv's python3, rbenv's ruby, asdf's: bash
// scripts that set variables and exec the real program) started by a
// confined command is handed to a nested shim, which judged the script
// and asked, with nobody reachable from inside the sandbox: refused, on
// every run. Held by the enclosing sandbox, it runs, and so does whatever
// the enclosing command's code runs through a shell: the kernel holds it
// as it holds that code.
func TestVersionManagerShimInsideConfined(t *testing.T) {
	realBash(t)
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("this machine cannot confine commands (%s): nothing runs confined here", st.Reason)
	}
	e := newShimEnv(t, "")
	vm := filepath.Join(t.TempDir(), "vm", "shims")
	require.NoError(t, os.MkdirAll(vm, 0o755))
	// pyenv's shim, in its shape: PS4 and an exec of a program found at
	// run time are what made the nested shim ask.
	tool := "#!/usr/bin/env bash\nset -e\n[ -n \"$VM_DEBUG\" ] && set -x\nprogram=\"${0##*/}\"\nexport PS4='+ [${BASH_SOURCE}:${LINENO}] '\nexec \"$VM_REAL\" \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(vm, "greet"), []byte(tool), 0o755))
	real := filepath.Join(vm, "..", "greet-real")
	require.NoError(t, os.WriteFile(real, []byte("#!/bin/sh\necho \"hello $1\" > greeted.txt\necho greeted\n"), 0o755))
	for i, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			e.env[i] = "PATH=" + filepath.Join(e.dir, "shims") + ":" + vm + ":" + v
		}
	}
	e.env = append(e.env, "VM_REAL="+real)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "run.py"), []byte(
		"import subprocess, sys\nsys.exit(subprocess.run(['greet', 'world']).returncode)\n"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "python3 run.py"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	assert.Equal(t, "greeted\n", o.stdout)
	assert.Empty(t, o.stderr)
	b, err := os.ReadFile(filepath.Join(e.work, "greeted.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello world\n", string(b))

	// A dangerous command started the same way fails on the kernel's
	// refusal, as it would run by the script itself.
	precious := filepath.Join(e.home(), "precious")
	require.NoError(t, os.MkdirAll(precious, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "wipe.py"), []byte(
		"import subprocess, sys\nsys.exit(subprocess.run(['bash', '-c', 'rm -rf ~/precious']).returncode)\n"), 0o644))
	o = runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "python3 wipe.py"), "")
	assert.NotEqual(t, 0, o.status, "%+v", o)
	assert.Contains(t, o.stderr, "Permission denied")
	assert.DirExists(t, precious)
}

// TestConfinedVariableOutsideSandbox: the variable a confined command
// inherits lets nothing run unasked outside a sandbox.
func TestConfinedVariableOutsideSandbox(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, "")
	e.env = append(e.env, "EXECGATE_CONFINED="+e.work)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "x.sh"), []byte("echo ran > ran.txt\n"), 0o644))
	// Unconfined: the home opens, and no_new_privs is not set.
	o := runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", "-c", "EXECGATE_SANDBOX=off bash x.sh"), "")
	assert.Equal(t, shim.ExitDenied, o.status, "%+v", o)
	assert.NoFileExists(t, filepath.Join(e.work, "ran.txt"))
}
