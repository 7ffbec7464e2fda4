//go:build linux && (amd64 || arm64)

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

func probe() Status {
	abi, err := ll.LandlockGetABIVersion()
	_, seccompErr := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	// Already under a filter (a container's, PR_GET_SECCOMP answers 2) is
	// fine: ours stacks on it. Strict mode would have killed us.
	return statusOf(abi, err, seccompErr)
}

// statusOf is what the kernel's answers mean: confinement needs
// Landlock at MinABI or later and seccomp; anything else says why not,
// and then nothing runs confined (the commands ask).
func statusOf(abi int, err, seccompErr error) Status {
	switch {
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return Status{Reason: "this kernel has no Landlock (it needs Linux 6.12 or later with Landlock enabled: lsm=landlock)"}
	case err != nil:
		// A container's seccomp profile that forbids Landlock's system
		// calls answers EPERM.
		return Status{Reason: fmt.Sprintf("Landlock cannot be used here: %v (a container that forbids it?)", err)}
	case abi < MinABI:
		return Status{ABI: abi, Reason: fmt.Sprintf("this kernel's Landlock ABI is %d; confining needs %d (Linux 6.12 or later)", abi, MinABI)}
	case seccompErr != nil:
		return Status{ABI: abi, Reason: fmt.Sprintf("seccomp is not available: %v", seccompErr)}
	}
	return Status{ABI: abi}
}

// Prepared is a confinement ready to apply: the Landlock ruleset (a file
// descriptor, close-on-exec) and the seccomp program.
type Prepared struct {
	grants  Grants
	abi     int
	ruleset int
	filter  []unix.SockFilter
	// net is how the private loopback network is made (netns_linux.go).
	net netState
	// group, if set, is the cgroup every process it starts is started
	// into (group_linux.go); groupErr says why it was dropped.
	group    *Group
	groupErr error
	groupMu  sync.Mutex // the engine starts children from several goroutines
}

// Grants returns what p allows.
func (p *Prepared) Grants() Grants { return p.grants }

// Close releases the ruleset. Threads already confined stay confined.
func (p *Prepared) Close() error {
	if p == nil {
		return nil
	}
	p.net.close()
	if p.ruleset < 0 {
		return nil
	}
	err := unix.Close(p.ruleset)
	p.ruleset = -1
	return err
}

// Access rights, by what they are for.
const (
	fsRead  = ll.AccessFSReadFile | ll.AccessFSReadDir
	fsExec  = ll.AccessFSExecute
	fsWrite = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate
	fsDevice = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	// fsFileRights are the rights Landlock accepts on a file (not a
	// directory) in a rule.
	fsFileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
		ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// handledFS are the file system rights this ABI knows: every one of them
// is denied unless a rule grants it.
func handledFS(abi int) uint64 {
	switch {
	case abi >= 5:
		return 1<<16 - 1
	case abi >= 3:
		return 1<<15 - 1
	}
	return 1<<14 - 1
}

// systemReads are the directories holding the system's programs,
// libraries and configuration: readable and executable. Root's /etc is
// not among them: see etcGrants.
func systemReads() []string {
	dirs := []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix", "/snap"}
	if os.Geteuid() == 0 {
		return dirs
	}
	return append(dirs, "/etc")
}

// kernelReads are the kernel's own views, readable only. Another
// process's environ, memory and descriptors stay out of reach: Landlock
// keeps ptrace-class access to processes outside the sandbox.
func kernelReads() []string { return []string{"/proc", "/sys"} }

// devices are the device files every program may use: the bit buckets,
// randomness, terminals. /dev/shm is shared memory (POSIX semaphores of
// Python's multiprocessing): a directory, writable.
func devices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}
}

// Prepare builds the confinement for g. Paths that do not exist are left
// out (a cache not made yet); everything else that fails is an error: a
// confinement is never weakened to make it fit.
func Prepare(g Grants) (*Prepared, error) { return PrepareWith(g, Options{}) }

