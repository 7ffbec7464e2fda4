package shim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/execgate/execgate/internal/denial"
	"github.com/execgate/execgate/internal/state"
	"github.com/execgate/execgate/sandbox"
)

// What a confined command leaves running. Its sandbox holds a daemon it
// starts as it holds the command, but the code it may change in the
// workspace (git's hooks and configuration, .envrc: planted.go) runs
// later outside any sandbox, and a daemon can change it at any moment:
// after the next command's comparison, while an approved `git push`
// reads its hooks. So a confined command that runs code is started into
// a cgroup of its own (sandbox.Group), which nothing it starts can leave;
// a file in the state directory names it, per workspace. While a command
// runs unconfined, every such group of the user's is paused
// (cgroup.freeze) — every workspace's, since a command may cd anywhere and
// a workspace may hold another repository —, the code files are compared
// again, and the groups are resumed when it ends (the last such command
// to end, when several run at once), or after holdMax: an allowlisted
// server must not stop the agent's confined work for as long as it runs.
// A confined command that runs code, started meanwhile, waits with them.
// Where no group can be made (no writable cgroup v2: most containers, a
// login session's own scope) leftovers are only caught by the comparison
// at the next command; doctor says so.

// holdWait bounds how long pausing a group may take: a process inside an
// uninterruptible wait (a disk, a FUSE mount) pauses only when it
// returns.
const holdWait = 2 * time.Second

// holdMax bounds how long an unconfined command keeps the others paused:
// long enough for git to have read the hooks it runs (a push runs
// pre-push once the remote has answered), short enough that a long
// command (a dev server the allowlist lets through) holds up confined
// work only that long.
const holdMax = 30 * time.Second

// holdFor is how long this session's unconfined command holds the others
// (Options.HoldMax, else holdMax).
func (s *session) holdFor() time.Duration {
	if s.o.HoldMax > 0 {
		return s.o.HoldMax
	}
	return holdMax
}

// workspaceKey names ws's records in the state directory.
func workspaceKey(ws string) string {
	sum := sha256.Sum256([]byte(ws))
	return hex.EncodeToString(sum[:8])
}

// groupMarks is the directory that names ws's groups: one file per group,
// named as it, holding its directory in the cgroup file system, then, once
// its command has ended and left something running, a line "ended"
// (appended: a reader never sees the directory half written).
func (s *session) groupMarks(ws string) (string, error) {
	return state.Path(s.getenv, "confined", workspaceKey(ws)+".groups")
}

// holdLock is the lock file every change to the pauses is made under.
func (s *session) holdLock() (string, error) {
	return state.Path(s.getenv, "confined", "hold.lock")
}

// newGroup makes the group a confined command that runs code in ws is
// started into, and names it in ws's records; nil (and why, in the debug
// log) where none can be made.
func (s *session) newGroup(ws string) *sandbox.Group {
	if ws == "" {
		return nil
	}
	marks, err := s.groupMarks(ws)
	if err == nil {
		err = state.MkdirPrivate(marks)
	}
	if err != nil {
		s.log.Debug("no cgroup for leftovers", "err", err)
		return nil
	}
	_, self, ok := statOf(os.Getpid())
	if !ok {
		s.log.Debug("no cgroup for leftovers: cannot read this process's start time")
		return nil
	}
	// Its maker is named by PID and start time: a PID alone may name
	// another process once the maker is gone.
	name := fmt.Sprintf("%s-%d-%d-%d", workspaceKey(ws), self.pid, self.start, time.Now().UnixNano())
	g, err := sandbox.NewGroup(name, func(name string) bool { return !creatorAlive(name) })
	if err != nil {
		s.log.Debug("no cgroup for leftovers", "err", err)
		return nil
	}
	// Named before anything runs in it: a shim killed now leaves a name
	// of an empty group, which the next look removes.
	if err := os.WriteFile(filepath.Join(marks, name), []byte(g.Dir), 0o600); err != nil {
		s.log.Debug("no cgroup for leftovers", "err", err)
		g.Close()
		sandbox.RemoveGroup(g.Dir)
		return nil
	}
	return g
}

