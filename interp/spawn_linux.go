package interp

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// deathSignal is the child's process attributes: SIGKILL when the thread
// that started it dies (see Run on orphans).
func deathSignal() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// spawn starts the shell with a bare fork and exec, and waits for it on a
// pidfd through the runtime's poller. os/exec would do the same work with
// more around it, all of it paid by every command the shim runs: a probe
// of pidfd support that forks a child of its own, and a thread blocked in
// waitid for as long as the command runs, which is one more thread to
// create and one more to stop when the shim exits (docs/BENCHMARKS.md,
// issue 16). The child is the same: same argv, environment (as os/exec
// computes it), directory, descriptors and death signal.
func spawn(o *Options, stdin, stdout, stderr *os.File) (child, bool, error) {
	fds, closeNull, err := openStreams(stdin, stdout, stderr)
	defer closeNull()
	if err != nil {
		return nil, true, err
	}
	env := environ(o)
	attr := &syscall.ProcAttr{
		Dir: o.Dir, Env: env, Files: fds,
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	var pid int
	release := func() {}
	if o.Confine != nil {
		// Forked from a confined thread, which must outlive the child:
		// its death signal fires when that thread ends. (Through the
		// sandbox's helper when that is how its private network is made.)
		pid, release, err = o.Confine.ForkExec(o.Shell, o.Argv, attr)
	} else {
		pid, err = syscall.ForkExec(o.Shell, o.Argv, attr)
	}
	if err != nil {
		release()
		return nil, true, &os.PathError{Op: "fork/exec", Path: o.Shell, Err: err}
	}
	c := &pidfdChild{id: pid, release: release}
	// The child is not reaped until wait does, so pid names it until then.
	if fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK); err == nil {
		c.fd = os.NewFile(uintptr(fd), "pidfd")
	}
	return c, true, nil
}

// pidfdChild is a shell started by spawn. fd is its pidfd, nil where the
// kernel has none (before Linux 5.3): wait then blocks a thread in wait4.
type pidfdChild struct {
	id int
	fd *os.File
	// release lets the confined thread that forked the child end, once
	// the child is reaped (a no-op when it was not confined).
	release func()
}

func (c *pidfdChild) pid() int { return c.id }

func (c *pidfdChild) wait() (syscall.WaitStatus, error) {
	if c.fd != nil {
		defer c.fd.Close()
		if rc, err := c.fd.SyscallConn(); err == nil {
			// Read calls exited until it answers true, parking the
			// goroutine on the poller in between: a pidfd is readable once
			// its process has exited.
			rc.Read(func(fd uintptr) bool { return exited(int(fd)) })
		}
	}
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(c.id, &ws, 0, nil)
		if !errors.Is(err, syscall.EINTR) {
			if c.release != nil {
				c.release()
			}
			return ws, err
		}
	}
}

// exited reports whether the process of pidfd has exited, without reaping
// it; an error answers true, leaving it to wait4 to report.
func exited(pidfd int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PIDFD, pidfd, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != nil || info.Signo != 0
}
