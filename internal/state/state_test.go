package state

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestDir: the one resolver every command uses.
func TestDir(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"xdg", map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/execgate"},
		{"home", map[string]string{"HOME": "/h"}, "/h/.local/state/execgate"},
		{"relative xdg ignored", map[string]string{"XDG_STATE_HOME": "s", "HOME": "/h"}, "/h/.local/state/execgate"},
		{"nothing", map[string]string{}, ""},
		{"relative home", map[string]string{"HOME": "h"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Dir(env(tc.env))
			if tc.want == "" {
				require.ErrorIs(t, err, ErrNoHome)
				_, err = Path(env(tc.env), "audit.jsonl")
				require.ErrorIs(t, err, ErrNoHome)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			p, err := Path(env(tc.env), "output", "x")
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(tc.want, "output", "x"), p)
		})
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Mode().Perm()
}

// TestMkdirPrivate: created 0700; an existing open directory is
// tightened, never widened; a file in the way is refused.
func TestMkdirPrivate(t *testing.T) {
	root := t.TempDir()
	fresh := filepath.Join(root, "a", "execgate")
	require.NoError(t, MkdirPrivate(fresh))
	assert.Equal(t, DirMode, mode(t, fresh))

	open := filepath.Join(root, "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	require.NoError(t, os.Chmod(open, 0o777)) // past the umask
	require.NoError(t, MkdirPrivate(open))
	assert.Equal(t, os.FileMode(0o700), mode(t, open))

	narrow := filepath.Join(root, "narrow")
	require.NoError(t, os.Mkdir(narrow, 0o500))
	require.NoError(t, MkdirPrivate(narrow))
	assert.Equal(t, os.FileMode(0o500), mode(t, narrow), "never widened")

	file := filepath.Join(root, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	assert.Error(t, MkdirPrivate(file))
}

// TestTightenFile: group and other access go, the owner's bits stay.
func TestTightenFile(t *testing.T) {
	for _, tc := range []struct{ from, want os.FileMode }{
		{0o644, 0o600}, {0o666, 0o600}, {0o600, 0o600}, {0o400, 0o400}, {0o755, 0o700},
	} {
		path := filepath.Join(t.TempDir(), "f")
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		require.NoError(t, os.Chmod(path, tc.from))
		f, err := os.OpenFile(path, os.O_RDONLY, 0)
		require.NoError(t, err)
		require.NoError(t, TightenFile(f))
		f.Close()
		assert.Equal(t, tc.want, mode(t, path), "from %o", tc.from)
	}
}

// TestOpenFile: the poller-free open reads, writes, creates with the
// mode asked, refuses what os.OpenFile refuses, and closes on exec.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	f, err := OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString("hello\n")
	require.NoError(t, err)
	fd := f.Fd()
	flags, err := unix.FcntlInt(fd, unix.F_GETFD, 0)
	require.NoError(t, err)
	assert.NotZero(t, flags&unix.FD_CLOEXEC, "close-on-exec")
	require.NoError(t, f.Close())
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	_, err = OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	assert.ErrorIs(t, err, fs.ErrExist)
	_, err = OpenFile(filepath.Join(dir, "missing"), os.O_RDONLY, 0)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	f, err = OpenFile(p, os.O_RDONLY, 0)
	require.NoError(t, err)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(b))
	require.NoError(t, f.Close())
}

// TestReadRegular: whole files up to the limit, an error past it, and
// neither a FIFO (refused at once, not waited on) nor, with O_NOFOLLOW, a
// link read.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 70000} {
		want := bytes.Repeat([]byte{'x'}, n)
		require.NoError(t, os.WriteFile(p, want, 0o600))
		got, err := ReadFile(p, int64(n))
		require.NoError(t, err, "size %d", n)
		require.Equal(t, want, got, "size %d", n)
		if n > 0 {
			_, err = ReadFile(p, int64(n-1))
			require.ErrorContains(t, err, "larger than", "size %d", n)
		}
	}

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	// A writer holds it open, so a blocking read would wait for ever.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	require.NoError(t, err)
	defer w.Close()
	_, err = ReadFile(fifo, 100)
	require.ErrorIs(t, err, errNotRegular)

	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(p, link))
	_, err = ReadRegular(link, syscall.O_NOFOLLOW, 1<<20)
	require.ErrorIs(t, err, syscall.ELOOP)
	got, err := ReadFile(link, 1<<20)
	require.NoError(t, err)
	require.Len(t, got, 70000)

	_, err = ReadFile(filepath.Join(dir, "missing"), 1)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "open", pe.Op) // what callers take for "not there"
}
