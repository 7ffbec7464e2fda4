package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// ErrStale is returned (wrapped) by Store.Update when the file changed since
// the caller read it: the caller should reload, show the user the new state
// and try again.
var ErrStale = errors.New("config changed since it was read")

// lockRetry is how often Update retries a lock another process holds; an
// edit holds it for a few milliseconds.
const lockRetry = 5 * time.Millisecond

// Store edits the configuration file safely: one writer at a time across
// processes, atomic replacement, and nothing of the file lost, not even the
// fields this version does not know.
type Store struct {
	// Path is the configuration file; Path+".lock" is the lock file.
	Path string
}

// Update locks the file, reads it, lets edit change it and writes the result
// atomically (mode 0600, directory 0700 when it has to create it), returning
// the new file's hash as Load reports it.
//
// baseHash, when not empty, is the hash the caller's view was loaded with;
// if the file no longer has it, Update returns ErrStale and writes nothing.
// A file that exists but cannot be used (see UnusableError: it does not
// parse, or cannot be read) is never edited and never replaced: Update
// returns an error wrapping an *UnusableError that says where and why
// (line and column when the parser gives them), and writes nothing, so
// that a typo never costs the policy around it. Nothing is written either
// when edit returns an error or produces a configuration ParseConfig
// rejects. Update refuses to work through symbolic
// links (for the file or its lock) and gives up waiting for the lock when ctx
// is done.
func (s *Store) Update(ctx context.Context, baseHash string, edit func(*Document) error) (newHash string, err error) {
	if err := s.prepare(); err != nil {
		return "", fmt.Errorf("update config: %w", err)
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return "", fmt.Errorf("update config %s: %w", s.Path, err)
	}
	defer func() {
		if uerr := unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("update config %s: unlock: %w", s.Path, uerr)
		}
	}()

	doc, err := s.readLocked(baseHash)
	if _, unusable := AsUnusable(err); unusable {
		return "", err // it names the file already
	}
	if err != nil {
		return "", fmt.Errorf("update config %s: %w", s.Path, err)
	}
	if err := edit(doc); err != nil {
		return "", fmt.Errorf("update config %s: %w", s.Path, err)
	}
	if doc.err != nil {
		return "", fmt.Errorf("update config %s: %w", s.Path, doc.err)
	}
	if _, ok := doc.root["version"]; !ok {
		doc.root["version"] = json.Number("1")
	}
	out, err := encodeDocument(doc.root)
	if err != nil {
		return "", fmt.Errorf("update config %s: %w", s.Path, err)
	}
	if _, _, err := ParseConfig(out); err != nil {
		return "", fmt.Errorf("update config %s: the edited configuration is invalid, not writing it: %w", s.Path, err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("update config %s: %w", s.Path, err)
	}
	if err := writeAtomic(s.Path, out); err != nil {
		return "", fmt.Errorf("update config %s: %w", s.Path, err)
	}
	return hashBytes(out), nil
}

// prepare refuses symbolic links for the file and its lock, and creates the
// directory.
func (s *Store) prepare() error {
	if s.Path == "" {
		return errors.New("no path")
	}
	if fi, err := os.Lstat(s.Path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", s.Path, errSymlink)
	}
	lockPath := s.Path + ".lock"
	if fi, err := os.Lstat(lockPath); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("lock file %s is a symbolic link; refusing to use it", lockPath)
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("%s: create directory: %w", s.Path, pathless(err))
	}
	return nil
}

// lock takes the cross-process lock every writer holds, giving up when ctx
// is done.
func (s *Store) lock(ctx context.Context) (unlock func() error, err error) {
	lockPath := s.Path + ".lock"
	lock := flock.New(lockPath, flock.SetFlag(os.O_CREATE|os.O_RDONLY|noFollow), flock.SetPermissions(0o600))
	locked, err := lock.TryLockContext(ctx, lockRetry)
	if err != nil || !locked {
		if err == nil {
			err = errors.New("not acquired")
		}
		return nil, fmt.Errorf("lock %s: %w", lockPath, pathless(err))
	}
	return lock.Unlock, nil
}

// readLocked loads the document under the lock, checking baseHash. A file
// that cannot be used is refused, never started over.
func (s *Store) readLocked(baseHash string) (*Document, error) {
	raw, exists, err := s.readRaw()
	if err != nil {
		return nil, err
	}
	current := ""
	if exists {
		current = hashBytes(raw)
	}
	if baseHash != "" && baseHash != current {
		return nil, ErrStale
	}
	if !exists {
		return newDocument(), nil
	}
	root, err := decodeObject(raw)
	if err == nil {
		// What decodes may still be unusable (an unknown version, a
		// repeated key): refuse rather than guess.
		_, _, err = ParseConfig(raw)
	}
	if err != nil {
		return nil, refuseEdit(s.Path, err)
	}
	return &Document{root: root}, nil
}

// readRaw reads the file without following a symbolic link; a file that
// exists but cannot be read is an *UnusableError.
func (s *Store) readRaw() (raw []byte, exists bool, err error) {
	raw, err = readConfigFile(s.Path, true)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case errors.Is(err, errSymlink):
		return nil, true, err
	case err != nil:
		return nil, true, refuseEdit(s.Path, err)
	}
	return raw, true, nil
}

// refuseEdit is Update's answer to a file it cannot use.
func refuseEdit(path string, err error) error {
	return fmt.Errorf("%w; not changing it (nothing was written): fix it, or run 'execgate config edit'",
		&UnusableError{Path: path, Err: err})
}

// encodeDocument writes the tree as people read it: 2-space indentation,
// sorted keys, "<" and ">" left alone (they are common in shell patterns), and
// a trailing newline.
func encodeDocument(root map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return buf.Bytes(), nil
}

// writeAtomic replaces path with data so that readers see either the old or
// the new file, whole, even across a crash.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", pathless(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("chmod temporary file: %w", pathless(err))
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write temporary file: %w", pathless(err))
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync temporary file: %w", pathless(err))
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close temporary file: %w", pathless(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace file: %w", err)
	}
	// The rename is durable only once the directory entry is.
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", pathless(err))
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory: %w", pathless(err))
	}
	return nil
}
