package interp

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/internal/redact"
)

// TestRunSpillRedacts: a command printing every known token shape, past
// the cap: the caller receives the secrets as printed, the spill file
// keeps only markers, and the file is private.
func TestRunSpillRedacts(t *testing.T) {
	sh := bash(t)
	dir := filepath.Join(t.TempDir(), "output")
	var script strings.Builder
	for _, ex := range redact.Examples() {
		script.WriteString("printf '%s\\n' " + shellQuote(ex.Text) + "\n")
	}
	script.WriteString("seq 1 20000\n")
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", script.String()},
		Stdout: &out, MaxBytes: 50000, TailBytes: 100, SpillDir: dir, SpillMaxBytes: 1 << 20,
	})
	require.NoError(t, err)
	require.NotEmpty(t, res.SpillPath)
	spilled, err := os.ReadFile(res.SpillPath)
	require.NoError(t, err)
	for _, ex := range redact.Examples() {
		assert.Contains(t, out.String(), ex.Secret, "the caller sees what the command printed")
		assert.NotContains(t, string(spilled), ex.Secret, ex.Name)
		assert.Contains(t, string(spilled), redact.Marker(ex.Name))
	}
	assert.True(t, strings.HasSuffix(string(spilled), "19999\n20000\n"), "nothing lost after the secrets")
	assertPerm(t, dir, 0o700)
	assertPerm(t, res.SpillPath, 0o600)
}

// TestSpillRedactsAcrossWrites: a secret cut by the boundary between two
// reads from the pipe, at any byte, is still redacted in the file.
func TestSpillRedactsAcrossWrites(t *testing.T) {
	dir := t.TempDir()
	for _, ex := range redact.Examples() {
		in := "before " + ex.Text + " after\n"
		for i := 1; i < len(in); i++ {
			sp := newSpill(&Options{SpillDir: dir, SpillMaxBytes: 1 << 20, SpillKeep: 1000}, slog.New(slog.DiscardHandler))
			sp.write([]byte(in[:i]), false)
			sp.write([]byte(in[i:]), true)
			path, complete := sp.keep()
			require.True(t, complete)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.NotContains(t, string(got), ex.Secret, "%s cut at %d", ex.Name, i)
			assert.True(t, strings.HasSuffix(string(got), " after\n"), "%s cut at %d: %q", ex.Name, i, got)
			require.NoError(t, os.Remove(path))
		}
	}
}

// TestSpillPrune: old spills go by count, by age and by total size,
// newest first kept; the new spill always stays, and other files are
// left alone.
func TestSpillPrune(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name  string
		opts  Options
		files []struct { // oldest first
			size int
			age  time.Duration
		}
		want []int // indexes of the files left
	}{
		{
			name: "count", opts: Options{SpillKeep: 3},
			files: []struct {
				size int
				age  time.Duration
			}{{10, time.Hour}, {10, time.Hour}, {10, time.Minute}, {10, time.Minute}},
			want: []int{2, 3},
		},
		{
			name: "age", opts: Options{SpillMaxAge: 24 * time.Hour},
			files: []struct {
				size int
				age  time.Duration
			}{{10, 72 * time.Hour}, {10, 25 * time.Hour}, {10, 23 * time.Hour}, {10, time.Minute}},
			want: []int{2, 3},
		},
		{
			name: "total size", opts: Options{SpillMaxTotal: 1000},
			files: []struct {
				size int
				age  time.Duration
			}{{100, time.Hour}, {500, time.Hour}, {400, time.Minute}, {200, time.Minute}},
			want: []int{2, 3}, // 200+400 and the new one fit, +500 does not, nor anything older
		},
		{
			name: "defaults", opts: Options{},
			files: []struct {
				size int
				age  time.Duration
			}{{10, DefaultSpillMaxAge + time.Hour}, {10, DefaultSpillMaxAge - time.Hour}},
			want: []int{1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			other := writeFile(t, dir, "notes.txt", "mine")
			require.NoError(t, os.Chtimes(other, now.Add(-365*24*time.Hour), now.Add(-365*24*time.Hour)))
			var names []string
			for i, f := range tc.files {
				name := spillPrefix + now.Add(-f.age).UTC().Format(spillTimeLayout) + "-" + string(rune('a'+i)) + spillSuffix
				p := writeFile(t, dir, name, strings.Repeat("x", f.size))
				require.NoError(t, os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)))
				names = append(names, p)
			}
			o := tc.opts
			o.SpillDir, o.SpillMaxBytes = dir, 1<<20
			sp := newSpill(&o, slog.New(slog.DiscardHandler))
			sp.write([]byte("new spill\n"), true)
			own, _ := sp.keep()
			require.NotEmpty(t, own)
			var want []string
			for _, i := range tc.want {
				want = append(want, names[i])
			}
			want = append(want, own)
			assert.Equal(t, want, spillFiles(t, dir))
			assert.FileExists(t, other)
		})
	}
}

func assertPerm(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, want, fi.Mode().Perm(), path)
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
