//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A private loopback network (Grants.Loopback) is a network namespace of
// the command's own with lo up and no other interface: tests that listen
// on 127.0.0.1 or ::1 work, and reach nothing of the host's. It is made
// one of two ways:
//
//   - by a process that holds CAP_SYS_ADMIN (root): the confined thread
//     unshares its network namespace and brings lo up before it confines
//     itself (netThread); the first thread of a Prepared makes it, the
//     others join it, so that every command of one invocation shares it;
//   - by anyone else: the command is started through a helper (execgate's
//     own program, Options.Helper) in a new user and network namespace
//     (CLONE_NEWUSER needs a single-threaded caller, which a Go process
//     never is, so the clone is the child's). The helper brings lo up,
//     drops every capability the user namespace gave it, confines itself
//     with the grants it reads from a pipe and execs the command
//     (netHelper). The user's own uid and gid are mapped to themselves.
//
// Where neither works (no helper, user namespaces restricted, a
// container's seccomp) the command runs with the confinement it would
// have without Loopback: no network at all. Never more.

// HelperArg is the first argument that makes execgate's program the
// sandbox's helper (HelperMain).
const HelperArg = "__execgate-sandbox-netns"

// Options say how a confinement is made, as against what it grants.
type Options struct {
	// Helper is the path of a program whose main calls HelperMain when
	// its first argument is HelperArg: execgate's own ("/proc/self/exe"
	// in execgate). "" leaves a process without CAP_SYS_ADMIN no way to
	// make a private loopback network: its commands get none.
	Helper string
	// OnProxy receives the listener Grants.Proxy asks for, once per
	// private network made (in the starting goroutine); it owns it.
	OnProxy func(*os.File)
	// Enclosed says this process is itself held by an enclosing
	// confinement (a shim inside a confined command): Loopback then makes
	// no network of its own — the enclosing one, private or none, stays
	// the command's, so that what it serves on loopback is the enclosing
	// command's too — and only this confinement's own inet rules are
	// relaxed; the enclosing one's still hold.
	Enclosed bool
	// Group, if set, is the cgroup the command is started into (see
	// NewGroup); the caller keeps it and closes it after p.
	Group *Group
}

// netMode is how a Prepared makes its private network.
type netMode int

const (
	netNone     netMode = iota // no private network (no Loopback, or no way to make one)
	netThread                  // unshare on the confined thread
	netHelper                  // a child in new user and network namespaces, through the helper
	netEnclosed                // the enclosing confinement's network (Options.Enclosed)
)

// netState is a Prepared's private network.
type netState struct {
	mode    netMode
	helper  string
	onProxy func(*os.File)
	// plainHelper starts the helper without new namespaces: tests use it
	// to stand for a namespace whose capabilities cannot be used.
	plainHelper bool
	mu          sync.Mutex
	// fd is the namespace the first confined thread made (netThread), -1
	// before.
	fd int
	// strict is the confinement without Loopback, built when no namespace
	// could be made; err says why not.
	strict *Prepared
	err    error
}

func (n *netState) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fd >= 0 {
		unix.Close(n.fd)
		n.fd = -1
	}
	if n.strict != nil {
		n.strict.Close()
		n.strict = nil
	}
}

// PrepareWith is Prepare, made as o says. With g.Loopback (and not
// g.Network) the command gets a private loopback network where this
// process can make one (see HelperArg); where it cannot even try,
// Grants() says so, with Loopback off.
func PrepareWith(g Grants, o Options) (*Prepared, error) {
	mode := netNone
	if g.Loopback && !g.Network {
		switch {
		case o.Enclosed:
			mode = netEnclosed
		case effective(unix.CAP_SYS_ADMIN):
			mode = netThread
		case o.Helper != "":
			mode = netHelper
		}
	}
	return prepareNet(g, o, mode)
}

