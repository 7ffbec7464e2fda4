package auditexport

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzReadCursor: a cursor file is read back as written, and anything else
// is an error (never a panic, never silently the start).
func FuzzReadCursor(f *testing.F) {
	f.Add([]byte("v1 12 0\n"))
	f.Add([]byte("v1 -1 0"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, raw []byte) {
		path := filepath.Join(t.TempDir(), "c.cursor")
		require.NoError(t, os.WriteFile(path, raw, 0o600))
		p, err := readCursor(path)
		if err != nil {
			return
		}
		require.NoError(t, writeCursor(path, p))
		q, err := readCursor(path)
		require.NoError(t, err)
		assert.Equal(t, p, q)
	})
}
