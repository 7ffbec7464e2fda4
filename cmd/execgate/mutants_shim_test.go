package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShimJudgesBashEnv: a non-interactive bash sources $BASH_ENV before
// the program, and the check never sees that file. That is why newShimEnv
// strips BASH_ENV from the tests' environment: left in, it would make
// every run need review. Here it is set on purpose: the shim must not run
// a plain `ls` (nobody can be asked, so it is denied) and must say why,
// and the file must not have been sourced.
func TestShimJudgesBashEnv(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, "")
	marker := filepath.Join(e.work, "sourced")
	rc := filepath.Join(t.TempDir(), "rc.sh")
	require.NoError(t, os.WriteFile(rc, []byte("touch "+marker+"\n"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// Without BASH_ENV the same command runs.
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "ls"), "")
	require.Equal(t, 0, o.status, "stderr %q", o.stderr)

	cmd := e.command(ctx, e.shim("bash"), "bash", "-c", "ls")
	cmd.Env = append(cmd.Env, "BASH_ENV="+rc)
	o = runOutcome(t, cmd, "")
	assert.Equal(t, 126, o.status, "stderr %q", o.stderr)
	assert.True(t, strings.HasPrefix(o.stderr, "execgate: denied: "), "stderr %q", o.stderr)
	assert.Contains(t, o.stderr, "BASH_ENV")
	assert.NoFileExists(t, marker, "the BASH_ENV file ran")
}

// TestShimInterpSecurityDeny: with the interp engine, security=deny still
// refuses everything, including commands only known at run time, and
// nothing runs.
func TestShimInterpSecurityDeny(t *testing.T) {
	realBash(t)
	e := newShimEnv(t, `{"version": 1, "shell": {"engine": "interp"}, "defaults": {"security": "deny"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, src := range []string{"ls", "touch made", `c=touch; "$c" made`} {
		o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", src), "")
		denyLine(t, o, "execgate: denied: security=deny")
		assert.NoFileExists(t, filepath.Join(e.work, "made"), src)
	}
}
