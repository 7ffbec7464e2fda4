package interp

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunDevNullModes: a missing stream is /dev/null opened as os/exec
// opens it — read-only as stdin, write-only as stdout or stderr — so the
// shell sees what it saw before spawn: writing to stdin fails with EBADF,
// as does reading from stdout.
func TestRunDevNullModes(t *testing.T) {
	sh := bash(t)
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", `echo x >&0 2>/dev/null; echo "write stdin $?"`},
		Stdout: &out, MaxBytes: 1 << 20, TailBytes: DefaultTailBytes,
	})
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitStatus)
	assert.Equal(t, "write stdin 1\n", out.String(), "stdin is /dev/null read-only")

	// No cap: a missing stdout is /dev/null itself, write-only.
	path := filepath.Join(t.TempDir(), "err")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", `cat <&1 >/dev/null 2>&1; echo "read stdout $?" >&2`},
		Stderr: f,
	})
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "read stdout 1\n", string(b), "stdout is /dev/null write-only")
}