// prepareNet is PrepareWith with the way of making the network chosen.
func prepareNet(g Grants, o Options, mode netMode) (*Prepared, error) {
	if mode == netNone {
		g.Loopback = false
	}
	if !g.Loopback || o.OnProxy == nil || mode == netEnclosed {
		g.Proxy = "" // (an enclosing command's proxy variables pass on in its environment)
	}
	if mode == netHelper {
		// The helper builds the ruleset in the child; this process builds
		// one only when the child cannot be made (fallback).
		st := probe()
		if !st.Supported() {
			return nil, errors.New(st.Reason)
		}
		return &Prepared{grants: g.Normalize(), abi: st.ABI, ruleset: -1, group: o.Group,
			net: netState{mode: netHelper, helper: o.Helper, fd: -1, onProxy: o.OnProxy}}, nil
	}
	p, err := prepare(g)
	if err != nil {
		return nil, err
	}
	p.net.mode, p.net.onProxy = mode, o.OnProxy
	p.group = o.Group
	return p, nil
}

// NeedsChild reports whether the command must be started as a child
// (ForkExec) to get its private network: exec'd in place it would run with
// the confinement without Loopback.
func (p *Prepared) NeedsChild() bool { return p != nil && p.net.mode == netHelper }

// LoopbackErr says why the command ran without the private loopback its
// grants asked for, once a start has found out; nil otherwise.
func (p *Prepared) LoopbackErr() error {
	p.net.mu.Lock()
	defer p.net.mu.Unlock()
	return p.net.err
}

// enterNet puts the calling (locked) thread in p's private network, and
// returns the confinement to apply there: p, or, where the namespace
// cannot be made, the one without Loopback.
func (p *Prepared) enterNet() (*Prepared, error) {
	switch p.net.mode {
	case netThread:
		if err := p.joinNet(); err != nil {
			return p.fallback(err)
		}
	case netHelper:
		// A plain OnThread: no helper starts the command.
		return p.fallback(errors.New("started without the helper"))
	}
	return p, nil
}

// joinNet unshares the thread's network namespace and brings lo up the
// first time; later threads join that namespace.
func (p *Prepared) joinNet() error {
	p.net.mu.Lock()
	defer p.net.mu.Unlock()
	if p.net.fd >= 0 {
		return unix.Setns(p.net.fd, unix.CLONE_NEWNET)
	}
	if p.net.err != nil {
		return p.net.err
	}
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("unshare the network namespace: %w", err)
	}
	if err := loUp(); err != nil {
		return err
	}
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the network namespace: %w", err)
	}
	if p.grants.Proxy != "" {
		ln, err := listenTCP(p.grants.Proxy)
		if err != nil {
			unix.Close(fd)
			return err
		}
		p.net.onProxy(os.NewFile(uintptr(ln), "proxy"))
	}
	p.net.fd = fd
	return nil
}

// listenTCP makes a listening TCP socket (close-on-exec) at addr, an
// IPv4 address and port, in the calling thread's network namespace.
func listenTCP(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return -1, fmt.Errorf("proxy listener %q: want 127.0.0.1:PORT", addr)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("proxy listener: %w", err)
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("proxy listener %s: %w", addr, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("proxy listener %s: %w", addr, err)
	}
	return fd, nil
}

// sendFd sends fd over the Unix socket sock (SCM_RIGHTS).
func sendFd(sock, fd int) error {
	return unix.Sendmsg(sock, []byte{1}, unix.UnixRights(fd), nil, 0)
}

// recvFd receives one descriptor sent by sendFd, close-on-exec; -1 when
// the other end closed without sending one.
func recvFd(sock int) (int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, err
		}
		if n == 0 && oobn == 0 {
			return -1, nil
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			return -1, fmt.Errorf("proxy listener: no descriptor received")
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			for _, f := range fds {
				unix.Close(f)
			}
			return -1, fmt.Errorf("proxy listener: no descriptor received")
		}
		return fds[0], nil
	}
}

// fallback records why the private network could not be made and returns
// the confinement without Loopback, built once.
func (p *Prepared) fallback(why error) (*Prepared, error) {
	p.net.mu.Lock()
	defer p.net.mu.Unlock()
	if p.net.err == nil {
		p.net.err = why
	}
	if p.net.strict == nil {
		g := p.grants
		g.Loopback = false
		s, err := prepare(g)
		if err != nil {
			return nil, err
		}
		p.net.strict = s
	}
	return p.net.strict, nil
}

