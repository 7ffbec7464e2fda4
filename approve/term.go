//go:build unix

package approve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// Terminal sequences: the alternate screen keeps the approver from
// scrolling the user's shell history away; the cursor is hidden meanwhile.
const (
	enterScreen = "\x1b[?1049h\x1b[?25l"
	leaveScreen = "\x1b[?25h\x1b[?1049l"
	home        = "\x1b[H"
	eraseLine   = "\x1b[K"
	eraseBelow  = "\x1b[J"
	bell        = "\a"
)

// Driver timing.
const (
	tickEvery = 250 * time.Millisecond
	// pollEvery bounds how long the key reader takes to notice the end.
	pollEvery = 100 * time.Millisecond
)

// termErr ends Run: the terminal failed or hung up.
type termErr struct{ err error }

// Run shows the approver on the terminal in/out (normally stdin and
// stdout) until the user quits (q, Ctrl-C, Ctrl-D) or ctx ends, then
// restores the terminal. It keeps trying to reach the hub meanwhile. Cancel
// ctx on SIGTERM and SIGHUP so that the terminal is always restored.
func Run(ctx context.Context, in, out *os.File, o Options) (err error) {
	inFd, outFd := int(in.Fd()), int(out.Fd())
	if !term.IsTerminal(inFd) || !term.IsTerminal(outFd) {
		return errors.New("approve needs a terminal; in scripts use execgate pending, resolve and watch")
	}
	saved, err := term.MakeRaw(inFd)
	if err != nil {
		return fmt.Errorf("terminal raw mode: %w", err)
	}
	defer func() { err = errors.Join(err, term.Restore(inFd, saved)) }()
	if _, err := io.WriteString(out, enterScreen); err != nil {
		return fmt.Errorf("write terminal: %w", err)
	}
	defer func() {
		_, werr := io.WriteString(out, leaveScreen)
		err = errors.Join(err, werr)
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs := make(chan any, 64)
	start := func(cmds []cmd) {
		for _, c := range cmds {
			go func() {
				if r := c.run(ctx); r != nil {
					select {
					case msgs <- r:
					case <-ctx.Done():
					}
				}
			}()
		}
	}
	m := newModel(o)
	defer func() {
		if m.src != nil {
			_ = m.src.Close()
		}
	}()
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	m.update(sizeOf(outFd))
	start(m.init())
	go readKeys(ctx, inFd, msgs)
	ticker := time.NewTicker(tickEvery)
	defer ticker.Stop()

	shown := ""
	for !m.quit {
		if frame := home + strings.Join(m.view(), eraseLine+"\r\n") + eraseLine + eraseBelow; frame != shown || m.bell {
			if m.bell {
				frame, m.bell = bell+frame, false
			}
			if _, err := io.WriteString(out, frame); err != nil {
				return fmt.Errorf("write terminal: %w", err)
			}
			shown = strings.TrimPrefix(frame, bell)
		}
		select {
		case <-ctx.Done():
			return nil
		case msg := <-msgs:
			if e, ok := msg.(termErr); ok {
				return e.err
			}
			start(m.update(msg))
		case <-winch:
			start(m.update(sizeOf(outFd)))
		case <-ticker.C:
			start(m.update(tickMsg{}))
		}
	}
	return nil
}

func sizeOf(fd int) resizeMsg {
	w, h, err := term.GetSize(fd)
	if err != nil {
		return resizeMsg{}
	}
	return resizeMsg{width: w, height: h}
}

// readKeys sends the keys typed on fd until ctx ends. It polls rather than
// blocking in read, so that no read is left pending after Run returns to
// swallow a key meant for the shell.
func readKeys(ctx context.Context, fd int, msgs chan<- any) {
	send := func(msg any) bool {
		select {
		case msgs <- msg:
			return true
		case <-ctx.Done():
			return false
		}
	}
	buf := make([]byte, 256)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for ctx.Err() == nil {
		n, err := unix.Poll(fds, int(pollEvery/time.Millisecond))
		if err != nil && !errors.Is(err, unix.EINTR) {
			send(termErr{fmt.Errorf("poll terminal: %w", err)})
			return
		}
		if n == 0 || err != nil {
			continue
		}
		if fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 && fds[0].Revents&unix.POLLIN == 0 {
			send(termErr{errors.New("terminal hung up")})
			return
		}
		n, err = unix.Read(fd, buf)
		switch {
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
			continue
		case err != nil:
			send(termErr{fmt.Errorf("read terminal: %w", err)})
			return
		case n == 0:
			send(termErr{errors.New("terminal hung up")})
			return
		}
		keys := parseKeys(buf[:n])
		for _, k := range keys {
			if !send(keyMsg{key: k, burst: len(keys) > 1}) {
				return
			}
		}
	}
}
