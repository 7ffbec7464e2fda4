package replay

import (
	"context"
	"time"

	"github.com/execgate/execgate/policy"
)

// Options say what to replay and where what it finds goes.
type Options struct {
	// Paths are the transcripts and directories to read (see Files).
	Paths []string
	Judge *Judge
	// Problem receives each record or file that could not be read.
	Problem func(Problem)
	// Each, when set, receives every command with its verdict, in order.
	Each func(Command, Verdict) error
	// Progress, when set, is called now and then while a long history is
	// read, and once at the end.
	Progress func(Progress)
	// ProgressEvery is how often Progress is called; 0 means 200ms.
	ProgressEvery time.Duration
}

// Progress is how far the replay has got.
type Progress struct {
	Files, Commands, Asks int
	Done                  bool
}

// Run reads every transcript under o.Paths, judges each command, and sums
// the verdicts up. It reads files and nothing else: it never writes to a
// transcript or runs anything from one. Only ctx's end or o.Each's error
// stop it; a file or record that cannot be read is passed to o.Problem and
// skipped.
func Run(ctx context.Context, o Options) (Report, error) {
	r := &runner{o: o, tally: NewTally(o.Judge.Engine), every: o.ProgressEvery}
	if r.every <= 0 {
		r.every = 200 * time.Millisecond
	}
	r.next = time.Now().Add(r.every)
	err := Files(ctx, o.Paths, r.Problem, func(name string) error {
		r.tally.File()
		r.progress.Files++
		return ReadFile(ctx, name, r)
	})
	if o.Progress != nil {
		r.progress.Done = true
		o.Progress(r.progress)
	}
	if err != nil {
		return Report{}, err
	}
	return r.tally.Report(), nil
}

// runner is the Sink the readers report to.
type runner struct {
	o        Options
	tally    *Tally
	progress Progress
	every    time.Duration
	next     time.Time
}

func (r *runner) Command(c Command) error {
	v := r.o.Judge.Evaluate(c)
	r.tally.Add(c, v)
	r.progress.Commands++
	if v.Decision == policy.AskHuman {
		r.progress.Asks++
	}
	if r.o.Progress != nil && r.progress.Commands%256 == 0 {
		if now := time.Now(); now.After(r.next) {
			r.next = now.Add(r.every)
			r.o.Progress(r.progress)
		}
	}
	if r.o.Each != nil {
		return r.o.Each(c, v)
	}
	return nil
}

func (r *runner) Problem(p Problem) {
	r.tally.Problem()
	if r.o.Problem != nil {
		r.o.Problem(p)
	}
}

func (r *runner) Skipped(c Command, why string) { r.tally.Skipped(why) }
