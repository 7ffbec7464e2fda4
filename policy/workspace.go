package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/execgate/execgate/policy/pathres"
)

// The workspace is the project a command is run for: writes inside it are
// what a wildcard allowlist pattern may cover, and a recursive delete of
// it is catastrophic. A command started in / or in a home directory has
// no project: with it as the workspace, ~/.ssh and every file of the
// machine would be "inside the workspace". So such a directory is no
// workspace at all, and every path is judged as outside one.

// usableWorkspace returns ws, or "" when ws is /, a home directory or a
// directory above one, a temporary directory's root, or a system
// directory. It looks at ws as written; realWorkspace looks at where it
// resolves on disk, when a path is first judged against it.
func (a *analyzer) usableWorkspace(ws string) string {
	if ws == "" || a.notAWorkspace(ws) {
		return ""
	}
	return ws
}

// notAWorkspace reports whether the directory p can hold no project.
func (a *analyzer) notAWorkspace(p string) bool {
	p = path.Clean(p)
	if p == "/" || pathres.HomeForm(p, a.home) == "~" {
		return true // /, the user's home, /root, /home/NAME, /Users/NAME
	}
	if a.aboveHome(p, a.home) || a.homeReal != nil && a.aboveHome(p, *a.homeReal) {
		return true // the home, and /home, /Users or whatever holds it
	}
	switch p {
	case "/home", "/Users", "/root", "/tmp", "/var/tmp", "/dev/shm", "/private/tmp", "/private/var/folders":
		return true
	}
	for _, v := range tempDirVars {
		if t := a.env(v); t != "" && path.Clean(t) == p {
			return true // $TMPDIR itself
		}
	}
	// A directory whose files are the system's (/etc, /usr/src/app), not
	// one that merely lies in a system directory (/opt/app, /srv/app).
	return a.pathIn("system", p+"/x") && !a.pathIn("temporary", p+"/x")
}

// aboveHome reports whether p is home or a directory above it.
func (a *analyzer) aboveHome(p, home string) bool {
	return home != "" && (p == home || strings.HasPrefix(home, p+"/"))
}

// scratch reports whether abs is scratch space: in a temporary directory,
// and not in a home (HOME under /tmp on CI runners and in containers) or
// in another project there. Where a path lies never makes it less
// sensitive than what it is.
func (a *analyzer) scratch(abs string) bool {
	if !a.pathIn("temporary", abs) {
		return false
	}
	if strings.HasPrefix(a.homeForm(abs), "~") {
		return false
	}
	return a.repositoryAbove(abs) == ""
}

// maxClimb bounds the directories looked at above a path for a project.
const maxClimb = 32

// repositoryAbove returns the directory holding a .git at or above the
// directory of abs, below the temporary directory's root; "" for none.
func (a *analyzer) repositoryAbove(abs string) string {
	d := abs
	for range maxClimb {
		if d == "/" || !a.pathIn("temporary", d+"/x") || tempRoot(d) {
			return ""
		}
		if e := a.fs().Look(d + "/.git"); e.Err == nil {
			return d
		}
		d = path.Dir(d)
	}
	return ""
}

// tempRoot reports whether d is the root of a temporary directory.
func tempRoot(d string) bool {
	switch d {
	case "/tmp", "/var/tmp", "/dev/shm", "/private/tmp", "/private/var/folders":
		return true
	}
	return false
}

// placeNote says, for a path outside the workspace that lies in a
// temporary directory, why that does not make it scratch.
func (a *analyzer) placeNote(abs string) string {
	if !a.pathIn("temporary", abs) {
		return ""
	}
	if strings.HasPrefix(a.homeForm(abs), "~") {
		return ", in the home directory (which lies in a temporary directory)"
	}
	if repo := a.repositoryAbove(abs); repo != "" {
		return fmt.Sprintf(", in the project %s", repo)
	}
	return ""
}

// foreign reports whether w names a path outside the workspace, the
// temporary directories included (and the harmless devices not): code
// there is not the workspace's code, wherever it lies (make -C /tmp/x,
// npm --prefix /var/tmp/x run build).
func (a *analyzer) foreign(w word) bool {
	t := w.text
	if strings.HasPrefix(t, unknownShape) || t == "" {
		return false
	}
	abs := a.resolve(t)
	return abs != "" && !a.insideWorkspace(abs) && !a.pathIn("harmless", abs)
}

// NotAWorkspace reports whether dir can never be a workspace for req: /,
// the user's home and what holds it, the temporary directories' roots and
// the system's own directories. Nothing there is granted as the
// workspace's, and execgate keeps no checkpoints of it.
func (e *Engine) NotAWorkspace(req Request, dir string) bool {
	a := &analyzer{r: e.rules, home: req.Home, getenv: req.env}
	return a.notAWorkspace(dir)
}
