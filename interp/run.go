package interp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/execgate/execgate/sandbox"
)

// Defaults for the output settings; Options itself has no defaults except
// where noted, so the caller applies these when the configuration is silent.
const (
	DefaultMaxBytes      = 200000                 // output.maxBytes
	DefaultTailBytes     = 20000                  // output.tailBytes
	DefaultSpillMaxBytes = 64 << 20               // output.spillMaxBytes
	DefaultSpillKeep     = 10                     // spill files kept
	DefaultSpillMaxAge   = 7 * 24 * time.Hour     // spill files older are removed
	DefaultSpillMaxTotal = 128 << 20              // bytes of spill files kept in all
	DefaultGrace         = 100 * time.Millisecond // reading on after the shell exits
)

// killDelay is how long a cancelled command has between SIGTERM and SIGKILL.
const killDelay = 2 * time.Second

// readChunk is the size of each read from the command's pipes; it matches the
// default Linux pipe capacity so that one read usually empties the pipe.
const readChunk = 64 << 10

// Options says what to run and where its output goes.
type Options struct {
	// Shell is the absolute path of the shell (see FindShell). Run and Exec
	// refuse a path that is the running executable.
	Shell string
	// Argv is the full argument vector given to the shell, argv[0] included,
	// exactly as the shim received it.
	Argv []string
	// Env is the environment; nil means this process's environment.
	Env []string
	// Dir is the working directory; "" means this process's.
	Dir string
	// Confine, if set, confines the shell (and all it starts) with the
	// kernel's sandbox: it is started from a thread confined by it (see
	// sandbox.Prepared.OnThread), never without it. The caller puts the
	// sandbox's environment (TMPDIR) in Env.
	Confine *sandbox.Prepared

	// Stdin is the command's standard input; an *os.File (normally
	// os.Stdin) is handed to the shell untouched, nil means /dev/null.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output; nil discards it.
	Stdout, Stderr io.Writer

	// MaxBytes caps the combined stdout+stderr the caller receives; 0
	// disables the cap, and *os.File writers are then given to the shell
	// directly. The first MaxBytes-TailBytes bytes are passed on as they
	// arrive, the rest when the command ends. Output over the cap becomes
	// head, one marker line
	//	… [execgate: N bytes omitted; full output: PATH] …
	// and tail; the marker goes to stdout if stdout lost bytes, else to
	// stderr. Output within the cap is passed on byte for byte.
	MaxBytes int64
	// Direct lists streams (0 stdout, 1 stderr) that bypass the cap: an
	// *os.File there is given to the shell as it is, whatever MaxBytes
	// says, and its bytes are neither counted nor spilled. The shim sets it
	// for a stream that is a file or a device, which must get the command's
	// bytes unchanged even while the other stream is capped.
	Direct [2]bool
	// TailBytes is how much of the end of the output is kept when it is cut
	// (at most MaxBytes), and the size of Result.Tail.
	TailBytes int64
	// SpillDir is where the full output of a cut command is saved
	// (the shim uses $XDG_STATE_HOME/execgate/output); "" disables saving.
	// Known secret shapes are redacted in the saved copy (see redact),
	// never in what the caller receives.
	SpillDir string
	// SpillMaxBytes bounds each spill file; 0 disables saving.
	SpillMaxBytes int64
	// SpillKeep is how many spill files are kept; 0 means DefaultSpillKeep.
	// Pruning cannot be turned off: spills would pile up without bound.
	SpillKeep int
	// SpillMaxAge and SpillMaxTotal bound the spill files kept by age
	// (modification time) and by their total size; 0 means
	// DefaultSpillMaxAge and DefaultSpillMaxTotal. The newest spill is
	// always kept, whatever its size.
	SpillMaxAge   time.Duration
	SpillMaxTotal int64
	// Now names spill files; nil means time.Now. Their age is measured
	// with the real clock.
	Now func() time.Time

	// Grace is how long output is still read after the shell exits, for
	// background jobs that hold the pipes; 0 means DefaultGrace.
	Grace time.Duration
	// Relay, if set, relays the signals this process receives to the
	// command while it runs (see StartRelay). The shim sets it; a daemon
	// that runs commands must not, or it would swallow its own signals.
	Relay *Relay
	// Logger receives diagnostics; nil discards them. Nothing is ever
	// written into the command's output.
	Logger *slog.Logger
}