// loUp brings the loopback interface of the calling thread's network
// namespace up (SIOCSIFFLAGS, as `ip link set lo up`): a new namespace's
// lo is down, and nothing binds to 127.0.0.1 until it is up.
func loUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}

// helperCaps are the capabilities the helper keeps across its exec.
func helperCaps() []uintptr { return []uintptr{unix.CAP_NET_ADMIN, unix.CAP_SETPCAP} }

// effective reports whether the calling thread holds capability c.
func effective(c uintptr) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

// ForkExec starts path with argv as attr says, confined by p, from a
// confined thread kept until release is called (see OnThread): what
// syscall.ForkExec would do on that thread, through the helper when p
// makes its private network that way. release must be called once, even
// when err is set.
func (p *Prepared) ForkExec(path string, argv []string, attr *syscall.ProcAttr) (pid int, release func(), err error) {
	if g := p.currentGroup(); g != nil {
		a := *attr
		a.Sys = g.into(attr.Sys)
		pid, release, err = p.forkExec(path, argv, &a)
		if !p.DropGroup(err) {
			return pid, release, err
		}
		// The kernel would not start it into the group (no clone3 before
		// Linux 5.7, a seccomp profile that refuses it, a cgroup that
		// cannot take processes): nothing ran; it runs untracked.
		release()
	}
	return p.forkExec(path, argv, attr)
}

// groupRefused reports whether err is the kernel refusing to start a
// process into a cgroup, rather than the command failing to start.
func groupRefused(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EOPNOTSUPP) ||
		errors.Is(err, unix.EINVAL)
}

// GroupErr says why the command was started outside its Group, once a
// start has found out; nil otherwise.
func (p *Prepared) GroupErr() error {
	if p == nil {
		return nil
	}
	p.groupMu.Lock()
	defer p.groupMu.Unlock()
	return p.groupErr
}

// currentGroup is p's Group, nil once dropped.
func (p *Prepared) currentGroup() *Group {
	if p == nil {
		return nil
	}
	p.groupMu.Lock()
	defer p.groupMu.Unlock()
	return p.group
}

// DropGroup reports whether err, from starting a child with ChildAttr, is
// the kernel refusing to start it into p's Group; if so the group is
// dropped (GroupErr says why) and the start should be tried again
// without it, as ForkExec does.
func (p *Prepared) DropGroup(err error) bool {
	if p == nil || err == nil || !groupRefused(err) {
		return false
	}
	p.groupMu.Lock()
	defer p.groupMu.Unlock()
	if p.group == nil {
		return false
	}
	p.groupErr, p.group = err, nil
	return true
}

// ChildAttr is what os/exec must be given to start a child as ForkExec
// would, on a thread OnThread confined: its Group (nil without one).
func (p *Prepared) ChildAttr() *syscall.SysProcAttr {
	if p == nil {
		return nil
	}
	return p.currentGroup().into(nil)
}

// forkExec is ForkExec without its group's fallback.
func (p *Prepared) forkExec(path string, argv []string, attr *syscall.ProcAttr) (pid int, release func(), err error) {
	if p == nil || p.net.mode != netHelper {
		release, err = p.OnThread(func() (err error) {
			pid, err = syscall.ForkExec(path, argv, attr)
			return err
		})
		return pid, release, err
	}
	release, err = onThread(func() error { return nil }, func() error {
		var started bool
		pid, started, err = p.viaHelper(path, argv, attr)
		if started {
			return err
		}
		// No namespace could be made: this thread gets the confinement
		// without Loopback, and starts the command itself.
		s, ferr := p.fallback(err)
		if ferr != nil {
			return ferr
		}
		if err := s.applyRules(); err != nil {
			return err
		}
		pid, err = syscall.ForkExec(path, argv, attr)
		return err
	})
	return pid, release, err
}