// waitHeld, before the command starts into its new group g, waits while
// a command runs unconfined (holdMax at most), unless that command is what started
// this one (it would wait for itself); it says so on one line. It waits
// here, not paused in the kernel's start of the command, so that a signal
// (the agent giving up, ^C) still stops it: then it returns that signal,
// and the command must not start. It also resumes the groups no running
// unconfined command holds (a killed shim's pause). A command that starts
// unconfined after this returns pauses g, still empty, with the rest.
func (s *session) waitHeld(ctx context.Context, g *sandbox.Group) syscall.Signal {
	relay := s.signalRelay()
	own := ancestors()
	told := false
	busySince := time.Time{}
	for delay := time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		// One try each round: a signal is looked at between rounds.
		lock, err := s.lockHoldsWithin(0)
		var holders []procID
		switch {
		case errors.Is(err, errLockBusy):
			// Whoever holds it may be pausing: go on waiting. Held for
			// moments by every shim that looks: said only when it lasts.
			if busySince.IsZero() {
				busySince = time.Now()
			}
			if time.Since(busySince) > lockWait {
				holders = []procID{{}}
			}
		case err != nil:
			s.log.Debug("leftovers lock", "err", err)
			return 0
		default:
			holders = s.holders()
			if !foreignHolder(holders, own) {
				s.resumeFree(holders)
				lock.Close()
				return 0
			}
			lock.Close()
			busySince = time.Time{}
		}
		if !told && len(holders) > 0 {
			who := ""
			if holders[0].pid != 0 {
				who = fmt.Sprintf(" (pid %d)", holders[0].pid)
			}
			fmt.Fprintf(s.o.Stderr, "execgate: waiting: a command runs unconfined%s; confined commands that run code wait until it ends, %s at most\n", who, s.waitLeft())
			told = true
		}
		select {
		case <-ctx.Done():
			return syscall.SIGTERM
		case <-time.After(delay):
		}
		if sig := relay.Pending(); sig != 0 {
			return sig
		}
	}
}

// waitLeft is how long a confined command may still wait for the holds
// seen last (holders): the latest end of one, rounded up to a second;
// the longest a hold lasts when none was read (the lock stayed busy).
func (s *session) waitLeft() time.Duration {
	if s.heldUntil.IsZero() {
		return s.holdFor()
	}
	return max(time.Until(s.heldUntil), 0).Truncate(time.Second) + time.Second
}

// foreignHolder reports whether one of holders is not among anc, the
// ancestors of a confined command's shim: an unconfined command that did
// not start that command, for which it must stay paused.
func foreignHolder(holders, anc []procID) bool {
	return slices.ContainsFunc(holders, func(h procID) bool { return !slices.Contains(anc, h) })
}

// creatorPID is the PID of the shim that made the group named name
// (KEY-PID-START-TIME) if that shim still runs, or 0.
func creatorPID(name string) int {
	parts := strings.Split(name, "-")
	if len(parts) != 4 {
		return 0
	}
	var want procID
	var err1, err2 error
	want.pid, err1 = strconv.Atoi(parts[1])
	want.start, err2 = strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil || want.pid <= 0 {
		return 0
	}
	if _, now, ok := statOf(want.pid); !ok || now != want {
		return 0
	}
	return want.pid
}

// procID names a process across PID reuse: its PID and start time.
type procID struct {
	pid   int
	start uint64
}

// String is how a holder is named in its file.
func (p procID) String() string { return strconv.Itoa(p.pid) + " " + strconv.FormatUint(p.start, 10) }

// statOf reads pid's parent and start time from /proc/PID/stat.
func statOf(pid int) (ppid int, id procID, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, procID{}, false
	}
	ppid, start, ok := parseStat(string(b))
	return ppid, procID{pid: pid, start: start}, ok
}

// parseStat reads the parent (field 4) and the start time (field 22) from
// the text of /proc/PID/stat. The process's name, in parentheses, is the
// process's own to choose — ") 1 2 3" included —: the fields are counted
// after the last ')'.
func parseStat(stat string) (ppid int, start uint64, ok bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 20 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || ppid < 0 {
		return 0, 0, false
	}
	return ppid, start, true
}

// ancestors lists this process's ancestors, parent first.
func ancestors() []procID { return ancestorsFrom(os.Getppid()) }