// ErrStatusLost is wrapped by Run's error when the shell ran but its exit
// status could not be collected; Result.ExitStatus is then StatusLost.
var ErrStatusLost error = statusLostError{}

// statusLostError is ErrStatusLost's type: a value the linker lays out,
// where errors.New would allocate when every shim process starts.
type statusLostError struct{}

func (statusLostError) Error() string { return "exit status lost" }

// StatusLost is Result.ExitStatus when the status could not be collected:
// a failure, never a success a caller could take for the command's.
const StatusLost = 255

// Result describes a finished command.
type Result struct {
	// ExitStatus is the shell's exit status, or 128+n if signal n killed it,
	// as bash reports it, or StatusLost.
	ExitStatus int
	// Signaled says a signal killed the shell; Signal is that signal. A
	// shim that wants its parent to see exactly what bash would show can
	// re-raise it.
	Signaled bool
	Signal   syscall.Signal
	// Bytes is the combined size of the captured output; output that went
	// straight to the caller's files is not counted.
	Bytes int64
	// Omitted is how many bytes the cap removed (0 if the output fit).
	Omitted int64
	// SpillPath is the file holding the full output when it was cut and
	// saved, else "".
	SpillPath string
	// Tail is the last TailBytes bytes of the captured output, for the
	// audit log.
	Tail []byte
	// Duration runs from starting the shell to collecting its output.
	Duration time.Duration
}

// Exec replaces this process with the shell. The shell inherits file
// descriptors 0, 1 and 2, so Stdin, Stdout and Stderr must be nil or
// os.Stdin, os.Stdout and os.Stderr; the output settings do not apply. It
// returns only on failure, possibly after changing to o.Dir.
func Exec(o Options) error {
	if err := o.checkCommand(); err != nil {
		return err
	}
	for i, s := range []any{o.Stdin, o.Stdout, o.Stderr} {
		if s == nil {
			continue
		}
		if f, ok := s.(*os.File); !ok || f == nil || !sameFd(f, i) {
			return fmt.Errorf("exec %s: standard stream %d is not this process's", o.Shell, i)
		}
	}
	env := environ(&o)
	if o.Dir != "" {
		if err := os.Chdir(o.Dir); err != nil {
			return fmt.Errorf("exec %s: %w", o.Shell, err)
		}
	}
	if o.Confine != nil {
		// Execve from a confined thread: after it, that thread is the
		// whole process. If it fails, the thread dies and this process
		// goes on with its own rights.
		release, err := o.Confine.OnThread(func() error { return syscall.Exec(o.Shell, o.Argv, env) })
		release()
		return fmt.Errorf("exec %s: %w", o.Shell, err)
	}
	err := syscall.Exec(o.Shell, o.Argv, env)
	return fmt.Errorf("exec %s: %w", o.Shell, err)
}

