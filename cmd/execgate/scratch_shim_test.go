package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A script run confined deletes a scratch file through the shims on its
// PATH (a Makefile's clean step, npm's sh -c): the nested shim cannot take
// a checkpoint inside the sandbox, and need not — the outer one's covers
// it — so the deletion runs, as it did before scratch files existed.
func TestNestedScratchDeletionRuns(t *testing.T) {
	requireConfinement(t)
	e := newShimEnv(t, "")
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", e.work, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Env = []string{"HOME=" + e.home(), "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "README"), []byte("r\n"), 0o644))
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "init")
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "repro.py"), []byte("print(1)\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "clean.sh"), []byte("bash -c 'rm repro.py'\necho rc=$?\n"), 0o644))
	e.shimsFirst()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "sh clean.sh"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	assert.Equal(t, "rc=0\n", o.stdout, "%+v", o)
	assert.NoFileExists(t, filepath.Join(e.work, "repro.py"))
}
