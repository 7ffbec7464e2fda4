// Package state owns where execgate keeps what it records about runs (the
// audit log, spilled output, the hub's log, setup records, the gate file's
// fallback) and the permissions those files get: one resolver, so that every
// command agrees on the directory, and one place that keeps it private.
package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Modes of everything execgate stores: what commands printed can hold
// secrets, so only the owner may read it.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
	// othersBits are the group's and others' permissions, which
	// MkdirPrivate and TightenFile take away.
	othersBits fs.FileMode = 0o077
)

// ErrNoHome is returned when neither $XDG_STATE_HOME nor $HOME names an
// absolute directory: there is then no state directory, and nothing is
// stored rather than something stored in the current directory.
var ErrNoHome = errors.New("neither XDG_STATE_HOME nor HOME is an absolute path: nowhere to keep execgate's state (set one of them)")

// Dir returns execgate's state directory: $XDG_STATE_HOME/execgate, else
// $HOME/.local/state/execgate. Both are read through getenv (nil means
// os.Getenv) on every call, so tests and callers with their own
// environment can redirect it. The XDG spec says a relative value is
// invalid and must be ignored, and so it is.
func Dir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if base := getenv("XDG_STATE_HOME"); filepath.IsAbs(base) {
		return filepath.Join(base, "execgate"), nil
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state", "execgate"), nil
	}
	return "", ErrNoHome
}

// Path returns name inside the state directory.
func Path(getenv func(string) string, name ...string) (string, error) {
	dir, err := Dir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{dir}, name...)...), nil
}

// MkdirPrivate creates dir (and missing parents) with DirMode, and takes
// group and other access away from dir itself if it already had any: a
// directory made by hand or by an older version must not expose what is
// stored in it. It never widens a mode, and it refuses a dir that is not
// a directory or belongs to another user.
func MkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return err
	}
	fi, err := os.Stat(dir) // a link to a directory of ours is fine
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to uid %d, not to this user", dir, st.Uid)
	}
	if perm := fi.Mode().Perm(); perm&othersBits != 0 {
		if err := os.Chmod(dir, perm&^othersBits); err != nil {
			return fmt.Errorf("make %s private: %w", dir, err)
		}
	}
	return nil
}

// TightenFile takes group and other access away from an open file that
// has any (one created by an older version, or by hand), never widening
// it.
func TightenFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&othersBits != 0 {
		if err := f.Chmod(perm &^ othersBits); err != nil {
			return fmt.Errorf("make %s private: %w", f.Name(), err)
		}
	}
	return nil
}

// ReadFile is os.ReadFile for a regular file, reading at most limit
// bytes: more is an error. Anything but a regular file is an error too,
// found without waiting: the open does not block (a FIFO put in a file's
// place would hold the reader until something writes to it).
//
// It reads with plain system calls, not an *os.File: os.NewFile offers a
// descriptor opened non-blocking to the runtime's network poller, which
// sets up epoll on the first one and then spends two more system calls to
// learn that a regular file cannot be polled — a cost the shim paid for
// every file it reads while judging a command.
func ReadFile(name string, limit int64) ([]byte, error) {
	return ReadRegular(name, 0, limit)
}

// ReadRegular is ReadFile with flag added to the open (O_NOFOLLOW, say).
func ReadRegular(name string, flag int, limit int64) ([]byte, error) {
	fd, err := openRetry(name, flag|syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errNotRegular}
	}
	// One read more than the size said, to see the end (or growth).
	size := min(max(st.Size, 0), limit) + 1
	b := make([]byte, 0, min(size, 1<<20)+512)
	for {
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("%s is larger than %d bytes", name, limit)
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		// (EAGAIN, which a regular file should never give, is an error
		// like any other: retried, it could spin for ever.)
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// errNotRegular is ReadFile's error for what is not a regular file.
var errNotRegular = errors.New("not a regular file")

// OpenFile is os.OpenFile for a regular file, without the runtime's
// network poller: os.OpenFile offers every file it opens to the poller
// (setting up epoll on the first one, then three system calls to find that
// a regular file cannot be polled), a cost the shim paid on each command
// for its configuration and its audit log. The file is opened close-on-exec
// and blocking, as os.OpenFile would leave a regular file.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := openRetry(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openRetry is open(2), again when a signal interrupted it.
func openRetry(name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := syscall.Open(name, flag, perm)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
