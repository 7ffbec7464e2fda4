package interp

import (
	"fmt"
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
	}
	cmd := &exec.Cmd{Path: o.Shell, Args: o.Argv, Env: o.Env, Dir: o.Dir, Stdin: o.Stdin}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
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
// opening /dev/null for the missing ones as os/exec does, and a function
// that closes what it opened.
func openStreams(stdin, stdout, stderr *os.File) ([]uintptr, func(), error) {
	var null *os.File
	closeNull := func() {
		if null != nil {
			null.Close()
		}
	}
	fds := make([]uintptr, 3)
	for i, f := range []*os.File{stdin, stdout, stderr} {
		if f == nil {
			if null == nil {
				var err error
				if null, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
					return nil, closeNull, fmt.Errorf("open %s: %w", os.DevNull, err)
				}
			}
			f = null
		}
		fds[i] = f.Fd()
	}
	return fds, closeNull, nil
}

// environ is the environment the shell gets: o.Env, or this process's,
// with PWD set for o.Dir and duplicates resolved, exactly as os/exec
// computes it, so that every way of starting the shell agrees.
func environ(o *Options) []string {
	return (&exec.Cmd{Path: o.Shell, Env: o.Env, Dir: o.Dir}).Environ()
}
