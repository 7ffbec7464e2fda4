//go:build unix

package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// checkManagedOwner refuses a managed file that someone other than root
// could have written or could replace: the file (and, through symbolic
// links, what it resolves to) must be owned by root and writable by no one
// else, and so must every directory above it, except that a root-owned
// directory with the sticky bit (/tmp) lets no one else rename or remove
// the root-owned entries in it.
func checkManagedOwner(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return pathless(err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return pathless(err)
	}
	if err := rootOnly(resolved, fi, false); err != nil {
		return err
	}
	for _, p := range []string{abs, resolved} {
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			dfi, err := os.Stat(dir)
			if err != nil {
				return pathless(err)
			}
			if err := rootOnly(dir, dfi, true); err != nil {
				return err
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	return nil
}

// rootOnly says what is wrong with fi for a managed file (or a directory
// above one): an owner other than root, or write permission for others.
func rootOnly(path string, fi fs.FileInfo, dir bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: cannot tell its owner; a managed policy must be owned by root", path)
	}
	what := "the managed policy"
	if dir {
		what = "a directory above the managed policy"
	}
	if st.Uid != 0 {
		return fmt.Errorf("%s is %s and is owned by uid %d, not root: anyone with that uid could loosen it (chown root and chmod go-w it)", path, what, st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 && !(dir && fi.Mode()&fs.ModeSticky != 0) {
		return fmt.Errorf("%s is %s and others may write it (mode %#o): chmod go-w it", path, what, fi.Mode().Perm())
	}
	return nil
}