// ancestorsOf lists pid's ancestors, parent first (none once it is gone).
func ancestorsOf(pid int) []procID {
	ppid, _, ok := statOf(pid)
	if !ok {
		return nil
	}
	return ancestorsFrom(ppid)
}

// ancestorsFrom lists pid and its ancestors.
func ancestorsFrom(pid int) []procID {
	var out []procID
	for i := 0; pid > 1 && i < 64; i++ {
		ppid, id, ok := statOf(pid)
		if !ok {
			break
		}
		out = append(out, id)
		pid = ppid
	}
	return out
}

// holderDir is the directory of the commands running unconfined now: one
// file each, named by PID, holding "PID START UNTIL" (UNTIL in Unix
// nanoseconds: holdMax after it began).
func (s *session) holderDir() (string, error) {
	return state.Path(s.getenv, "confined", "holders")
}

// holders lists the commands running unconfined that still run and still
// hold (not past holdMax), removing the files of those gone. Called with
// the lock held.
func (s *session) holders() []procID {
	dir, err := s.holderDir()
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []procID
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var want procID
		var until int64
		if _, err := fmt.Sscanf(string(b), "%d %d %d", &want.pid, &want.start, &until); err != nil {
			os.Remove(path)
			continue
		}
		switch _, now, ok := statOf(want.pid); {
		case !ok || now != want:
			os.Remove(path)
		case time.Now().UnixNano() < until:
			out = append(out, want)
			if t := time.Unix(0, until); t.After(s.heldUntil) {
				s.heldUntil = t
			}
		}
	}
	return out
}

// lockWait bounds how long taking the lock may take: it is held for
// moments, but a process stopped while it holds it (^Z, a debugger) would
// otherwise hang every command of the user's.
const lockWait = 5 * time.Second

// errLockBusy: the lock was held by another for all of lockWait.
var errLockBusy = errors.New("the lock of the pauses is held by a process that does not let it go (stopped?)")

// lockHolds takes the lock every change to the pauses is made under, or
// fails after lockWait; closing the file releases it.
func (s *session) lockHolds() (*os.File, error) { return s.lockHoldsWithin(lockWait) }

// lockHoldsWithin is lockHolds, trying for d (once, for 0).
func (s *session) lockHoldsWithin(d time.Duration) (*os.File, error) {
	lock, err := s.openHoldLock()
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(d)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return lock, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			lock.Close()
			return nil, err
		}
		if time.Now().After(deadline) {
			lock.Close()
			return nil, errLockBusy
		}
		time.Sleep(delay)
	}
}

// resumeFree resumes every paused group that none of holders, the
// unconfined commands running, holds: one of them holds a group unless it
// started the group's shim (called with the lock held). A group whose
// shim is gone stays paused while any holds.
func (s *session) resumeFree(holders []procID) {
	for _, l := range s.liveGroups() {
		if !l.state.Frozen {
			continue
		}
		if len(holders) > 0 {
			// A group whose command is over is a leftover, its shim
			// still finishing or not.
			pid := creatorPID(filepath.Base(l.dir))
			if l.ended || pid == 0 || !creatorAlive(filepath.Base(l.dir)) || foreignHolder(holders, ancestorsOf(pid)) {
				continue
			}
		}
		sandbox.Freeze(context.Background(), l.dir, false)
	}
}

// watchHeld, while the command runs in g, resumes g when it is paused and
// no unconfined command that holds it runs any more: one killed (SIGKILL,
// an agent's timeout) cannot resume what it paused. It returns the
// function that stops watching.
func (s *session) watchHeld(g *sandbox.Group) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if st, err := sandbox.ReadGroup(g.Dir); err != nil || !st.Frozen {
				continue
			}
			if lock, err := s.lockHolds(); err == nil {
				s.resumeFree(s.holders())
				lock.Close()
			}
		}
	}()
	return sync.OnceFunc(func() { close(done) })
}

// openHoldLock opens (making it) the lock file.
func (s *session) openHoldLock() (*os.File, error) {
	path, err := s.holdLock()
	if err != nil {
		return nil, err
	}
	if err := state.MkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return state.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
}

