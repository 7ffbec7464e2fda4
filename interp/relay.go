package interp

import (
	"os"
	"os/signal"
	"syscall"
)

// Relay catches the signals Run relays to its command: SIGINT, SIGTERM,
// SIGHUP, SIGQUIT and SIGWINCH.
//
// It exists so that the cost of catching them can be paid early. Each
// signal handed to signal.Notify is a round trip to the Go runtime's signal
// thread, which is itself started on first use; on a small machine the five
// cost ≈ 0.3 ms, and stopping them would cost as much again. StartRelay does
// that work in the background, while the caller is still deciding, and the
// signals stay caught for the rest of the process: a Relay is for a process
// that runs one command and exits, such as the shim.
//
// Once the relay is up a signal no longer ends the process; it waits in the
// relay until Run passes it on. Run checks for one before it starts the
// command: a command the caller was told to stop before it began is not
// started, and Run reports it as killed by that signal, which is what bash
// reports when it is stopped before it gets to exec. So a caller that takes
// a Relay must either Run or leave soon after.
type Relay struct {
	ch    chan os.Signal
	ready chan struct{}
}

// StartRelay begins catching the relayed signals in the background and
// returns at once; Run waits until they are caught before it starts the
// command, so that none can slip past between the two.
func StartRelay() *Relay {
	r := &Relay{ch: make(chan os.Signal, 8), ready: make(chan struct{})}
	go func() {
		defer close(r.ready)
		signal.Notify(r.ch, forwarded()...)
	}()
	return r
}

// wait returns the channel once the signals are caught.
func (r *Relay) wait() <-chan os.Signal {
	<-r.ready
	return r.ch
}

// Pending returns a signal received but not yet relayed that would have
// ended the process (SIGWINCH is dropped), or 0. Signals received later
// stay in the relay.
func (r *Relay) Pending() syscall.Signal {
	ch := r.wait()
	for {
		select {
		case sig := <-ch:
			if s := sig.(syscall.Signal); s != syscall.SIGWINCH {
				return s
			}
		default:
			return 0
		}
	}
}

// forwarded are the signals relayed to the command.
func forwarded() []os.Signal {
	return []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGWINCH}
}