// viaHelper starts the helper in new user and network namespaces, hands
// it the grants, and waits until it has exec'd the command (the status
// pipe closes) or reports why not. started is false when the helper
// itself could not be started (namespaces refused): nothing ran.
func (p *Prepared) viaHelper(path string, argv []string, attr *syscall.ProcAttr) (pid int, started bool, err error) {
	data, err := json.Marshal(p.grants)
	if err != nil {
		return 0, false, err
	}
	gr, gw, err := os.Pipe()
	if err != nil {
		return 0, false, err
	}
	defer gw.Close()
	sr, sw, err := os.Pipe()
	if err != nil {
		gr.Close()
		return 0, false, err
	}
	defer sr.Close()
	a := *attr
	sys := syscall.SysProcAttr{}
	if attr.Sys != nil {
		sys = *attr.Sys
	}
	if !p.net.plainHelper {
		sys.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNET
		uid, gid := os.Geteuid(), os.Getegid()
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		sys.GidMappingsEnableSetgroups = false
		// The user namespace gives the child every capability, which its
		// exec of the helper (not uid 0 there) would lose: the helper
		// needs these two, to bring lo up and to drop the rest.
		sys.AmbientCaps = helperCaps()
	}
	a.Sys = &sys
	a.Files = append(slices.Clip(attr.Files), gr.Fd(), sw.Fd())
	n := len(attr.Files)
	pfd, parent, child := "-1", -1, -1
	if p.grants.Proxy != "" {
		// The helper makes the proxy's listener inside the namespace and
		// sends it back over this pair.
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			gr.Close()
			sw.Close()
			return 0, false, fmt.Errorf("proxy socket pair: %w", err)
		}
		parent, child = pair[0], pair[1]
		defer unix.Close(parent)
		a.Files = append(a.Files, uintptr(child))
		pfd = strconv.Itoa(n + 2)
	}
	hargv := append([]string{p.net.helper, HelperArg, strconv.Itoa(n), strconv.Itoa(n + 1), pfd, path}, argv...)
	pid, err = syscall.ForkExec(p.net.helper, hargv, &a)
	gr.Close()
	sw.Close()
	if child >= 0 {
		unix.Close(child) // the helper's end only: EOF here once it is done with it
	}
	runtime.KeepAlive(gr)
	runtime.KeepAlive(sw)
	if err != nil {
		return 0, false, fmt.Errorf("start the network namespace: %w", err)
	}
	// The helper reads the grants whole before anything else; a helper
	// that died early makes this fail with EPIPE, and says why below.
	gw.Write(data)
	gw.Close()
	if parent >= 0 {
		if fd, err := recvFd(parent); err == nil && fd >= 0 {
			p.net.onProxy(os.NewFile(uintptr(fd), "proxy"))
		}
	}
	b, _ := io.ReadAll(sr)
	msg := string(b)
	if rest, ok := strings.CutPrefix(msg, statusFallback); ok {
		// It runs without its private network: why, then what followed.
		why, after, _ := strings.Cut(rest, "\n")
		p.net.mu.Lock()
		if p.net.err == nil {
			p.net.err = errors.New(why)
		}
		p.net.mu.Unlock()
		msg = after
	}
	if len(msg) == 0 {
		return pid, true, nil // exec'd: the pipe was close-on-exec
	}
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	return 0, true, decodeStatus(msg)
}

// The helper's status pipe carries nothing when it exec'd the command,
// else one of these.
const (
	statusErrno   = "errno "   // the command's execve failed: as ForkExec reports it
	statusMessage = "message " // the helper could not confine: the command was not run
	// statusFallback starts a line the helper writes before going on
	// without the private network (lo could not be brought up).
	statusFallback = "fallback "
)

func decodeStatus(msg string) error {
	if s, ok := strings.CutPrefix(msg, statusErrno); ok {
		if n, err := strconv.Atoi(s); err == nil {
			return syscall.Errno(n)
		}
	}
	if s, ok := strings.CutPrefix(msg, statusMessage); ok {
		return errors.New(s)
	}
	return fmt.Errorf("sandbox helper: %q", msg)
}