// liveGroup is a group with processes in it, or about to have.
type liveGroup struct {
	dir   string
	state sandbox.GroupState
	// ended: its command is over; what runs in it is a leftover, even
	// while its shim is still finishing.
	ended bool
}

// liveGroups lists the groups, of every workspace, that have processes in
// them or whose shim still runs, removing the ones that are empty and over
// or gone (and their names).
func (s *session) liveGroups() []liveGroup {
	dir, err := state.Path(s.getenv, "confined")
	if err != nil {
		return nil
	}
	all, _ := filepath.Glob(filepath.Join(dir, "*.groups"))
	var live []liveGroup
	for _, marks := range all {
		live = append(live, liveGroupsIn(marks)...)
	}
	return live
}

// liveGroupsIn is liveGroups for the groups marks names (one workspace's).
func liveGroupsIn(marks string) []liveGroup {
	entries, err := os.ReadDir(marks)
	if err != nil {
		return nil
	}
	var live []liveGroup
	for _, e := range entries {
		mark := filepath.Join(marks, e.Name())
		b, err := os.ReadFile(mark)
		dir, rest, _ := strings.Cut(string(b), "\n")
		ended := rest != ""
		if err != nil || !filepath.IsAbs(dir) || filepath.Base(dir) != e.Name() {
			continue // being written, or not a name of ours: leave it
		}
		st, err := sandbox.ReadGroup(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			os.Remove(mark)
		case err != nil:
			// Unreadable: it may hold anything; treat it as running.
			live = append(live, liveGroup{dir: dir, state: sandbox.GroupState{Populated: true}, ended: ended})
		case st.Populated:
			live = append(live, liveGroup{dir: dir, state: st, ended: ended})
		case !creatorAlive(e.Name()):
			// Empty, and the shim that made it is gone (killed before it
			// could remove it): the command is over.
			if sandbox.RemoveGroup(dir) == nil {
				os.Remove(mark)
			}
		default:
			// Empty, of a shim still running: it may be about to take its
			// command, which must start paused if this group is.
			live = append(live, liveGroup{dir: dir, state: st})
		}
	}
	return live
}

// creatorAlive reports whether the shim that made the group named name
// still runs.
func creatorAlive(name string) bool { return creatorPID(name) != 0 }

// endGroup, once the command has ended, removes its group if nothing is
// left running in it, and otherwise says what is (for the record).
func (s *session) endGroup(ws string, g *sandbox.Group) []string {
	if g == nil {
		return nil
	}
	g.Close()
	st, err := sandbox.ReadGroup(g.Dir)
	if err == nil && !st.Populated {
		if sandbox.RemoveGroup(g.Dir) == nil {
			if marks, err := s.groupMarks(ws); err == nil {
				os.Remove(filepath.Join(marks, filepath.Base(g.Dir)))
			}
		}
		return nil
	}
	// Marked over first: from now on resumeFree treats it as any
	// leftover, not as the group of a command an unconfined one started.
	if marks, err := s.groupMarks(ws); err == nil {
		markEnded(filepath.Join(marks, filepath.Base(g.Dir)))
	}
	// Started by a command that runs unconfined (a script's bash -c
	// through the shims), it was not paused for that command's sake;
	// what it leaves is, like any leftover, while that command holds.
	if lock, err := s.lockHolds(); err == nil {
		if len(s.holders()) > 0 {
			wait, cancel := context.WithTimeout(context.Background(), holdWait)
			if err := sandbox.Freeze(wait, g.Dir, true); err != nil {
				s.log.Warn("pause leftovers", "err", err)
			}
			cancel()
		}
		lock.Close()
	}
	return describePIDs(sandbox.GroupPIDs(g.Dir))
}

// markEnded appends "ended" to the group mark at path (groupMarks).
func markEnded(path string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	f.WriteString("\nended")
	f.Close()
}

// describePIDs names processes as "PID NAME" (at most ten, then a count).
func describePIDs(pids []int) []string {
	var out []string
	for i, pid := range pids {
		if i == 10 {
			out = append(out, fmt.Sprintf("and %d more", len(pids)-10))
			break
		}
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		out = append(out, strings.TrimSpace(strconv.Itoa(pid)+" "+strings.TrimSpace(string(comm))))
	}
	return out
}

