package policy

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/syntax"
)

// A path is judged by what it resolves to on disk when the command is
// judged, as the kernel will resolve it when the command runs: a file of
// the workspace that is a link to ~/.ssh/id_rsa is ~/.ssh/id_rsa. The
// analysis looks each path component up once (lstat, and readlink for a
// link) and keeps what it saw for the rest of one Analyze call only.
//
// Between the check and the run the file system may change (a link
// swapped in after the check): that race is not closed here (see
// docs/threat-model.md).

// Bounds on the file-system work of one analysis. Past them the path is
// unknown, never safe.
const (
	// maxLinks is the number of links one resolution follows, the
	// kernel's own limit (Linux's MAXSYMLINKS): past it open fails with
	// ELOOP.
	maxLinks = 40
	// maxLookups bounds the lstat calls of one analysis.
	maxLookups = 4096
	// maxWalkEntries bounds the directory entries a recursive reader's
	// walk looks at (see walk.go).
	maxWalkEntries = 20000
)

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

// lstatEntry is what lstat said about one path.
type lstatEntry struct {
	mode   fs.FileMode
	target string // a link's target
	uid    int    // the owner, -1 when not known
	err    error
}

// disk is the analysis's view of the file system: every lookup of one
// Analyze call, so that a path component is looked up once.
type disk struct {
	seen     map[string]lstatEntry
	resolved map[string]resolved
	walks    map[string]walkResult
	globs    map[*syntax.Word]expansion
	lookups  int
	// entries counts the directory entries read by walks and globs.
	entries int
	// lstat and readDir are the file system (os.Lstat, os.ReadDir); tests
	// replace them to make a directory unreadable, which a root test
	// process cannot make real.
	lstat   func(string) (fs.FileInfo, error)
	readDir func(string) ([]fs.DirEntry, error)
}

// lookupBudget is the error of a lookup past maxLookups.
type lookupBudget struct{}

func (lookupBudget) Error() string { return "too many paths to look up" }

func (a *analyzer) fs() *disk {
	if a.disk == nil {
		a.disk = &disk{lstat: os.Lstat, readDir: os.ReadDir}
	}
	return a.disk
}

// look lstats p once per analysis.
func (d *disk) look(p string) lstatEntry {
	if e, ok := d.seen[p]; ok {
		return e
	}
	if d.lookups >= maxLookups {
		return lstatEntry{err: lookupBudget{}, uid: -1}
	}
	d.lookups++
	e := lstatEntry{uid: -1}
	fi, err := d.lstat(p)
	switch {
	case err != nil:
		e.err = err
	default:
		e.mode = fi.Mode()
		e.uid = fileOwner(fi)
		if e.mode&fs.ModeSymlink != 0 {
			e.target, e.err = os.Readlink(p)
		}
	}
	if d.seen == nil {
		d.seen = map[string]lstatEntry{}
	}
	d.seen[p] = e
	return e
}

// resolved is where a path leads on disk.
type resolved struct {
	// path is the physical absolute path: every link followed, "." and
	// ".." taken as the kernel takes them. "" when it cannot be known.
	path string
	// why says why path is "" (an unreadable directory, a link loop).
	why string
	// viaLink is set when a link was followed on the way.
	viaLink bool
	// dangling is set when a link points to a path that does not exist.
	dangling bool
	// exists is set when the whole path exists.
	exists bool
	// mode and uid are the file's, when it exists.
	mode fs.FileMode
	uid  int
}

// component is one name of a path being resolved; fromLink marks the
// names that came from a link's target.
type component struct {
	name     string
	fromLink bool
}

func components(p string, fromLink bool) []component {
	var out []component
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, component{c, fromLink})
		}
	}
	return out
}

