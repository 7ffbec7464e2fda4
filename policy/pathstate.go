package policy

import (
	"io/fs"
	"os"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/policy/pathres"
)

// A path is judged by what it resolves to on disk when the command is
// judged, as the kernel will resolve it when the command runs (package
// pathres): a file of the workspace that is a link to ~/.ssh/id_rsa is
// ~/.ssh/id_rsa. Each path component is looked up once per Analyze call.

// maxWalkEntries bounds the directory entries a recursive reader's walk
// (see walk.go) and the globs of one analysis look at. Past it the path is
// unknown, never safe.
const maxWalkEntries = 20000

// pathState is the analyzer's view of the file system, for one Analyze
// call.
type pathState struct {
	disk          *disk
	homeReal      *string // the home as it resolves on disk
	workspaceReal *string // the workspace as it resolves on disk
	// globsChanged is set when the program may change how bash expands
	// globs (shopt, GLOBIGNORE): see globs.go.
	globsChanged bool
	// ci is 1 when the starting environment says this is a CI job, -1
	// when it does not, 0 before it was read (see ci.go).
	ci int8
}

// disk is the analysis's view of the file system for one Analyze call:
// where paths lead, each component looked up once, and what the walks of
// recursive readers and the globs found.
type disk struct {
	pathres.Disk
	walks map[string]walkResult
	globs map[*syntax.Word]expansion
	// entries counts the directory entries read by walks and globs.
	entries int
	// readDir is the file system's (os.ReadDir); tests replace it, and
	// Disk.Lstat, to make a directory unreadable, which a root test
	// process cannot make real.
	readDir func(string) ([]fs.DirEntry, error)
}

func (a *analyzer) fs() *disk {
	if a.disk == nil {
		a.disk = &disk{readDir: os.ReadDir}
	}
	return a.disk
}

// resolved is where a path leads on disk.
type resolved = pathres.Resolved

// rawPath is p made absolute against the current directory, not yet
// cleaned ("" when it cannot be known; see normalizePath).
func (a *analyzer) rawPath(p string) string {
	return pathres.Join(p, a.pathContext())
}

// pathContext is where the program is, for the lexical path functions.
func (a *analyzer) pathContext() pathres.Context {
	return pathres.Context{Home: a.home, TildeHome: a.tildeHome, Cwd: a.cwd}
}

// lookup resolves p on disk, in the program's current directory.
func (a *analyzer) lookup(p string) resolved {
	raw := a.rawPath(p)
	if raw == "" {
		return resolved{Why: "relative to a directory execgate cannot follow", UID: -1}
	}
	return a.fs().Resolve(raw, a.cwd)
}

// logical is p made absolute and cleaned as written, links not followed:
// where bash's cd goes (cd -L), and the spelling a path set may know a
// file by.
func (a *analyzer) logical(p string) string {
	return pathres.Normalize(p, a.pathContext())
}

// realHome is the user's home as it resolves on disk.
func (a *analyzer) realHome() string {
	if a.home == "" {
		return ""
	}
	if a.homeReal == nil {
		r := a.fs().Resolve(a.home, "")
		a.homeReal = &r.Path
	}
	return *a.homeReal
}

// realWorkspace is the workspace as it resolves on disk ("" for none,
// and for a directory that resolves to one that cannot hold a project:
// see usableWorkspace).
func (a *analyzer) realWorkspace() string {
	if a.workspace == "" {
		return ""
	}
	if a.workspaceReal == nil {
		r := a.fs().Resolve(a.workspace, "")
		p := r.Path
		switch {
		case p == "":
			p = a.workspace // unreadable: as written
		case p != a.workspace && a.notAWorkspace(p):
			p = "" // a link to the home or to /
		}
		a.workspaceReal = &p
	}
	return *a.workspaceReal
}

// resolve makes p absolute against the current directory and follows it
// on disk (see lookup); "" when where it leads cannot be known.
func (a *analyzer) resolve(p string) string {
	return a.lookup(p).Path
}

// homeForm writes the physical path abs as the path sets are written,
// with ~ for the user's home however it is spelt on disk.
func (a *analyzer) homeForm(abs string) string {
	n := pathres.HomeForm(abs, a.home)
	if n == abs {
		if real := a.realHome(); real != "" && real != a.home {
			n = pathres.HomeForm(abs, real)
		}
	}
	return n
}

// lexForm is p as written, made absolute and cleaned without looking at
// the disk, in the ~ form of the path sets: the name a file is known by
// (.envrc, id_rsa) even when it is a link to something else. "" when the
// directory is unknown.
func (a *analyzer) lexForm(p string) string {
	if p == "" || strings.HasPrefix(p, unknownShape) {
		return ""
	}
	if l := a.logical(p); l != "" {
		return pathres.HomeForm(l, a.home)
	}
	return ""
}

// pathInAny reports whether p, as resolved on disk or as written, is in
// the named set: the most sensitive name of a file wins.
func (a *analyzer) pathInAny(set, p string) bool {
	n := a.normPath(p)
	if a.pathIn(set, n) {
		return true
	}
	l := a.lexForm(p)
	return l != "" && l != n && a.pathIn(set, l)
}

// cdTarget is where cd DIR goes: bash's cd follows the path as written
// (cd -L), so the directory is kept logical and links are followed when
// a path below it is looked up. With CDPATH in the starting environment,
// a name that does not start with / or . may be found elsewhere.
func (a *analyzer) cdTarget(dir string) string {
	if a.env("CDPATH") != "" && !strings.HasPrefix(dir, "/") && !strings.HasPrefix(dir, ".") && !strings.HasPrefix(dir, "~") {
		return ""
	}
	return a.logical(dir)
}

// pathForms are the spellings of p in the ~ form that the path sets are
// matched against: resolved on disk and as written, without repeats.
func (a *analyzer) pathForms(p string) []string {
	n := a.normPath(p)
	if l := a.lexForm(p); l != "" && l != n {
		return []string{n, l}
	}
	return []string{n}
}

// absForms are p's absolute spellings, on disk and as written.
func (a *analyzer) absForms(p string) []string {
	r := a.resolve(p)
	if l := a.logical(p); l != "" && l != r && !strings.HasPrefix(p, unknownShape) {
		if r == "" {
			return []string{l}
		}
		return []string{r, l}
	}
	if r == "" {
		return nil
	}
	return []string{r}
}

// settle prepares the path state for one command: the workspace a
// command may write in (none at all when it is / or a home, see
// workspace.go), and whether the command may change how globs expand.
func (a *analyzer) settle(command string) {
	a.workspace = a.usableWorkspace(a.workspace)
	a.globsChanged = mayChangeGlobs(command)
}

// env reads the starting environment ("" without one).
func (a *analyzer) env(name string) string {
	if a.getenv == nil {
		return ""
	}
	return a.getenv(name)
}

// seedEntries records what a directory listing of dir says about its
// entries, sparing each match of a glob an lstat: the type of an entry
// that is not a link is all that is known (not its owner or mode bits),
// so only inside the workspace, where those do not matter.
func (a *analyzer) seedEntries(dir string, ents []fs.DirEntry) {
	if !strings.HasPrefix(dir, "/") || dir != path.Clean(dir) || !a.insideWorkspace(dir) {
		return
	}
	d := a.fs()
	for _, e := range ents {
		if t := e.Type(); t&fs.ModeSymlink == 0 {
			d.Seed(dir+"/"+e.Name(), t)
		}
	}
}
