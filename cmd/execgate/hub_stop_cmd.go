package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/hub"
)

// How hub stop waits for the hub to exit: it is not our child, so there is
// nothing to wait on but the process table.
const (
	hubStopWait = 10 * time.Second
	hubStopPoll = 20 * time.Millisecond
)

func newHubStopCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Stop the running hub and wait until it has exited (exit 0 also when none runs)",
		Long: `hub stop asks the kernel which process listens on the hub's socket, checks
that it is the hub (it says the same pid) and yours, sends it SIGTERM and
waits until it has exited. A hub started with --detach or in a terminal
stops alike; one run by systemd or launchd stops too, but the service
manager may start it again: stop it there instead. Pending requests are
denied, as when the hub goes away for any other reason.`,
		Args: noArgs("hub stop"),
		RunE: func(cmd *cobra.Command, _ []string) error { return stopHub(cmd.Context(), g) },
	}
}

// stopHub stops the hub that answers on the socket and waits for it.
func stopHub(ctx context.Context, g *globals) error {
	c, socket, err := dialApprover(ctx, g, clientName(g, "stop"))
	if errors.Is(err, hub.ErrNoHub) {
		fmt.Fprintf(g.stdout, "hub not running (socket %s)\n", socket)
		return nil
	}
	if err != nil {
		return fmt.Errorf("hub stop: %w", err)
	}
	pid, err := hubProcess(ctx, c, socket)
	c.Close()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("hub stop: signal the hub (pid %d): %w", pid, err)
	}
	if !waitGone(ctx, pid) {
		logPath, _ := hubLogPath(g)
		return fmt.Errorf("hub stop: the hub (pid %d) did not exit within %v of SIGTERM (its log: %s); to end it at once: kill -KILL %d",
			pid, hubStopWait, logPath, pid)
	}
	fmt.Fprintf(g.stdout, "hub stopped (pid %d)\n", pid)
	return nil
}

// hubProcess is the pid to signal: the process the kernel says listens on
// the socket, provided it is ours and the hub says the same. A process
// that only claims a pid over the socket is not trusted with a kill, and
// a hub in another pid namespace reports a pid that is not its pid here.
func hubProcess(ctx context.Context, c *hub.Client, socket string) (int, error) {
	pid, uid, err := c.ServerPid()
	if err != nil {
		return 0, fmt.Errorf("hub stop: which process listens on %s: %w", socket, err)
	}
	st, err := c.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("hub stop: hub status: %w", err)
	}
	switch {
	case pid <= 1:
		return 0, fmt.Errorf("hub stop: this system does not say which process listens on %s; stop the hub yourself (pid %d by its own account)", socket, st.Pid)
	case uid != os.Geteuid():
		return 0, fmt.Errorf("hub stop: the hub on %s (pid %d) runs as uid %d, not as you; stop it as that user", socket, pid, uid)
	case st.Pid != pid:
		return 0, fmt.Errorf("hub stop: pid %d listens on %s but the hub says it is pid %d (another pid namespace?); stop it yourself", pid, socket, st.Pid)
	}
	return pid, nil
}

// waitGone waits up to hubStopWait for pid to exit, and reports whether it
// did. An exited process that nobody reaps (a zombie) has exited.
func waitGone(ctx context.Context, pid int) bool {
	ctx, cancel := context.WithTimeout(ctx, hubStopWait)
	defer cancel()
	tick := time.NewTicker(hubStopPoll)
	defer tick.Stop()
	for {
		if processGone(pid) {
			return true
		}
		select {
		case <-ctx.Done():
			return processGone(pid)
		case <-tick.C:
		}
	}
}

// processGone reports that pid no longer runs: no such process, or one
// that has exited and waits to be reaped (Linux says so in /proc).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // no /proc here: the kill above is all there is
	}
	// The state follows the command name, which is in parentheses and
	// may itself hold ") ".
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	state := stat[i+2]
	return state == 'Z' || state == 'X'
}
