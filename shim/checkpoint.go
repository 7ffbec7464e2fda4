package shim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/execgate/execgate/checkpoint"
	"github.com/execgate/execgate/internal/redact"
	"github.com/execgate/execgate/internal/state"
	"github.com/execgate/execgate/policy"
)

// checkpointHeap is the soft heap limit while a checkpoint is taken.
const checkpointHeap = 256 << 20

// checkpointWait bounds how long a command waits for another execgate
// checkpointing the same workspace.
const checkpointWait = 10 * time.Second

// checkpointFirst records the workspace right before an allowed command
// that may write in it starts, so that `execgate undo` can take back what
// it did; a command proven read-only pays nothing. When no checkpoint can
// be taken, the command is not let through silently: a person is asked,
// told that it could not be undone (fail closed). It returns true with an
// exit status when the command must not run.
func (s *session) checkpointFirst(ctx context.Context, req policy.Request, res policy.Result, configPath string) (int, bool) {
	err := s.checkpointIfWrites(ctx, req, res)
	if err == nil && s.ev.DecidedBy == ByConfined {
		// Unasked only because the checkpoint keeps what it deletes.
		err = s.scratchKept()
	}
	if err == nil {
		return 0, false
	}
	res = withoutCheckpoint(res, err)
	v := s.decide(ctx, s.ev.ID, req, res, configPath)
	if v.allow {
		v.stamp(&s.ev)
		return 0, false
	}
	ev := s.ev
	ev.Event, ev.Message, ev.Decision = EventDenied, v.message, string(policy.Deny)
	v.stamp(&ev)
	s.record(ev)
	fmt.Fprintln(s.o.Stderr, v.message)
	return ExitDenied, true
}

// checkpointIfWrites takes a checkpoint of req's workspace when the
// command may write in it; a read-only command, or one outside any
// workspace, pays nothing.
func (s *session) checkpointIfWrites(ctx context.Context, req policy.Request, res policy.Result) error {
	if !res.MayWrite() {
		return nil
	}
	root, _ := checkpoint.Workspace(req.Cwd)
	if req.Cwd != "" && s.engine.NotAWorkspace(req, root) {
		// /, a home, /tmp: no workspace, so nothing there is granted as
		// one (writes ask on their own), and copying all of it would
		// copy the home's secrets into the state directory.
		return nil
	}
	if _, err := os.Lstat(root); req.Cwd != "" && errors.Is(err, fs.ErrNotExist) {
		// A hook judges where the agent says it will run: a directory
		// that does not exist holds nothing to take back.
		return nil
	}
	err := s.takeCheckpoint(ctx, req.Cwd)
	switch {
	case err == nil:
		s.checkpointed = root
	case s.coveredByOuterCheckpoint(root, err):
		// The outer checkpoint covers what this one runs too: said on
		// to a shim nested deeper (pyenv's script, then pyenv's own).
		s.checkpointed = filepath.Clean(s.getenv(checkpointedEnv))
		s.log.Debug("checkpoint: inside a confined command whose workspace was checkpointed before it started", "workspace", root)
		return nil
	default:
		s.warnf("checkpoint: %v", err)
	}
	return err
}

// withoutCheckpoint turns res into a question saying that no checkpoint
// could be taken.
func withoutCheckpoint(res policy.Result, err error) policy.Result {
	res.Decision = policy.AskHuman
	res.Reasons = append([]string{fmt.Sprintf("no checkpoint could be taken, so execgate undo could not take it back (%v)", err)}, res.Reasons...)
	return res
}

// checkpointForAgent is checkpointFirst for Judge (the hooks): the agent
// runs the command itself once the hook answers, so the checkpoint is
// taken before the answer lets it — on an allow, and on a question left to
// the agent's own prompt (deferring), whose yes runs it too. When none can
// be taken, an allow becomes a question to a person (fail closed, as in
// the shim), and a deferred question carries the reason.
func (s *session) checkpointForAgent(ctx context.Context, req policy.Request, res policy.Result, configPath string, v verdict, deferring bool) (verdict, policy.Result) {
	if !v.allow && !deferring {
		return v, res
	}
	err := s.checkpointIfWrites(ctx, req, res)
	if err == nil {
		return v, res
	}
	res = withoutCheckpoint(res, err)
	if deferring {
		return v, res
	}
	return s.decide(ctx, s.ev.ID, req, res, configPath), res
}

func (s *session) takeCheckpoint(ctx context.Context, cwd string) error {
	if cwd == "" {
		return errors.New("the current directory is unknown")
	}
	dir, err := state.Dir(s.getenv)
	if err != nil {
		return err
	}
	st, err := checkpoint.Open(dir, cwd, checkpoint.Limits{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, checkpointWait)
	defer cancel()
	// A checkpoint allocates a few times the workspace's listing (12 MB
	// for 10,000 files) in a process whose heap was nearly empty: the
	// collector would run several times for garbage the process is about
	// to drop anyway. Fewer cycles cut its CPU by about an eighth
	// (docs/BENCHMARKS.md); the soft limit keeps a large workspace's
	// listing from growing the heap fivefold.
	if debug.SetMemoryLimit(-1) > checkpointHeap {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(checkpointHeap))
	}
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	// Redacted as the audit log's copy is.
	// The scratch files it deletes unasked are looked up in the listing
	// itself: the walk's ignore rules may leave out a file git lists as
	// untracked, and a file left out is not counted as not kept.
	info, unkept, err := st.TakeKeeping(ctx, redact.String(s.ev.Command), s.ev.ID, s.scratch)
	if err == nil {
		s.taken, s.unkept = info, unkept
		// And a scratch file must be new to the workspace, not only to
		// its inode: one the checkpoints held ScratchAge ago is older
		// than its birth time says (saved by rename, stashed and
		// popped).
		s.older = st.HeldAt(s.scratch, s.now().Add(-policy.ScratchAge))
	}
	return err
}

// scratchKept says why the scratch files a command runs confined to
// delete (session.scratch) would not come back: no checkpoint of this
// shim's own was taken before it, or the one taken did not keep every
// file of the workspace, or left one of them out. nil when they would.
func (s *session) scratchKept() error {
	switch {
	case len(s.scratch) == 0:
		return nil
	case s.taken == nil && s.checkpointed != "":
		// Inside a confined command, checkpointed before it started
		// (coveredByOuterCheckpoint): undoing that command takes this
		// back too, and its code could delete the file unasked anyway.
		return nil
	case s.taken == nil:
		return fmt.Errorf("it deletes %s, which git does not hold, and no checkpoint of its own was taken", s.scratch[0])
	case s.taken.NotKept > 0:
		return fmt.Errorf("it deletes %s, which git does not hold, and the checkpoint could not keep %d of the workspace's files", s.scratch[0], s.taken.NotKept)
	case len(s.older) > 0:
		return fmt.Errorf("it deletes %s, which git does not hold, and which the workspace held %s ago already (its checkpoint then says so)", s.older[0], policy.ScratchAge)
	case len(s.unkept) > 0:
		return fmt.Errorf("it deletes %s, which git does not hold, and the checkpoint did not keep it (left out with what its ignore rules leave out)", s.unkept[0])
	}
	return nil
}
