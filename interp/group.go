package interp

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The command runs in this process's own process group, as bash's children
// run in bash's: that group is what the caller (an agent that spawned the
// shim detached, timeout(1), a terminal) signals to stop the whole command,
// and only there does a group-wide SIGKILL reach every process of it. A
// signal sent to this process alone is passed on to the command's processes
// by signalling each of them: the group may hold processes that are not
// ours (the agent itself, the other side of a pipeline), which a killpg
// would hit.

// maxRounds bounds how often commandProcs.signal looks again for processes that were
// forked while it was signalling the ones it had found.
const maxRounds = 8

// pfExiting is the kernel's PF_EXITING task flag, shown in /proc/PID/stat:
// the process has begun to exit.
const pfExiting = 0x4

// procEntry is what commandTree needs of one /proc/PID/stat.
type procEntry struct {
	pid, ppid, pgid int
}

// readProcs lists the processes in /proc. Processes that exit while it reads
// are left out; that they are gone is all a caller could learn of them.
func readProcs() ([]procEntry, error) {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	procs := make([]procEntry, 0, len(dir))
	for _, d := range dir {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue // not a process
		}
		st, err := readStat(pid)
		if err != nil {
			continue
		}
		procs = append(procs, procEntry{pid: pid, ppid: st.ppid, pgid: st.pgid})
	}
	return procs, nil
}

// procStat is the part of /proc/PID/stat this file reads.
type procStat struct {
	state      byte
	ppid, pgid int
	flags      uint64
}

// readStat reads /proc/PID/stat. The command name comes second, in
// parentheses, and may itself hold spaces and parentheses, so the fields are
// counted from the last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	// state ppid pgrp session tty_nr tpgid flags
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 7 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var st procStat
	st.state = f[0][0]
	if st.ppid, err = strconv.Atoi(f[1]); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: ppid: %w", pid, err)
	}
	if st.pgid, err = strconv.Atoi(f[2]); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: pgrp: %w", pid, err)
	}
	if st.flags, err = strconv.ParseUint(f[6], 10, 64); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: flags: %w", pid, err)
	}
	return st, nil
}

// commandTree returns root and its descendants that are in process group
// pgid, ancestors before descendants: the processes a signal to the
// command's group would reach. A
// descendant that made a group or session of its own (setsid, a shell with
// job control) is left out, as a killpg would leave it out; so is one that
// was orphaned and adopted by init, which can no longer be told apart from
// a stranger in the group.
func commandTree(procs []procEntry, root, pgid int) []int {
	children := make(map[int][]procEntry, len(procs))
	inGroup := false
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
		if p.pid == root {
			inGroup = p.pgid == pgid
		}
	}
	var tree []int
	if inGroup {
		tree = append(tree, root)
	}
	// Descendants in another group are walked too: a child that left the
	// group cannot bring its own children back into it (setpgid stays
	// within a session, and a new session has new groups), but walking them
	// costs nothing and keeps the rule simple.
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if seen[c.pid] {
				continue // a pid reused while /proc was read
			}
			seen[c.pid] = true
			queue = append(queue, c.pid)
			if c.pgid == pgid {
				tree = append(tree, c.pid)
			}
		}
	}
	return tree
}

// commandProcs signals the shell and every descendant of it in the
// command's process group. It keeps a pidfd-backed handle on each process
// it has signalled, so that a later signal (SIGKILL after SIGTERM) still
// reaches one that its parent's death has orphaned and so taken out of the
// tree, and never a stranger that inherited its pid.
type commandProcs struct {
	root, pgid int
	log        *slog.Logger
	known      map[int]*os.Process
}

func newCommandProcs(root, pgid int, log *slog.Logger) *commandProcs {
	return &commandProcs{root: root, pgid: pgid, log: log, known: map[int]*os.Process{}}
}

// signal sends sig to the processes signalled before, then to the tree,
// looking again for processes forked meanwhile until it finds no new one
// (at most maxRounds times). If /proc cannot be read it still signals the
// shell, which is the least a relay must do.
func (c *commandProcs) signal(sig syscall.Signal) {
	for _, p := range c.known {
		c.send(p, sig)
	}
	for range maxRounds {
		procs, err := readProcs()
		if err != nil {
			c.log.Warn("relay signal to the command's processes", "signal", sig, "err", err)
			if _, ok := c.known[c.root]; !ok {
				kill(c.root, sig, c.log)
			}
			return
		}
		// Ancestors first, so that each shell has its signal before it can
		// see a child die of it: bash that reaps a child killed by SIGHUP
		// before its own SIGHUP arrives goes on with the script.
		fresh := false
		for _, pid := range commandTree(procs, c.root, c.pgid) {
			if _, ok := c.known[pid]; ok {
				continue
			}
			p, err := os.FindProcess(pid)
			if err != nil {
				continue // cannot fail on Linux
			}
			c.known[pid], fresh = p, true
			c.send(p, sig)
		}
		if !fresh {
			return
		}
	}
}

// send signals one process; one that is already gone is no failure.
func (c *commandProcs) send(p *os.Process, sig syscall.Signal) {
	if err := p.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, syscall.ESRCH) {
		c.log.Warn("relay signal", "pid", p.Pid, "signal", sig, "err", err)
	}
}

// release lets go of the handles.
func (c *commandProcs) release() {
	for _, p := range c.known {
		p.Release()
	}
}

// kill sends sig to pid; a process that is already gone is no failure.
func kill(pid int, sig syscall.Signal, log *slog.Logger) {
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		log.Warn("relay signal", "pid", pid, "signal", sig, "err", err)
	}
}

// struck reports whether sig has visibly reached pid already: pid is
// exiting or a zombie, or has sig or SIGKILL pending (the kernel marks every
// thread of a process that a fatal signal is killing with a pending
// SIGKILL).
//
// Run asks this of the shell when this process catches a signal, to tell a
// signal sent to the whole process group (the shell has it too: the kernel
// queues a group's signal to its newer members, the shell among them,
// before this process) from one sent to this process alone (the shell has
// not). Only a signal the shell dies of can be seen this way: one it
// catches (bash's SIGINT handler while it waits, a trap) or ignores leaves
// no trace, and then the answer is false and the command gets the signal
// twice. Twice is the safe error; never is not.
func struck(pid int, sig syscall.Signal) bool {
	// An error answers false: if the shell is gone, relaying costs
	// nothing; if /proc is unreadable, relaying is the safe side.
	st, err := readStat(pid)
	if err != nil {
		return false
	}
	if st.state == 'Z' || st.state == 'X' || st.state == 'x' || st.flags&pfExiting != 0 {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	want := uint64(1)<<(uint(sig)-1) | uint64(1)<<(uint(syscall.SIGKILL)-1)
	for line := range strings.Lines(string(b)) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":\t")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
		if err == nil && mask&want != 0 {
			return true
		}
	}
	return false
}