// holdLeftovers pauses what confined commands left running (and those
// running now), for an unconfined command about to run, and keeps confined
// commands that run code, started meanwhile, waiting; release resumes them
// all, unless another such command still holds them. They are resumed
// after holdMax anyway; expired then says so. paused names what was
// paused. An error means something could not be paused: the command must
// not run.
func (s *session) holdLeftovers(ctx context.Context) (release func(), paused []string, err error) {
	noop := func() {}
	fail := func(err error) (func(), []string, error) {
		if len(s.liveGroups()) == 0 {
			// Nothing to pause (and no confined command can name a new
			// group where this one could not write): it runs.
			s.log.Debug("no hold", "err", err)
			return noop, nil, nil
		}
		return noop, nil, fmt.Errorf("cannot pause what confined commands run here: %w", err)
	}
	dir, err := s.holderDir()
	if err != nil {
		return fail(err)
	}
	if err := state.MkdirPrivate(dir); err != nil {
		return fail(err)
	}
	_, self, ok := statOf(os.Getpid())
	if !ok {
		return fail(errors.New("cannot read this process's start time"))
	}
	lock, err := s.lockHolds()
	if err != nil {
		return fail(err)
	}
	mine := filepath.Join(dir, strconv.Itoa(self.pid))
	until := time.Now().Add(s.holdFor()).UnixNano()
	if err := os.WriteFile(mine, []byte(self.String()+" "+strconv.FormatInt(until, 10)), 0o600); err != nil {
		lock.Close()
		return fail(err)
	}
	resume := sync.OnceFunc(func() {
		lock, err := s.lockHolds()
		if err != nil {
			// Not holding any more, whatever else: the paused commands'
			// own watch, or the next confined command, resumes them.
			os.Remove(mine)
			s.log.Warn("resume leftovers", "err", err)
			return
		}
		defer lock.Close()
		os.Remove(mine)
		// What another still holds stays paused: the last to end
		// resumes it.
		s.resumeFree(s.holders())
	})
	timer := time.AfterFunc(s.holdFor(), func() {
		s.holdExpired.Store(true)
		resume()
	})
	release = func() {
		timer.Stop()
		resume()
	}
	wait, cancel := context.WithTimeout(ctx, holdWait)
	defer cancel()
	for _, l := range s.liveGroups() {
		if err := sandbox.Freeze(wait, l.dir, true); err != nil {
			lock.Close()
			release()
			pids := sandbox.GroupPIDs(l.dir)
			return noop, nil, fmt.Errorf("processes a confined command left running here could not be paused (%s): %w; "+
				"stop them (kill %s) and run it again", strings.Join(describePIDs(pids), ", "), err, pidList(pids))
		}
		paused = append(paused, describePIDs(sandbox.GroupPIDs(l.dir))...)
	}
	lock.Close()
	return release, paused, nil
}

// pidList is pids as kill's arguments.
func pidList(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, " ")
}

// holdUnconfined pauses, for a command about to run unconfined from cwd,
// what confined commands left running, and then compares the code files
// of cwd's workspace again: a change made between the decision and the
// pause is one nobody was shown, and the command is refused. release
// resumes them once the command has ended.
func (s *session) holdUnconfined(ctx context.Context, cwd string) (release func(), err error) {
	noop := func() {}
	if !s.sandboxStatus().Supported() {
		return noop, nil
	}
	ws := s.sandboxWorkspace(cwd)
	release, paused, err := s.holdLeftovers(ctx)
	if err != nil {
		return noop, denial.New(err.Error() + "; it was not run")
	}
	// It resumes them when the command ends: it cannot become the
	// command.
	s.stays, s.paused = true, paused
	if ws == "" {
		return release, nil
	}
	// Compared even when nothing was left to pause: a confined command
	// that ended between the decision and now may have changed them.
	var unseen []string
	for _, p := range s.plantedSince(ws) {
		if !slices.Contains(s.planted, p) {
			unseen = append(unseen, p)
		}
	}
	if len(unseen) > 0 {
		release()
		return noop, denial.New(plantedReason(unseen) + "; it was not run")
	}
	return release, nil
}
