package shim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/execgate/execgate/internal/state"
)

// Code planted by a confined command. Landlock grants whole trees: a
// workspace granted for writing includes the files that make code run
// later, outside any sandbox — git's hooks and configuration (run by the
// user's own git), direnv's .envrc (run by the user's shell on cd). The
// kernel cannot exclude them, so the shim watches them instead: before a
// confined command that may write them runs, it records their identity;
// every later command in that workspace compares. A change since then
// means the command (or something it left running) may have planted code:
// the shim says so on one line and in the audit log, and nothing runs
// confined there — every command asks — until a person approves one, having
// been shown what changed. Comparing at the next command, rather than
// right after the run, also catches a daemon the command left behind.

// maxRecord bounds the record of a workspace's code files: a few hundred
// bytes a file.
const maxRecord = 16 << 20

// maxHashed is the size up to which a watched file's content is hashed;
// a larger one is known by size, times and inode.
const maxHashed = 64 << 10

// fileID is what identifies a watched file's content cheaply.
type fileID struct {
	Mode  uint32 `json:"mode"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"`
	Ctime int64  `json:"ctime"`
	Ino   uint64 `json:"ino"`
	Sum   string `json:"sum,omitempty"`
}

// codeSnapshot is the identity of every watched file, by path; a path
// absent from it did not exist.
type codeSnapshot struct {
	Workspace string            `json:"workspace"`
	Files     map[string]fileID `json:"files"`
	// Unreadable says why git's configuration could not be read (see
	// hookFiles): what it names was not watched. Becoming unreadable (a
	// confined command can make it so: an include in the work tree too
	// large for execgate, which git reads) is a change.
	Unreadable string `json:"unreadable,omitempty"`
}

