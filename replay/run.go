package replay

import (
	"context"
	"runtime"
	"sync"
	"time"
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
	// Workers is the number of commands judged at once; 0 means one per
	// processor.
	Workers int
}

// Progress is how far the replay has got.
type Progress struct {
	Files, Commands, Asks int
	Done                  bool
}

// inFlight bounds the commands read but not yet tallied.
const inFlight = 512

// Run reads every transcript under o.Paths, judges each command, and sums
// the verdicts up. It reads files and nothing else: it never writes to a
// transcript or runs anything from one. Only ctx's end or o.Each's error
// stop it; a file or record that cannot be read is passed to o.Problem and
// skipped.
//
// The files are read in order by one goroutine, the commands judged by
// o.Workers at once, and everything found is passed on — tallied, and
// given to o.Each, o.Problem and o.Progress — by one goroutine, in the
// order it was read.
func Run(ctx context.Context, o Options) (Report, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r := &runner{ctx: ctx, ordered: make(chan *slot, inFlight), jobs: make(chan *slot, inFlight)}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for s := range r.jobs {
				s.v = o.Judge.Evaluate(s.c)
				close(s.ready)
			}
		})
	}
	a := &aggregator{o: o, tally: NewTally(), every: o.ProgressEvery, cancel: cancel}
	if a.every <= 0 {
		a.every = 200 * time.Millisecond
	}
	a.next = time.Now().Add(a.every)
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.consume(r.ordered)
	}()
	err := Files(ctx, o.Paths, r.Problem, func(name string) error {
		r.put(&slot{kind: slotFile})
		return ReadFile(ctx, name, r)
	})
	close(r.jobs)
	close(r.ordered)
	wg.Wait()
	<-done
	if cause := context.Cause(ctx); cause != nil && a.err != nil {
		err = a.err // o.Each's error, which ended the reading
	}
	if o.Progress != nil && a.err == nil {
		a.progress.Done = true
		o.Progress(a.progress)
	}
	if err != nil {
		return Report{}, err
	}
	return a.tally.Report(), nil
}

// slot is one thing found, in reading order.
type slot struct {
	kind  int
	c     Command
	v     Verdict
	p     Problem
	why   string
	ready chan struct{} // closed once v is judged
}

const (
	slotCommand = iota
	slotProblem
	slotSkipped
	slotFile
)

// runner is the Sink the readers report to: it hands commands to the
// workers and everything to the aggregator, in order.
type runner struct {
	ctx     context.Context
	ordered chan *slot
	jobs    chan *slot
}

func (r *runner) put(s *slot) {
	select {
	case r.ordered <- s:
	case <-r.ctx.Done():
	}
}

func (r *runner) Command(c Command) error {
	if err := r.ctx.Err(); err != nil {
		return context.Cause(r.ctx)
	}
	s := &slot{kind: slotCommand, c: c, ready: make(chan struct{})}
	select {
	case r.ordered <- s:
	case <-r.ctx.Done():
		return context.Cause(r.ctx)
	}
	r.jobs <- s // the aggregator waits for it: it must be judged
	return nil
}

func (r *runner) Problem(p Problem) { r.put(&slot{kind: slotProblem, p: p}) }

func (r *runner) Skipped(c Command, why string) { r.put(&slot{kind: slotSkipped, c: c, why: why}) }

// aggregator passes on what was found, in reading order.
type aggregator struct {
	o        Options
	tally    *Tally
	progress Progress
	every    time.Duration
	next     time.Time
	cancel   context.CancelCauseFunc
	err      error
}

func (a *aggregator) consume(ordered <-chan *slot) {
	for s := range ordered {
		switch s.kind {
		case slotFile:
			a.tally.File()
			a.progress.Files++
		case slotProblem:
			a.tally.Problem()
			if a.o.Problem != nil && a.err == nil {
				a.o.Problem(s.p)
			}
		case slotSkipped:
			a.tally.Skipped(s.why)
		case slotCommand:
			<-s.ready
			a.command(s.c, s.v)
		}
	}
}

func (a *aggregator) command(c Command, v Verdict) {
	if a.err != nil {
		return
	}
	a.tally.Add(c, v)
	a.progress.Commands++
	if asks(v.Decision) {
		a.progress.Asks++
	}
	if a.o.Progress != nil && a.progress.Commands%256 == 0 {
		if now := time.Now(); now.After(a.next) {
			a.next = now.Add(a.every)
			a.o.Progress(a.progress)
		}
	}
	if a.o.Each != nil {
		if err := a.o.Each(c, v); err != nil {
			a.err = err
			a.cancel(err)
		}
	}
}