// prepare builds the ruleset and the filter for g as they are applied:
// with g.Loopback, for a thread already in its private network namespace.
func prepare(g Grants) (*Prepared, error) {
	st := probe()
	if !st.Supported() {
		return nil, errors.New(st.Reason)
	}
	g = g.Normalize()
	attr := ll.RulesetAttr{HandledAccessFS: handledFS(st.ABI), Scoped: ll.ScopeAbstractUnixSocket | ll.ScopeSignal}
	if !g.Network && !g.Loopback {
		// In a private network namespace only loopback exists: TCP
		// there reaches nothing outside.
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	fd, err := landlockCreate(&attr)
	if err != nil {
		return nil, fmt.Errorf("sandbox: create Landlock ruleset: %w", err)
	}
	p := &Prepared{grants: g, abi: st.ABI, ruleset: fd, filter: filter(g), net: netState{fd: -1}}
	add := func(access uint64, paths ...string) error {
		for _, path := range paths {
			if err := p.addPath(access, path); err != nil {
				p.Close()
				return err
			}
		}
		return nil
	}
	write := uint64(fsRead | fsWrite)
	if g.RunCode {
		write |= fsExec
	}
	steps := []struct {
		access uint64
		paths  []string
	}{
		{fsRead | fsExec, systemReads()},
		{fsRead, kernelReads()},
		{fsDevice, devices()},
		{fsRead | fsWrite, []string{"/dev/shm"}},
		{fsRead | fsExec, g.Read},
		{write, g.Write},
		{write, g.Caches},
	}
	if g.Workspace != "" {
		access := uint64(fsRead)
		if g.RunCode {
			access |= fsExec
		}
		if g.WriteWorkspace {
			access = write
		}
		steps = append(steps, struct {
			access uint64
			paths  []string
		}{access, []string{g.Workspace}})
	}
	if g.TempDir != "" {
		steps = append(steps, struct {
			access uint64
			paths  []string
		}{write, []string{g.TempDir}})
	}
	for _, s := range steps {
		if err := add(s.access, s.paths...); err != nil {
			return nil, err
		}
	}
	if os.Geteuid() == 0 {
		if err := p.addEtc(); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// addEtc grants root's /etc, entry by entry (see etc_linux.go).
func (p *Prepared) addEtc() error {
	etc, err := unix.Open("/etc", unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
	if skippable(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox: open /etc: %w", err)
	}
	defer unix.Close(etc)
	for _, e := range etcGrants("/etc", "/etc") {
		if err := p.addListed(fsRead|fsExec, etc, e); err != nil {
			return err
		}
	}
	return nil
}

// addPath grants access beneath path; a missing path is skipped.
func (p *Prepared) addPath(access uint64, path string) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if skippable(err) {
		return nil // nothing there to grant (or nothing this user may reach)
	}
	if err != nil {
		return fmt.Errorf("sandbox: open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("sandbox: stat %s: %w", path, err)
	}
	return p.addFD(access, fd, path, st.Mode&unix.S_IFMT == unix.S_IFDIR)
}

// addListed grants access beneath e, whose kind its listing gave; an
// entry of /etc itself is opened from etc, a descriptor of it, which
// spares the kernel the walk from /. It is opened without following a
// link: should the entry have become one since the listing, the rule is
// on the link itself, which grants nothing reached through it (or, with a
// directory's rights, the kernel refuses it and nothing runs).
func (p *Prepared) addListed(access uint64, etc int, e etcGrant) error {
	dir, name := filepath.Split(e.path)
	if dir != "/etc/" {
		etc, name = unix.AT_FDCWD, e.path
	}
	fd, err := unix.Openat(etc, name, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if skippable(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox: open %s: %w", e.path, err)
	}
	defer unix.Close(fd)
	return p.addFD(access, fd, e.path, e.dir)
}

// skippable reports whether opening a path to grant failed because there
// is nothing there this user may reach: nothing to grant.
func skippable(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ELOOP)
}

// addFD grants access beneath fd, opened on path, a directory when dir
// (a file gets only the rights Landlock takes on files).
func (p *Prepared) addFD(access uint64, fd int, path string, dir bool) error {
	if !dir {
		access &= fsFileRights
	}
	access &= handledFS(p.abi)
	if access == 0 {
		return nil
	}
	attr := ll.PathBeneathAttr{AllowedAccess: access, ParentFd: fd}
	if err := ll.LandlockAddPathBeneathRule(p.ruleset, &attr, 0); err != nil {
		return fmt.Errorf("sandbox: grant %s: %w", path, err)
	}
	return nil
}

// landlockCreate is landlock_create_ruleset(2) with the size of the
// attributes this kernel knows: the quiet fields (ABI 10) are left out,
// which older kernels would refuse as unknown non-zero bytes.
func landlockCreate(attr *ll.RulesetAttr) (int, error) {
	const size = 24 // handled_access_fs, handled_access_net, scoped
	r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(attr)), size, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// restrictSelfLogNewExecOn asks the kernel to log denials of the programs
// the confined thread executes (ABI 7): with the audit subsystem on, a
// boundary hit is in the kernel's audit log too.
const restrictSelfLogNewExecOn = 2

// apply confines the calling OS thread: its private network namespace
// when p has one (or, where none can be made, the confinement without
// it), no_new_privs, the Landlock ruleset, then the seccomp filter. The
// caller has locked the thread and never unlocks it.
func (p *Prepared) apply() error {
	q, err := p.enterNet()
	if err != nil {
		return err
	}
	return q.applyRules()
}

// applyRules applies no_new_privs, the Landlock ruleset, then the seccomp
// filter (which no_new_privs allows without privilege).
func (p *Prepared) applyRules() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: no_new_privs: %w", err)
	}
	if err := dropCaps(); err != nil {
		return err
	}
	var flags uintptr
	if p.abi >= 7 {
		flags = restrictSelfLogNewExecOn
	}
	if _, _, e := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(p.ruleset), flags, 0); e != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", e)
	}
	prog := unix.SockFprog{Len: uint16(len(p.filter)), Filter: &p.filter[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return fmt.Errorf("sandbox: seccomp: %w", e)
	}
	runtime.KeepAlive(p.filter)
	return nil
}

// OnThread runs fn on a new OS thread confined by p, and returns fn's
// error. fn forks or execs the command there: what it starts inherits the
// confinement. The thread is kept, parked, until release is called, so
// that a child started with a parent-death signal keeps its parent thread
// while it runs; then its goroutine ends locked, and the Go runtime
// destroys the thread instead of reusing it. release must be called once,
// even when err is set. If confining the thread fails, fn is not run.
func (p *Prepared) OnThread(fn func() error) (release func(), err error) {
	if p == nil || (p.ruleset < 0 && p.net.mode != netHelper) {
		return func() {}, errors.New("sandbox: no confinement prepared")
	}
	return onThread(p.apply, fn)
}

// onThread runs confine, then fn, on a new locked OS thread that is never
// given back to the runtime (see OnThread).
func onThread(confine, fn func() error) (release func(), err error) {
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		// Never unlocked: see OnThread.
		if err := confine(); err != nil {
			errc <- err
			return
		}
		errc <- fn()
		<-done
	}()
	err = <-errc
	return func() { close(done) }, err
}