// Run runs the shell as a child and waits for it, relaying its output under
// the cap and, if asked, this process's signals.
//
// Process group. The shell stays in this process's process group, as bash's
// children stay in bash's, so that whatever signals that group reaches the
// whole command: an agent that spawned the shim in a group of its own and
// kills the group on a timeout (SIGKILL included, which nothing can relay),
// timeout(1), a terminal's ^C, job control. Background jobs stay in it too
// (bash -c has no job control) and ignore SIGINT and SIGQUIT as bash
// arranges; jobs started with setsid are in a session of their own and
// outside it, as under bash.
//
// Relayed signals. A signal this process catches came either to the whole
// group, and then the command has it already, or to this process alone. In
// the second case bash would die and leave its children running; an agent
// that kills only the process it started means to stop the command, so the
// signal is passed on as if it had gone to the command's group: to the
// shell and each of its descendants still in this group (see commandProcs),
// not to the group itself, which may hold the agent or the rest of a
// pipeline. The two cases are told apart by whether the shell visibly has
// the signal already (see struck); when that cannot be seen the command gets
// it twice, never not at all. In the foreground of a terminal the signal
// goes to the shell alone, as before: the terminal's own ^C reaches the
// group, and a second copy to every process would be noise. When Run itself
// stops the command (ctx done), it signals the command's processes.
//
// Orphans. The shell is started with Pdeathsig=SIGKILL, so killing this
// process alone, even with SIGKILL, kills the shell; catchable signals are
// relayed first. What the shell had started is orphaned after a SIGKILL to
// this process alone, exactly as when bash itself is SIGKILLed (the death
// signal is not inherited across fork), but it loses its output pipes and
// gets SIGPIPE on its next write. Background jobs keep running after the
// shell exits, as they would under bash.
//
// Background jobs that keep the output pipes open: once the shell exits,
// output is read for o.Grace more and then the pipes are closed, so Run
// returns promptly; a job that writes after that gets EPIPE, as it would once
// an agent stops reading bash's output.
//
// When ctx is done the command gets SIGTERM and, killDelay later, SIGKILL;
// Run then returns the resulting status and the caller sees ctx.Err().
// A terminating signal already waiting in o.Relay means the command is not
// started at all: the Result says it was killed by that signal (Duration 0)
// and the error is nil, as bash stopped before its exec would report.
//
// Run returns an error when the shell was not started (bad options, ctx
// already done, exec failure) or, after it ran, when its status could not be
// collected.
func Run(ctx context.Context, o Options) (Result, error) {
	if err := o.checkCommand(); err != nil {
		return Result{}, err
	}
	if err := o.checkOutput(); err != nil {
		return Result{}, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	grace := o.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}

	inForeground := foreground(o.Stdin, o.Stdout, o.Stderr)

	c := newCapper([2]io.Writer{o.Stdout, o.Stderr}, o.MaxBytes, o.TailBytes, newSpill(&o, log), log)
	// reads[i] != nil marks stream i as captured through a pipe whose write
	// end is writes[i]; otherwise writes[i] is the caller's own file or nil.
	var reads, writes [2]*os.File
	closePipes := func() {
		for i, r := range reads {
			if r != nil {
				r.Close()
				writes[i].Close()
			}
		}
	}
	for i, w := range [2]io.Writer{o.Stdout, o.Stderr} {
		if o.MaxBytes == 0 || o.Direct[i] {
			if f, ok := w.(*os.File); ok && f != nil {
				writes[i] = f // no cap: the shell writes straight to it
				continue
			}
			if w == nil {
				continue // the shell gets /dev/null
			}
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			closePipes()
			return Result{}, fmt.Errorf("run %s: %w", o.Shell, err)
		}
		reads[i], writes[i] = pr, pw
	}

	var sigs <-chan os.Signal
	if o.Relay != nil {
		// A signal that came before the start stops the command before it
		// begins; one that comes after waits in the relay for the loop
		// below.
		if sig := o.Relay.Pending(); sig != 0 {
			closePipes()
			log.Debug("signalled before the start", "signal", sig)
			return Result{ExitStatus: 128 + int(sig), Signaled: true, Signal: sig}, nil
		}
		sigs = o.Relay.wait()
	}

	// Pdeathsig fires when the thread that forked the child exits, not the
	// process; keep this goroutine on its thread until the child is reaped
	// so that the Go runtime cannot retire that thread under it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	if err := ctx.Err(); err != nil {
		closePipes()
		return Result{}, fmt.Errorf("run %s: %w", o.Shell, err)
	}
	start := time.Now()
	ch, err := startChild(&o, writes[stdout], writes[stderr], grace)
	if err != nil {
		closePipes()
		return Result{}, fmt.Errorf("start %s: %w", o.Shell, err)
	}
	for i, r := range reads {
		if r != nil {
			writes[i].Close() // the child has its copy; EOF must mean it closed
		}
	}

	var wg sync.WaitGroup
	for i, r := range reads {
		if r != nil {
			wg.Go(func() { pump(c, i, r) })
		}
	}

	shell := ch.pid()
	procs := newCommandProcs(shell, syscall.Getpgrp(), log)
	defer procs.release()
	// send passes sig to the command; caught says this process caught it
	// (see "Relayed signals" above), rather than Run deciding to stop.
	send := func(sig syscall.Signal, caught bool) {
		switch {
		case inForeground && caught:
			kill(shell, sig, log)
		case caught && struck(shell, sig):
			log.Debug("signal reached the command's group already", "signal", sig)
		default:
			procs.signal(sig)
		}
	}
	var (
		ws      syscall.WaitStatus
		waitErr error
	)
	waited := make(chan struct{})
	go func() {
		ws, waitErr = ch.wait()
		close(waited)
	}()
	done := ctx.Done()
	var killAt <-chan time.Time
	for running := true; running; {
		select {
		case sig := <-sigs:
			send(sig.(syscall.Signal), true)
		case <-done:
			log.Debug("command cancelled", "err", ctx.Err())
			send(syscall.SIGTERM, false)
			done, killAt = nil, time.After(killDelay)
		case <-killAt:
			send(syscall.SIGKILL, false)
			killAt = nil
		case <-waited:
			running = false
		}
	}

	deadline := time.Now().Add(grace)
	for _, r := range reads {
		if r != nil {
			r.SetReadDeadline(deadline) // fails only if the pump already closed it
		}
	}
	wg.Wait()

	var res Result
	c.finish(&res)
	res.Duration = time.Since(start)
	if waitErr != nil {
		// wait4 itself failed (SIGCHLD ignored, say): the status is lost,
		// and guessing one could report success for a failed command.
		res.ExitStatus = StatusLost
		return res, fmt.Errorf("wait for %s: %w: %w", o.Shell, ErrStatusLost, waitErr)
	}
	if ws.Signaled() {
		res.Signaled, res.Signal = true, ws.Signal()
		res.ExitStatus = 128 + int(ws.Signal())
	} else {
		res.ExitStatus = ws.ExitStatus()
	}
	return res, nil
}

