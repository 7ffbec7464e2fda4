package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/execgate/execgate/config"
)

// maxConfigRead bounds how much of the configuration the hub reads (the
// policy package's own limit).
const maxConfigRead = 16 << 20

// redacted replaces socket.token in a ConfigSnapshot.
const redacted = "<redacted>"

// configState is the hub's view of its configuration file: the token and
// the requester uids, re-read whenever the file changes so that rotating
// the token or editing requesterUids takes effect without a restart.
type configState struct {
	path string
	log  *slog.Logger

	mu   sync.Mutex
	fi   fs.FileInfo // what was loaded; nil for a missing file
	cfg  *config.Config
	err  error // why the file could not be used; cfg is then nil
	hash string
}

// authConfig is what a connection needs to authenticate its peer.
type authConfig struct {
	token         string
	requesterUids []int
	// idleTimeout is socket.idleTimeoutMs; 0 for the default.
	idleTimeout time.Duration
	// err says why the configuration is unusable; same-uid peers are then
	// refused (fail closed) and no other uid is let in.
	err error
}

func (a authConfig) shared() bool { return a.err == nil && len(a.requesterUids) > 0 }

func (a authConfig) isRequester(uid int) bool {
	return a.err == nil && slices.Contains(a.requesterUids, uid)
}

// current returns the configuration, reloading it if the file changed
// since it was last read and creating the token if it has none.
func (c *configState) current(ctx context.Context) authConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range 3 {
		if !c.changed() {
			break
		}
		c.reload()
		if c.err != nil || c.cfg.Socket.Token != "" {
			break
		}
		// The token is created on first use. The next round re-reads the
		// file the edit wrote (or that another writer changed meanwhile).
		_, err := (&config.Store{Path: c.path}).Update(ctx, c.hash, func(d *config.Document) error {
			_, err := d.EnsureToken()
			return err
		})
		if errors.Is(err, config.ErrStale) {
			continue
		}
		if err != nil {
			c.cfg, c.err = nil, fmt.Errorf("create socket.token: %w", err)
			c.log.Error("cannot create the hub token", "err", err)
			break
		}
		c.log.Info("created socket.token", "config", c.path)
	}
	if c.err != nil {
		return authConfig{err: c.err}
	}
	return authConfig{token: c.cfg.Socket.Token, requesterUids: c.cfg.Socket.RequesterUids,
		idleTimeout: time.Duration(c.cfg.Socket.IdleTimeoutMs) * time.Millisecond}
}

// changed reports whether the file differs from what was loaded.
func (c *configState) changed() bool {
	fi, err := os.Stat(c.path)
	if err != nil {
		fi = nil
	}
	switch {
	case c.cfg == nil && c.err == nil:
		return true // never loaded
	case fi == nil || c.fi == nil:
		return fi != c.fi
	}
	return !os.SameFile(fi, c.fi) || fi.Size() != c.fi.Size() || !fi.ModTime().Equal(c.fi.ModTime())
}

func (c *configState) reload() {
	fi, _ := os.Stat(c.path)
	cfg, hash, warnings, err := config.Load(c.path)
	c.fi, c.hash = fi, hash
	if err != nil {
		c.cfg, c.err = nil, err
		c.log.Error("configuration unusable; refusing clients until it is fixed", "err", err)
		return
	}
	for _, w := range warnings {
		c.log.Debug("config warning", "config", c.path, "warning", w)
	}
	c.cfg, c.err = cfg, nil
}

// snapshot reads the configuration file for exec.approvals.get, with the
// token redacted.
func (c *configState) snapshot() (ConfigSnapshot, error) {
	raw, err := readBounded(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return ConfigSnapshot{Path: c.path, File: json.RawMessage("{}")}, nil
	}
	if err != nil {
		return ConfigSnapshot{}, err
	}
	sum := sha256.Sum256(raw)
	file, err := redact(raw)
	if err != nil {
		return ConfigSnapshot{}, fmt.Errorf("config %s: %w", c.path, err)
	}
	return ConfigSnapshot{Path: c.path, Hash: hex.EncodeToString(sum[:]), File: file}, nil
}

// readBounded reads a regular file of at most maxConfigRead bytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("config %s: not a regular file", path)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxConfigRead+1))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if len(raw) > maxConfigRead {
		return nil, fmt.Errorf("config %s: larger than %d bytes", path, maxConfigRead)
	}
	return raw, nil
}

// redact returns the file with socket.token replaced, re-encoded compactly
// (it travels inside one line). Numbers are kept as written.
func redact(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil || root == nil {
		return nil, errors.New("not a JSON object; fix the file by hand")
	}
	if socket, ok := root["socket"].(map[string]any); ok {
		if _, has := socket["token"]; has {
			socket["token"] = redacted
		}
	}
	return json.Marshal(root)
}

// replace writes a new configuration for exec.approvals.set. The returned
// error is an *ErrorBody.
func (c *configState) replace(ctx context.Context, p ConfigSetParams) (ConfigSnapshot, error) {
	var obj map[string]any
	if err := json.Unmarshal(p.File, &obj); err != nil || obj == nil {
		return ConfigSnapshot{}, errBody(ErrCodeBadRequest, "file: want a JSON object")
	}
	base := p.BaseHash
	if base == "" {
		// The store skips the check for an empty base, so an empty base
		// is only right for a file that does not exist.
		if _, err := os.Lstat(c.path); err == nil {
			return ConfigSnapshot{}, errBody(ErrCodeConflict, "baseHash is empty but the file exists; get it first")
		}
	}
	var editErr error
	_, err := (&config.Store{Path: c.path}).Update(ctx, base, func(d *config.Document) error {
		editErr = d.Replace(p.File)
		return editErr
	})
	switch {
	case errors.Is(err, config.ErrStale):
		return ConfigSnapshot{}, errBody(ErrCodeConflict, "the configuration changed since baseHash was read; get it again")
	case editErr != nil:
		return ConfigSnapshot{}, errBody(ErrCodeBadRequest, editErr.Error())
	case err != nil:
		c.log.Error("exec.approvals.set", "err", err)
		return ConfigSnapshot{}, errBody(ErrCodeInternal, err.Error())
	}
	snap, err := c.snapshot()
	if err != nil {
		return ConfigSnapshot{}, errBody(ErrCodeInternal, err.Error())
	}
	return snap, nil
}
