package setup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gofrs/flock"
)

// lockRetry is how often a locked edit retries a lock another process holds;
// an edit holds it for a few milliseconds.
const lockRetry = 5 * time.Millisecond

// maxLinks bounds how many symbolic links resolve follows, as the kernel does.
const maxLinks = 40

// resolve follows symbolic links from path to the file they end at, which
// need not exist yet: people keep their dotfiles in a repository and link
// them, and the edit belongs in the repository's file, not in place of the
// link.
func resolve(path string) (string, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
	}
	return "", fmt.Errorf("resolve %s: too many levels of symbolic links", path)
}

// lock takes the lock file at lockPath (creating its directory, 0700, when
// missing), waiting until ctx is done for another writer to finish.
func lock(ctx context.Context, lockPath string) (unlock func() error, err error) {
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o700); err != nil {
		return nil, fmt.Errorf("create directory for %s: %w", lockPath, err)
	}
	l := flock.New(lockPath, flock.SetPermissions(0o600))
	locked, err := l.TryLockContext(ctx, lockRetry)
	if err == nil && !locked {
		err = errors.New("not acquired")
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	return l.Unlock, nil
}

// settingsLock is the lock file for edits of the settings file file
// (symbolic links resolved): in execgate's state directory, named by a hash
// of the file's path, so that nothing of execgate's is left in the agent's
// directory. It is never removed: removing a lock file races with a
// process that opened it and waits for it (that process would then hold a
// lock on a file nobody else can open, and two edits would run at once),
// and a lock file per settings file ever set up is a few empty files.
// Every Apply and Undo of the same file uses the same state directory (the
// one its record is kept in), so they all meet at this lock.
func settingsLock(stateDir, file string) string {
	sum := sha256.Sum256([]byte(file))
	return filepath.Join(stateDir, "setup", "locks", hex.EncodeToString(sum[:16])+".lock")
}

// readFile reads a regular file of at most limit bytes; exists is false when
// there is none.
func readFile(path string, limit int64) (raw []byte, exists bool, mode fs.FileMode, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, 0, nil
	}
	if err != nil {
		return nil, false, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, 0, docErrorf("is not a regular file")
	}
	raw, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, 0, err
	}
	return raw, true, fi.Mode().Perm(), nil
}

// writeAtomic replaces path with data, with the given permissions, so that
// readers see the old or the new file, whole, even across a crash. unchanged,
// when not nil, is checked just before the replacement: agents write their
// own settings files without taking execgate's lock, and an edit they made
// meanwhile must not be overwritten.
func writeAtomic(path string, data []byte, perm fs.FileMode, unchanged func() error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".execgate-tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if unchanged != nil {
		if err := unchanged(); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// sameAs returns a check that path still holds want (or, when want is nil
// and existed is false, still does not exist).
func sameAs(path string, want []byte, existed bool) func() error {
	return func() error {
		now, exists, _, err := readFile(path, maxSettingsBytes)
		if err != nil {
			return err
		}
		if exists != existed || !bytes.Equal(now, want) {
			return fmt.Errorf("%s changed while execgate was editing it (another program wrote it); nothing was changed, try again", path)
		}
		return nil
	}
}

// writeBackup copies data to path+".execgate-backup", or when that exists to
// a name with the time in it: an older backup is never overwritten.
func writeBackup(path string, data []byte, perm fs.FileMode, now time.Time) (string, error) {
	base := path + ".execgate-backup"
	stamp := base + "-" + now.UTC().Format("20060102T150405Z")
	for i := 0; i < 100; i++ {
		name := base
		switch {
		case i == 1:
			name = stamp
		case i > 1:
			name = stamp + "-" + strconv.Itoa(i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm&0o600|0o400)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("back up %s: too many backups named %s-*", path, stamp)
}

// hashBytes identifies a file's content in the state records.
func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