// physical resolves the absolute path raw (not cleaned: "a/link/.."
// climbs from the link's target, as the kernel does) on disk. cwd is the
// directory /proc/self/cwd stands for.
func (d *disk) physical(raw, cwd string) resolved {
	key := raw
	if strings.Contains(raw, "/proc") {
		key = raw + "\x00" + cwd // /proc/self/cwd is the directory
	}
	if r, ok := d.resolved[key]; ok {
		return r
	}
	r, ok := d.plainPhysical(raw)
	if !ok {
		r = d.physicalDepth(raw, cwd, 0)
	}
	if d.resolved == nil {
		d.resolved = map[string]resolved{}
	}
	d.resolved[key] = r
	return r
}

// plainPhysical resolves raw when no name in it is a link, "." or "..":
// the common case, looked up without building the name lists the general
// resolution needs. ok is false when it cannot tell.
func (d *disk) plainPhysical(raw string) (resolved, bool) {
	if !strings.HasPrefix(raw, "/") || hasDotNames(raw) {
		return resolved{}, false
	}
	p := path.Clean(raw)
	if p == "/" || strings.HasPrefix(p, "/proc/") || p == "/proc" || p == "/dev" || strings.HasPrefix(p, "/dev/") && !strings.HasPrefix(p, "/dev/shm/") && p != "/dev/shm" {
		return resolved{}, false
	}
	var e lstatEntry
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		e = d.look(p[:i])
		switch {
		case errors.Is(e.err, fs.ErrNotExist) || errors.Is(e.err, syscall.ENOTDIR):
			return resolved{path: p, uid: -1}, true
		case e.err != nil || e.mode&fs.ModeSymlink != 0:
			return resolved{}, false
		}
	}
	return resolved{path: p, exists: true, mode: e.mode, uid: e.uid}, true
}

// hasDotNames reports whether the path p has a name "." or "..".
func hasDotNames(p string) bool {
	for name := range strings.SplitSeq(p, "/") {
		if name == "." || name == ".." {
			return true
		}
	}
	return false
}

func (d *disk) physicalDepth(raw, cwd string, depth int) resolved {
	pending := components(raw, false)
	var stack []string
	links := 0
	missing := false
	r := resolved{uid: -1}
	var last lstatEntry
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		if c.name == ".." {
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		stack = append(stack, c.name)
		if missing {
			continue
		}
		if virtualPath(stack) {
			// /proc and /dev (but /dev/shm) are the kernel's names, not
			// files: /proc/self is the analysis's own process, not the
			// command's. They are judged as written.
			rest := make([]string, 0, len(stack)+len(pending))
			rest = append(rest, stack...)
			for _, p := range pending {
				rest = append(rest, p.name)
			}
			p := resolveProc("/"+strings.Join(rest, "/"), cwd)
			if p == "" {
				return resolved{why: "another process's directory", uid: -1}
			}
			if virtualPath(strings.Split(strings.TrimPrefix(p, "/"), "/")) || depth > 1 {
				r.path = p
				return r
			}
			// /proc/self/root/… and /proc/self/cwd/… lead back to files.
			sub := d.physicalDepth(p, cwd, depth+1)
			sub.viaLink = sub.viaLink || r.viaLink
			return sub
		}
		p := "/" + strings.Join(stack, "/")
		e := d.look(p)
		last = e
		switch {
		case errors.Is(e.err, fs.ErrNotExist) || errors.Is(e.err, syscall.ENOTDIR):
			// Nothing below a missing name can be a link: the rest is
			// the path as written.
			missing = true
			r.dangling = r.dangling || c.fromLink
		case e.err != nil:
			return resolved{why: lookupFailure(p, e.err), uid: -1}
		case e.mode&fs.ModeSymlink != 0:
			if systemAlias(stack, e.target) && (len(pending) == 0 || pending[0].name != "..") {
				continue // the system's own alias: spelt as the path sets spell it
			}
			links++
			if links > maxLinks {
				return resolved{why: "more than 40 links to follow (a loop)", uid: -1}
			}
			r.viaLink = true
			stack = stack[:len(stack)-1]
			if strings.HasPrefix(e.target, "/") {
				stack = stack[:0]
			}
			pending = append(components(e.target, true), pending...)
		}
	}
	r.path = "/" + strings.Join(stack, "/")
	if len(stack) == 0 {
		last.mode = fs.ModeDir
	}
	if !missing {
		r.exists, r.mode, r.uid = true, last.mode, last.uid
	}
	return r
}

