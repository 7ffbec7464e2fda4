package pathres

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// A path leads on disk where the kernel resolves it when the command runs:
// a file of the workspace that is a link to ~/.ssh/id_rsa is
// ~/.ssh/id_rsa. A Disk looks each path component up once (lstat, and
// readlink for a link) and keeps what it saw for as long as it is kept:
// one analysis.
//
// Between the check and the run the file system may change (a link
// swapped in after the check): that race is not closed here (see
// docs/threat-model.md).

// Bounds on the file-system work of one Disk. Past them the path is
// unknown, never safe.
const (
	// maxLinks is the number of links one resolution follows, the
	// kernel's own limit (Linux's MAXSYMLINKS): past it open fails with
	// ELOOP.
	maxLinks = 40
	// maxLookups bounds the lstat calls of one Disk.
	maxLookups = 4096
)

// Entry is what lstat said about one path.
type Entry struct {
	Mode   fs.FileMode
	Target string // a link's target
	UID    int    // the owner, -1 when not known
	Err    error
}

// Disk is a view of the file system that looks each path up once: every
// lookup, and every resolution, of its lifetime is kept. Its zero value
// reads the real file system. It is not safe for concurrent use.
type Disk struct {
	// Lstat is the file system's lstat (os.Lstat when nil); tests replace
	// it to make a directory unreadable, which a root test process cannot
	// make real.
	Lstat func(string) (fs.FileInfo, error)

	seen     map[string]Entry
	resolved map[string]Resolved
	lookups  int
}

// ErrBudget is the error of a lookup past the Disk's budget; callers with
// budgets of their own (directory entries read) may return it too.
var ErrBudget = errors.New("too many paths to look up")

// Look lstats p, once in the Disk's lifetime.
func (d *Disk) Look(p string) Entry {
	if e, ok := d.seen[p]; ok {
		return e
	}
	if d.lookups >= maxLookups {
		return Entry{Err: ErrBudget, UID: -1}
	}
	d.lookups++
	e := Entry{UID: -1}
	lstat := d.Lstat
	if lstat == nil {
		lstat = os.Lstat
	}
	fi, err := lstat(p)
	switch {
	case err != nil:
		e.Err = err
	default:
		e.Mode = fi.Mode()
		e.UID = fileOwner(fi)
		if e.Mode&fs.ModeSymlink != 0 {
			e.Target, e.Err = os.Readlink(p)
		}
	}
	if d.seen == nil {
		d.seen = map[string]Entry{}
	}
	d.seen[p] = e
	return e
}

// Seed records that p, not yet looked up, is a file of type mode that is
// not a link, as a directory listing says: its owner and mode bits stay
// unknown. It spares a lookup of each name a listing already gave.
func (d *Disk) Seed(p string, mode fs.FileMode) {
	if d.seen == nil {
		d.seen = map[string]Entry{}
	}
	if _, ok := d.seen[p]; !ok {
		d.seen[p] = Entry{Mode: mode, UID: -1}
	}
}

