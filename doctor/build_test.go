package doctor

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSameBuild: two binaries built from one tree are one build; a binary
// built elsewhere (this test binary carries no source revision) is not, and
// a file that is no Go binary says so.
func TestSameBuild(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the Go toolchain to build execgate-shell")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git for the source revision the build records")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "execgate-shell"), filepath.Join(dir, "copy")
	cmd := exec.Command("go", "build", "-buildvcs=true", "-o", a, "../cmd/execgate-shell")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot build with version control information here (%v): %s", err, out)
	}
	if info, err := buildinfo.ReadFile(a); err == nil && buildSetting(info, "vcs.revision") == "" {
		// Go records no revision for a build in a git worktree or outside
		// a repository: both binaries then agree on nothing to compare.
		t.Skip("the build records no source revision here (a git worktree, or no .git), so there is nothing to tell builds apart by")
	}
	data, err := os.ReadFile(a)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(b, data, 0o755))
	assert.Empty(t, sameBuild(a, b))

	self, err := os.Executable()
	require.NoError(t, err)
	assert.NotEmpty(t, sameBuild(a, self), "a test binary is not the build of the tree")

	notGo := filepath.Join(dir, "script")
	require.NoError(t, os.WriteFile(notGo, []byte("#!/bin/sh\n"), 0o755))
	assert.Contains(t, sameBuild(a, notGo), "cannot read")
}
