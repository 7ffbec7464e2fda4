//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// probeArg makes the helper only bring lo up and say whether it could.
const probeArg = "probe"

// HelperMain is the helper's whole life, in a child started by
// Prepared.ForkExec in new user and network namespaces: args are
// [program, HelperArg, grants-fd, status-fd, proxy-fd or -1, path,
// argv…]. It reads the
// grants whole from grants-fd, brings lo up, drops every capability,
// confines itself and execs path; anything that fails is written to
// status-fd (close-on-exec, so the parent sees EOF once the command runs)
// and the command is not run. It prints nothing on the command's streams,
// and never returns.
func HelperMain(args []string) {
	runtime.LockOSThread()
	if len(args) == 3 && args[2] == probeArg {
		if err := loUp(); err != nil {
			fmt.Fprint(os.Stdout, err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(args) < 7 {
		os.Exit(126)
	}
	gfd, err1 := strconv.Atoi(args[2])
	sfd, err2 := strconv.Atoi(args[3])
	pfd, err3 := strconv.Atoi(args[4])
	if err1 != nil || err2 != nil || err3 != nil || gfd < 3 || sfd < 3 || (pfd != -1 && pfd < 3) {
		os.Exit(126)
	}
	unix.CloseOnExec(gfd)
	unix.CloseOnExec(sfd)
	if pfd >= 0 {
		unix.CloseOnExec(pfd)
	}
	status := os.NewFile(uintptr(sfd), "status")
	fail := func(prefix, msg string, code int) {
		status.WriteString(prefix + msg)
		os.Exit(code)
	}
	g, err := readGrants(os.NewFile(uintptr(gfd), "grants"))
	if err != nil {
		fail(statusMessage, err.Error(), 126)
	}
	if err := loUp(); err != nil {
		// Lo stays down (a namespace the kernel lets us make but not
		// configure: AppArmor's restricted user namespaces): no network
		// at all, as without Loopback — said to the parent, for the
		// record of what the command ran with.
		g.Loopback = false
		status.WriteString(statusFallback + strings.ReplaceAll(err.Error(), "\n", " ") + "\n")
	} else if g.Proxy != "" && pfd >= 0 {
		// The proxy's listener, made here and served from outside.
		ln, err := listenTCP(g.Proxy)
		if err == nil {
			err = sendFd(pfd, ln)
			unix.Close(ln)
		}
		if err != nil {
			fail(statusMessage, err.Error(), 126)
		}
	}
	if pfd >= 0 {
		unix.Close(pfd)
	}
	p, err := prepare(g)
	if err != nil {
		fail(statusMessage, err.Error(), 126)
	}
	if err := dropAllCaps(); err != nil {
		fail(statusMessage, err.Error(), 126)
	}
	if err := p.applyRules(); err != nil {
		fail(statusMessage, err.Error(), 126)
	}
	err = syscall.Exec(args[5], args[6:], os.Environ())
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		fail(statusMessage, fmt.Sprint(err), 127)
	}
	fail(statusErrno, strconv.Itoa(int(errno)), 127)
}

// readGrants reads the JSON grants whole; they must ask for Loopback, the
// only reason the helper runs.
func readGrants(f *os.File) (Grants, error) {
	defer f.Close()
	var g Grants
	b, err := io.ReadAll(io.LimitReader(f, 1<<24))
	if err != nil {
		return g, fmt.Errorf("sandbox helper: read the grants: %w", err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return g, fmt.Errorf("sandbox helper: the grants: %w", err)
	}
	if !g.Loopback || g.Network {
		return g, errors.New("sandbox helper: the grants ask for no private loopback network")
	}
	return g, nil
}

// dropAllCaps leaves the thread no capability at all: the user namespace
// gave it every one (over that namespace), which the command must not
// keep — the bounding set, the ambient set, then effective, permitted
// and inheritable.
func dropAllCaps() error {
	for c := uintptr(0); ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the last capability this kernel knows
		}
		if errors.Is(err, unix.EPERM) && os.Geteuid() != 0 {
			// The namespace's capabilities are not ours to use (Ubuntu's
			// AppArmor restricts unprivileged user namespaces so). Not
			// uid 0, with no_new_privs and nothing permitted, inheritable
			// or ambient (below), the command gains none at its exec.
			break
		}
		if err != nil {
			return fmt.Errorf("sandbox helper: drop capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox helper: clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox helper: clear capabilities: %w", err)
	}
	return nil
}

// ProbeLoopback says whether a confined command that runs code gets a
// private loopback network here, made as o says: nil if so, else why
// not. It makes a namespace to find out (a few milliseconds): for
// doctor and check, never on a command's path.
func ProbeLoopback(o Options) error {
	if st := probe(); !st.Supported() {
		return errors.New(st.Reason)
	}
	if effective(unix.CAP_SYS_ADMIN) {
		errc := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread dies with its namespace
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				errc <- fmt.Errorf("cannot make a network namespace: %w", err)
				return
			}
			errc <- loUp()
		}()
		return <-errc
	}
	if o.Helper == "" {
		return errors.New("no helper program to make a user namespace with")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	uid, gid := os.Geteuid(), os.Getegid()
	attr := &syscall.ProcAttr{
		Files: []uintptr{^uintptr(0), w.Fd(), ^uintptr(0)},
		Sys: &syscall.SysProcAttr{
			Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNET,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
			AmbientCaps: helperCaps(),
		},
	}
	pid, err := syscall.ForkExec(o.Helper, []string{o.Helper, HelperArg, probeArg}, attr)
	w.Close()
	if err != nil {
		return fmt.Errorf("cannot make a user namespace: %w", err)
	}
	msg, _ := io.ReadAll(r)
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if ws.Exited() && ws.ExitStatus() == 0 {
		return nil
	}
	if len(msg) > 0 {
		return errors.New(string(msg))
	}
	return fmt.Errorf("the namespace helper failed (%v)", ws)
}
