package interp

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// A child is the shell Run started, until it has been waited for.
type child interface {
	pid() int
	// wait waits for the shell to exit and reaps it. The error is set only
	// when the status could not be collected.
	wait() (syscall.WaitStatus, error)
}

// startChild starts the shell of o with the given standard streams: stdout
// and stderr are the caller's files, write ends of Run's pipes, or nil for
// /dev/null; stdin is o.Stdin. The shell gets SIGKILL if the thread that
// started it dies (see Run on orphans), so the caller keeps to its thread.
func startChild(o *Options, stdout, stderr *os.File, grace time.Duration) (child, error) {
	if in, ok := o.Stdin.(*os.File); o.Stdin == nil || (ok && in != nil) {
		if c, ok, err := spawn(o, in, stdout, stderr); ok {
			return c, err
		}
	} else if o.Confine != nil {
		return startConfinedPiped(o, stdout, stderr)
	}
	if o.Confine != nil {
		// Only spawn confines; os/exec would start it unconfined.
		return nil, errors.New("confinement is not supported on this system")
	}
	cmd := &exec.Cmd{Path: o.Shell, Args: o.Argv, Env: o.Env, Dir: o.Dir, Stdin: o.Stdin}
	cmd.SysProcAttr = deathSignal()
	// Only a non-file Stdin needs copying; bound the wait for that copy so
	// a background job holding the pipe cannot stall Wait.
	cmd.WaitDelay = grace
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return execChild{cmd}, nil
}

// execChild is a shell started by os/exec, which copies a Stdin that is
// not a file.
type execChild struct{ cmd *exec.Cmd }

func (c execChild) pid() int { return c.cmd.Process.Pid }

func (c execChild) wait() (syscall.WaitStatus, error) {
	err := c.cmd.Wait()
	if c.cmd.ProcessState == nil {
		// wait4 itself failed (SIGCHLD ignored, say): the status is lost,
		// and guessing one could report success for a failed command.
		return 0, err
	}
	// Otherwise err is an *ExitError or ErrWaitDelay, and the status is in
	// ProcessState either way.
	ws, _ := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws, nil
}

// openStreams returns the descriptors a spawned shell gets as 0, 1 and 2,
// opening /dev/null for the missing ones as os/exec does — read-only as
// stdin, write-only as stdout or stderr, one open file each — and a
// function that closes what it opened. A shared read-write /dev/null would
// let the shell write to its stdin or read its stdout, which under os/exec
// fail with EBADF.
func openStreams(stdin, stdout, stderr *os.File) ([]uintptr, func(), error) {
	var opened []*os.File
	closeAll := func() {
		for _, f := range opened {
			f.Close()
		}
	}
	fds := make([]uintptr, 3)
	for i, f := range []*os.File{stdin, stdout, stderr} {
		if f == nil {
			flag := os.O_WRONLY
			if i == 0 {
				flag = os.O_RDONLY
			}
			var err error
			if f, err = os.OpenFile(os.DevNull, flag, 0); err != nil {
				return nil, closeAll, err // os/exec's error: open /dev/null: …
			}
			opened = append(opened, f)
		}
		fds[i] = f.Fd()
	}
	return fds, closeAll, nil
}

// environ is the environment the shell gets: o.Env, or this process's,
// with PWD set for o.Dir and duplicates resolved, exactly as os/exec
// computes it, so that every way of starting the shell agrees.
func environ(o *Options) []string {
	return (&exec.Cmd{Path: o.Shell, Env: o.Env, Dir: o.Dir}).Environ()
}

// startConfinedPiped starts a confined shell whose stdin is not a file:
// spawn gets the read end of a pipe, which a goroutine fills from Stdin,
// as os/exec would.
func startConfinedPiped(o *Options, stdout, stderr *os.File) (child, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c, ok, err := spawn(o, pr, stdout, stderr)
	pr.Close()
	if !ok || err != nil {
		pw.Close()
		if err == nil {
			err = errors.New("confinement is not supported on this system")
		}
		return nil, err
	}
	go func() {
		io.Copy(pw, o.Stdin)
		pw.Close()
	}()
	return c, nil
}
