package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
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
	// Now tells the time (used to name copies of corrupt files); nil means
	// time.Now.
	Now func() time.Time
}

func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// Update locks the file, reads it, lets edit change it and writes the result
// atomically (mode 0600, directory 0700 when it has to create it), returning
// the new file's hash as Load reports it.
//
// baseHash, when not empty, is the hash the caller's view was loaded with;
// if the file no longer has it, Update returns ErrStale and writes nothing.
// A corrupt file (not a JSON object) is first copied to
// Path+".corrupt-<unix seconds>" and the edit starts from an empty document; a
// file that is JSON but that ParseConfig rejects (an unknown version, a
// repeated key) is never overwritten. Nothing is written when edit returns an error or produces a
// configuration ParseConfig rejects. Update refuses to work through symbolic
// links (for the file or its lock) and gives up waiting for the lock when ctx
// is done.
func (s *Store) Update(ctx context.Context, baseHash string, edit func(*Document) error) (newHash string, err error) {
	if s.Path == "" {
		return "", errors.New("update config: no path")
	}
	lockPath := s.Path + ".lock"
	if fi, err := os.Lstat(s.Path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("update config: %s %w", s.Path, errSymlink)
	}
	if fi, err := os.Lstat(lockPath); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("update config: lock file %s is a symbolic link; refusing to use it", lockPath)
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return "", fmt.Errorf("update config %s: create directory: %w", s.Path, pathless(err))
	}

	lock := flock.New(lockPath, flock.SetFlag(os.O_CREATE|os.O_RDONLY|noFollow), flock.SetPermissions(0o600))
	locked, err := lock.TryLockContext(ctx, lockRetry)
	if err != nil || !locked {
		if err == nil {
			err = errors.New("not acquired")
		}
		return "", fmt.Errorf("update config %s: lock %s: %w", s.Path, lockPath, pathless(err))
	}
	defer func() {
		if uerr := lock.Unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("update config %s: unlock: %w", s.Path, uerr)
		}
	}()

	doc, err := s.readLocked(baseHash)
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

// readLocked loads the document under the lock, checking baseHash and
// setting a corrupt file aside.
func (s *Store) readLocked(baseHash string) (*Document, error) {
	raw, err := readConfigFile(s.Path, true)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
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
	root, perr := decodeObject(raw)
	if perr != nil {
		saved, err := s.saveCorrupt(raw)
		if err != nil {
			return nil, fmt.Errorf("file is corrupt (%v) and keeping a copy failed: %w", perr, err)
		}
		slog.Warn("config file is corrupt; kept a copy and started a new one",
			"path", s.Path, "copy", saved, "problem", perr.Error())
		return newDocument(), nil
	}
	// What is left (an unknown version, a repeated key) is a file that can
	// be read but not safely rewritten: refuse rather than guess.
	if _, _, err := ParseConfig(raw); err != nil {
		return nil, fmt.Errorf("%w; not changing it (fix it by hand)", err)
	}
	return &Document{root: root}, nil
}

// saveCorrupt copies raw next to the file, never overwriting an earlier copy.
func (s *Store) saveCorrupt(raw []byte) (string, error) {
	base := s.Path + ".corrupt-" + strconv.FormatInt(s.now().Unix(), 10)
	for i := 0; i < 100; i++ {
		name := base
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, werr := f.Write(raw)
		if werr == nil {
			werr = f.Sync()
		}
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(name)
			return "", werr
		}
		return name, nil
	}
	return "", fmt.Errorf("too many copies named %s-*", base)
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