// Resolved is where a path leads on disk.
type Resolved struct {
	// Path is the physical absolute path: every link followed, "." and
	// ".." taken as the kernel takes them. "" when it cannot be known.
	Path string
	// Why says why Path is "" (an unreadable directory, a link loop).
	Why string
	// ViaLink is set when a link was followed on the way.
	ViaLink bool
	// Dangling is set when a link points to a path that does not exist.
	Dangling bool
	// Exists is set when the whole path exists.
	Exists bool
	// Mode and UID are the file's, when it exists (UID -1 when unknown).
	Mode fs.FileMode
	UID  int
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

// Resolve resolves the absolute path raw (not cleaned: "a/link/.." climbs
// from the link's target, as the kernel does; see Join) on disk. cwd is
// the directory /proc/self/cwd stands for ("" when unknown). Paths in
// /proc and /dev (but /dev/shm) are the kernel's names, not files, and
// are kept as written; the system's fixed aliases (merged /usr's /bin,
// macOS's /tmp) too.
func (d *Disk) Resolve(raw, cwd string) Resolved {
	key := raw
	if strings.Contains(raw, "/proc") {
		key = raw + "\x00" + cwd // /proc/self/cwd is the directory
	}
	if r, ok := d.resolved[key]; ok {
		return r
	}
	r, ok := d.resolvePlain(raw)
	if !ok {
		r = d.resolveDepth(raw, cwd, 0)
	}
	if d.resolved == nil {
		d.resolved = map[string]Resolved{}
	}
	d.resolved[key] = r
	return r
}

// resolvePlain resolves raw when no name in it is a link, "." or "..":
// the common case, looked up without building the name lists the general
// resolution needs. ok is false when it cannot tell.
func (d *Disk) resolvePlain(raw string) (Resolved, bool) {
	if !strings.HasPrefix(raw, "/") || hasDotNames(raw) {
		return Resolved{}, false
	}
	p := path.Clean(raw)
	if p == "/" || strings.HasPrefix(p, "/proc/") || p == "/proc" || p == "/dev" || strings.HasPrefix(p, "/dev/") && !strings.HasPrefix(p, "/dev/shm/") && p != "/dev/shm" {
		return Resolved{}, false
	}
	var e Entry
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		e = d.Look(p[:i])
		switch {
		case errors.Is(e.Err, fs.ErrNotExist) || errors.Is(e.Err, syscall.ENOTDIR):
			return Resolved{Path: p, UID: -1}, true
		case e.Err != nil || e.Mode&fs.ModeSymlink != 0:
			return Resolved{}, false
		}
	}
	return Resolved{Path: p, Exists: true, Mode: e.Mode, UID: e.UID}, true
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

func (d *Disk) resolveDepth(raw, cwd string, depth int) Resolved {
	pending := components(raw, false)
	var stack []string
	links := 0
	missing := false
	r := Resolved{UID: -1}
	var last Entry
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
				return Resolved{Why: "another process's directory", UID: -1}
			}
			if virtualPath(strings.Split(strings.TrimPrefix(p, "/"), "/")) || depth > 1 {
				r.Path = p
				return r
			}
			// /proc/self/root/… and /proc/self/cwd/… lead back to files.
			sub := d.resolveDepth(p, cwd, depth+1)
			sub.ViaLink = sub.ViaLink || r.ViaLink
			return sub
		}
		p := "/" + strings.Join(stack, "/")
		e := d.Look(p)
		last = e
		switch {
		case errors.Is(e.Err, fs.ErrNotExist) || errors.Is(e.Err, syscall.ENOTDIR):
			// Nothing below a missing name can be a link: the rest is
			// the path as written.
			missing = true
			r.Dangling = r.Dangling || c.fromLink
		case e.Err != nil:
			return Resolved{Why: lookupFailure(p, e.Err), UID: -1}
		case e.Mode&fs.ModeSymlink != 0:
			if systemAlias(stack, e.Target) && (len(pending) == 0 || pending[0].name != "..") {
				continue // the system's own alias: spelt as the path sets spell it
			}
			links++
			if links > maxLinks {
				return Resolved{Why: "more than 40 links to follow (a loop)", UID: -1}
			}
			r.ViaLink = true
			stack = stack[:len(stack)-1]
			if strings.HasPrefix(e.Target, "/") {
				stack = stack[:0]
			}
			pending = append(components(e.Target, true), pending...)
		}
	}
	r.Path = "/" + strings.Join(stack, "/")
	if len(stack) == 0 {
		last.Mode = fs.ModeDir
	}
	if !missing {
		r.Exists, r.Mode, r.UID = true, last.Mode, last.UID
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
	case errors.Is(err, ErrBudget):
		return err.Error()
	}
	return "looking up " + p + " failed"
}