// watchedFiles lists the files of ws that run code outside the sandbox
// later: .envrc, and in each of its git directories (gitDirs outside it,
// .git inside) the configuration and every hook that is not a sample.
func watchedFiles(ws string, extra []string) []string {
	if ws == "" {
		return nil
	}
	out := append([]string{filepath.Join(ws, ".envrc")}, extra...)
	dirs := gitDirs(ws)
	if fi, err := os.Lstat(filepath.Join(ws, ".git")); err == nil && fi.IsDir() {
		dirs = append(dirs, filepath.Join(ws, ".git"))
	}
	for _, d := range dirs {
		// (commondir names the directory git takes the configuration
		// and hooks from: written, it moves both elsewhere.)
		out = append(out, filepath.Join(d, "config"), filepath.Join(d, "config.worktree"), filepath.Join(d, "commondir"))
		entries, _ := os.ReadDir(filepath.Join(d, "hooks"))
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".sample") {
				out = append(out, filepath.Join(d, "hooks", e.Name()))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// snapshot identifies the watched files of ws as they are now, the hook
// managers' and what git's configuration names too (see hookFiles).
func (s *session) snapshot(ws string) codeSnapshot {
	extra, unreadable := s.hookFiles(ws)
	snap := snapshotCode(ws, extra)
	snap.Unreadable = unreadable
	return snap
}

// snapshotCode identifies the watched files of ws as they are now; extra
// are more of them (see hookFiles).
func snapshotCode(ws string, extra []string) codeSnapshot {
	snap := codeSnapshot{Workspace: ws, Files: map[string]fileID{}}
	for _, p := range watchedFiles(ws, extra) {
		if id, ok := identify(p); ok {
			snap.Files[p] = id
		}
	}
	return snap
}

// identify returns p's identity, without following a final link (a link
// planted in place of a hook is a change too); false when p is missing.
func identify(p string) (fileID, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fileID{}, false
	}
	mode := uint32(st.Mode) // uint16 on darwin
	id := fileID{Mode: mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: uint64(st.Ino)}
	if mode&unix.S_IFMT == unix.S_IFREG && st.Size <= maxHashed {
		// (A FIFO put there since the lstat is refused without waiting;
		// a file grown past maxHashed is known by its other fields.)
		if b, err := state.ReadRegular(p, syscall.O_NOFOLLOW, maxHashed); err == nil {
			sum := sha256.Sum256(b)
			id.Sum = hex.EncodeToString(sum[:])
		}
	}
	return id, true
}

// same reports whether id is the content id names: by hash and mode when
// both were hashed (a file rewritten with the same bytes, its times and
// inode new, is the same code), else by every field.
func (id fileID) same(now fileID) bool {
	if id.Sum != "" && now.Sum != "" {
		return id.Sum == now.Sum && id.Mode == now.Mode
	}
	return id == now
}

// changedSince lists, relative to ws, the watched files that differ from
// snap: changed, made or removed.
func (snap codeSnapshot) changedSince(now codeSnapshot) []string {
	var out []string
	for p, id := range now.Files {
		if old, ok := snap.Files[p]; !ok || !old.same(id) {
			out = append(out, p)
		}
	}
	for p := range snap.Files {
		if _, ok := now.Files[p]; !ok {
			out = append(out, p)
		}
	}
	if now.Unreadable != "" && now.Unreadable != snap.Unreadable {
		out = append(out, "(git's configuration cannot be read: "+now.Unreadable+")")
	}
	for i, p := range out {
		if rel, err := filepath.Rel(snap.Workspace, p); err == nil && !strings.HasPrefix(rel, "..") {
			out[i] = rel
		}
	}
	slices.Sort(out)
	return out
}

// snapshotPath is where the snapshot of ws is kept, in the state
// directory.
func (s *session) snapshotPath(ws string) (string, error) {
	return state.Path(s.getenv, "confined", workspaceKey(ws)+".json")
}

// plantedSince reports the watched files of ws that changed since the
// last confined command that could write them; nil when none did, or none
// ran here.
func (s *session) plantedSince(ws string) []string {
	if ws == "" {
		return nil
	}
	path, err := s.snapshotPath(ws)
	if err != nil {
		return nil
	}
	b, err := state.ReadFile(path, maxRecord)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Op == "open" {
		// None there: no confined command wrote here. (Nor can a shim
		// inside a confined command's sandbox open it, or one whose
		// state directory is unusable; the former runs nothing outside
		// that sandbox, the latter asks for other reasons.)
		return nil
	}
	var old codeSnapshot
	if err != nil || json.Unmarshal(b, &old) != nil || old.Workspace != ws {
		// Unreadable: it cannot vouch for anything, so it counts as a
		// change of everything watched.
		return []string{"(the record of " + ws + "'s code files is unreadable: " + path + ")"}
	}
	changed := old.changedSince(s.snapshot(ws))
	if len(changed) == 0 {
		s.codeRecord = &old
	}
	return changed
}

// rememberCode records the watched files of ws as they are now, replacing
// the record (written whole, then renamed into place).
func (s *session) rememberCode(ws string) {
	path, err := s.snapshotPath(ws)
	if err != nil {
		s.warnf("record code files: %v", err)
		return
	}
	snap := s.snapshot(ws)
	if rec := s.codeRecord; rec != nil && rec.Workspace == ws && len(rec.changedSince(snap)) == 0 {
		return // the record says this already
	}
	b, err := json.Marshal(snap)
	if err != nil {
		s.warnf("record code files: %v", err)
		return
	}
	if err := state.MkdirPrivate(filepath.Dir(path)); err != nil {
		s.warnf("record code files: %v", err)
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".snap-*")
	if err != nil {
		s.warnf("record code files: %v", err)
		return
	}
	_, werr := io.Copy(tmp, bytes.NewReader(b))
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		s.warnf("record code files: write %s failed", tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		s.warnf("record code files: %v", err)
		return
	}
	s.codeRecord = &snap
}

// plantedReason is the reason a command asks after planted code was seen.
func plantedReason(changed []string) string {
	shown := changed
	if len(shown) > 3 {
		shown = append(slices.Clip(shown[:3]), fmt.Sprintf("and %d more", len(changed)-3))
	}
	return "code that runs outside the sandbox changed since a confined command ran here (" + strings.Join(shown, ", ") +
		"): nothing runs confined here until a person approves a command, having looked at it"
}

// writesCode reports whether a confined run with these grants can change
// the watched files of ws: it writes the workspace, or the repository.
func writesCode(pl plan) bool {
	if pl.grants == nil || pl.grants.Workspace == "" {
		return false
	}
	if pl.grants.WriteWorkspace {
		return true
	}
	for _, w := range pl.grants.Write {
		if filepath.Base(w) == ".git" || strings.Contains(w, "/.git/") || strings.HasSuffix(w, ".git") {
			return true
		}
	}
	return false
}