// pump copies one pipe into the capper until EOF, the grace deadline, or a
// failed delivery. Closing the pipe on the way out is what makes a writer
// the caller stopped reading get EPIPE, as it would have under bash.
func pump(c *capper, s int, r *os.File) {
	defer r.Close()
	buf := make([]byte, readChunk)
	for {
		n, err := r.Read(buf)
		if n > 0 && c.write(s, buf[:n]) != nil {
			return
		}
		if err != nil {
			return
		}
	}
}

// checkCommand validates what both Run and Exec need.
func (o *Options) checkCommand() error {
	if len(o.Argv) == 0 {
		return errors.New("run shell: empty argv")
	}
	return checkShell(o.Shell)
}

// checkOutput validates the output settings.
func (o *Options) checkOutput() error {
	switch {
	case o.MaxBytes < 0:
		return fmt.Errorf("output max bytes %d is negative", o.MaxBytes)
	case o.TailBytes < 0:
		return fmt.Errorf("output tail bytes %d is negative", o.TailBytes)
	case o.MaxBytes > 0 && o.TailBytes > o.MaxBytes:
		return fmt.Errorf("output tail bytes %d exceed max bytes %d", o.TailBytes, o.MaxBytes)
	case o.SpillMaxBytes < 0:
		return fmt.Errorf("output spill max bytes %d is negative", o.SpillMaxBytes)
	case o.SpillKeep < 0:
		return fmt.Errorf("output spill keep %d is negative", o.SpillKeep)
	}
	return nil
}

// foreground reports whether this process is in the foreground process group
// of its controlling terminal, found through the standard streams or else
// /dev/tty. Any doubt answers false: the child then gets its own group,
// which is the safe default for signal relaying.
func foreground(streams ...any) bool {
	pgrp := unix.Getpgrp()
	for _, s := range streams {
		f, ok := s.(*os.File)
		if !ok || f == nil {
			continue
		}
		if fg, ok := foregroundGroup(f); ok {
			return fg == pgrp
		}
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return false // no controlling terminal
	}
	defer tty.Close()
	fg, ok := foregroundGroup(tty)
	return ok && fg == pgrp
}

// foregroundGroup returns the foreground process group of f if f is this
// process's controlling terminal. It goes through SyscallConn rather than
// Fd so that the caller's file keeps its non-blocking mode.
func foregroundGroup(f *os.File) (int, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var fg int
	var ioErr error
	if err := rc.Control(func(fd uintptr) { fg, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }); err != nil {
		return 0, false
	}
	return fg, ioErr == nil
}

// sameFd reports whether f is file descriptor fd of this process.
func sameFd(f *os.File, fd int) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var same bool
	rc.Control(func(got uintptr) { same = got == uintptr(fd) })
	return same
}