// virtualPath reports whether the path whose names are stack lies in
// /proc or /dev (but /dev/shm, an ordinary temporary directory).
func virtualPath(stack []string) bool {
	switch {
	case len(stack) == 0:
		return false
	case stack[0] == "proc":
		return true
	case stack[0] == "dev":
		return len(stack) < 2 || stack[1] != "shm"
	}
	return false
}

// systemAlias reports whether the link whose names are stack, pointing
// to target, is one of the system's fixed aliases, which the path sets
// spell both ways: macOS's /etc, /tmp and /var (into /private), merged
// /usr's /bin, /sbin and /lib* (into /usr), and /var/run and /var/lock
// (into /run). Kept as written, a path means the same on every machine,
// merged /usr or not. (A ".." right after one is taken from the target.)
func systemAlias(stack []string, target string) bool {
	target = strings.TrimSuffix(target, "/")
	switch len(stack) {
	case 1:
		switch name := stack[0]; name {
		case "etc", "tmp", "var":
			return target == "private/"+name || target == "/private/"+name
		case "bin", "sbin", "lib", "lib32", "lib64", "libx32":
			return target == "usr/"+name || target == "/usr/"+name
		}
	case 2:
		switch {
		case stack[0] == "var" && stack[1] == "run":
			return target == "../run" || target == "/run"
		case stack[0] == "var" && stack[1] == "lock":
			return target == "../run/lock" || target == "/run/lock"
		}
	}
	return false
}

// lookupFailure says why a path could not be looked up.
func lookupFailure(p string, err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return path.Dir(p) + " cannot be read"
	case errors.Is(err, lookupBudget{}):
		return err.Error()
	}
	return "looking up " + p + " failed"
}

// rawPath is p made absolute against the current directory, not yet
// cleaned ("" when it cannot be known; see normalizePath).
func (a *analyzer) rawPath(p string) string {
	return joinPath(p, pathContext{home: a.home, tildeHome: a.tildeHome, cwd: a.cwd})
}

// lookup resolves p on disk, in the program's current directory.
func (a *analyzer) lookup(p string) resolved {
	raw := a.rawPath(p)
	if raw == "" {
		return resolved{why: "relative to a directory execgate cannot follow", uid: -1}
	}
	return a.fs().physical(raw, a.cwd)
}

// logical is p made absolute and cleaned as written, links not followed:
// where bash's cd goes (cd -L), and the spelling a path set may know a
// file by.
func (a *analyzer) logical(p string) string {
	return normalizePath(p, pathContext{home: a.home, tildeHome: a.tildeHome, cwd: a.cwd})
}

// realHome is the user's home as it resolves on disk.
func (a *analyzer) realHome() string {
	if a.home == "" {
		return ""
	}
	if a.homeReal == nil {
		r := a.fs().physical(a.home, "")
		a.homeReal = &r.path
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
		r := a.fs().physical(a.workspace, "")
		p := r.path
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
	return a.lookup(p).path
}

// homeForm writes the physical path abs as the path sets are written,
// with ~ for the user's home however it is spelt on disk.
func (a *analyzer) homeForm(abs string) string {
	n := homeForm(abs, a.home)
	if n == abs {
		if real := a.realHome(); real != "" && real != a.home {
			n = homeForm(abs, real)
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
		return homeForm(l, a.home)
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
	d := a.fs()
	if !strings.HasPrefix(dir, "/") || dir != path.Clean(dir) || !a.insideWorkspace(dir) {
		return
	}
	if d.seen == nil {
		d.seen = map[string]lstatEntry{}
	}
	for _, e := range ents {
		if t := e.Type(); t&fs.ModeSymlink == 0 {
			p := dir + "/" + e.Name()
			if _, ok := d.seen[p]; !ok {
				d.seen[p] = lstatEntry{mode: t, uid: -1}
			}
		}
	}
}
