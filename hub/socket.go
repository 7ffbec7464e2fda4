package hub

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/execgate/execgate/config"
)

// Names inside the socket's directory.
const (
	socketName = "hub.sock"
	lockName   = "hub.lock"
)

// maxSocketPath is the shortest sun_path limit among the systems we run on
// (104 bytes on macOS and the BSDs, 108 on Linux), less the NUL.
const maxSocketPath = 103

// SocketPath returns where the hub listens: cfg.Socket.Path when set, else
// $XDG_RUNTIME_DIR/execgate/hub.sock, else execgate-<uid>/hub.sock under
// os.TempDir(). getenv nil means os.Getenv.
//
// It creates nothing (a shim calls it on every run; only the hub creates the
// directory), but when the directory exists it must be a directory that no
// one else can write to, or SocketPath fails: whoever controls it could put
// a fake hub there that approves everything. A default directory must also
// be owned by us. A configured socket.path may sit in a directory another
// user owns (the hub's owner, when agents run as a separate user and list
// in socket.requesterUids): the configuration chose it.
func SocketPath(cfg *config.Config, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	path, explicit := "", false
	switch rt := getenv("XDG_RUNTIME_DIR"); {
	case cfg != nil && cfg.Socket.Path != "":
		path, explicit = cfg.Socket.Path, true
		if !filepath.IsAbs(path) {
			return "", fmt.Errorf("socket.path %q: want an absolute path", path)
		}
		path = filepath.Clean(path)
	case rt != "" && filepath.IsAbs(rt):
		// The XDG spec says relative values are invalid and must be ignored.
		path = filepath.Join(rt, "execgate", socketName)
	default:
		path = filepath.Join(os.TempDir(), "execgate-"+strconv.Itoa(os.Geteuid()), socketName)
	}
	if len(path) > maxSocketPath {
		return "", fmt.Errorf("socket path %s is %d bytes long; Unix sockets allow at most %d (set a shorter socket.path)",
			path, len(path), maxSocketPath)
	}
	if err := checkDir(filepath.Dir(path), !explicit); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return path, nil
}

// checkDir verifies that dir is a real directory that only its owner can
// write to, owned by us when mustOwn is set. With mustOwn a symbolic link
// is refused too (the directory is ours to create, so we did not put a
// link there); a missing dir is an error wrapping fs.ErrNotExist.
func checkDir(dir string, mustOwn bool) error {
	stat := os.Stat
	if mustOwn {
		stat = os.Lstat
	}
	fi, err := stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// No hub has made it, the common case for a shim: the error is
		// only tested, and formatting it would be the shim's first use
		// of fmt, paid on every command (issue 16). os's own error names
		// the directory.
		return err
	}
	if err != nil {
		return fmt.Errorf("socket directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a directory (%s); refusing to use it", dir, fi.Mode().Type())
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("socket directory %s: cannot read its owner", dir)
	}
	if mustOwn && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("socket directory %s belongs to uid %d, not to us (uid %d); refusing to use it (remove it, or set socket.path)",
			dir, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("socket directory %s is writable by others (mode %#o); refusing to use it", dir, fi.Mode().Perm())
	}
	return nil
}

// prepareDir creates the socket's directory when missing and checks it is
// ours; shared (requester uids configured) opens it for traversal (0711)
// so that those users can reach the socket, else it is 0700.
func prepareDir(dir string, shared bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create socket directory %s: %w", dir, err)
	}
	if err := checkDir(dir, true); err != nil {
		return err
	}
	return os.Chmod(dir, dirMode(shared))
}

func dirMode(shared bool) fs.FileMode {
	if shared {
		return 0o711
	}
	return 0o700
}

func socketMode(shared bool) fs.FileMode {
	if shared {
		// Access then rests on SO_PEERCRED: every other uid is refused at
		// accept.
		return 0o666
	}
	return 0o600
}

// unreachable names the first ancestor of dir that other users cannot
// traverse, or "" when all can: requester uids would be unable to connect.
func unreachable(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}
