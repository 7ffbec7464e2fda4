package interp

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// The two captured streams, used as indexes.
const (
	stdout = 0
	stderr = 1
)

// capper merges the command's stdout and stderr into one byte budget.
//
// Every chunk read from either pipe is handled under one lock in the order it
// arrived, so the caller sees the streams interleaved as closely as two pipes
// allow, while stdout bytes still go to the caller's stdout and stderr bytes
// to its stderr. With a cap of max bytes and a tail of t bytes:
//
//   - combined offsets [0, max-t) (the head) are written as they arrive;
//   - later bytes are held in a ring of the last t bytes, because until the
//     output ends nobody knows whether they fit under the cap;
//   - at the end, if the output fits, the held bytes are written and the
//     caller got exactly the command's bytes; if not, one marker line and then
//     the last t bytes are written. The marker starts with a newline when its
//     stream did not end with one, so that it is always a line of its own.
//
// Memory is the ring (about 2t), the read buffers and at most eagerSpill bytes
// held for the spill file, whatever the output size.
type capper struct {
	mu    sync.Mutex
	out   [2]io.Writer
	werr  [2]error // first write error per stream; later bytes for it are dropped
	head  int64    // end of the head; -1 when output is not capped
	max   int64
	total int64
	tail  ring
	omit  [2]int64 // bytes of each stream that fell between head and tail
	wrote [2]bool  // whether anything reached each stream
	last  [2]byte  // last byte that reached each stream
	spill *spill
	log   *slog.Logger
}

// newCapper returns a capper that writes to out. limit 0 disables capping;
// the ring then still keeps the last tail bytes for Result.Tail.
func newCapper(out [2]io.Writer, limit, tail int64, sp *spill, log *slog.Logger) *capper {
	c := &capper{out: out, head: -1, max: limit, spill: sp, log: log}
	if limit > 0 {
		c.head = limit - tail
	}
	c.tail.size = int(tail)
	for i, w := range c.out {
		if w == nil {
			c.out[i] = io.Discard
		}
	}
	return c
}

// write takes one chunk the command wrote to stream s. It returns the error
// that stopped delivery to that stream, if any, so that the reader can close
// its pipe and the command sees EPIPE as it would have under bash.
func (c *capper) write(s int, p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	off := c.total
	c.total += int64(len(p))
	c.spill.write(p, c.capped() && c.total > c.max)
	if !c.capped() {
		c.deliver(s, p)
	} else if off < c.head {
		c.deliver(s, p[:min(int64(len(p)), c.head-off)])
	}
	c.tail.push(s, p, c.dropped)
	return c.werr[s]
}

func (c *capper) capped() bool { return c.head >= 0 }

// dropped records that n bytes of stream s at combined offset off left the
// ring; those beyond the head are omitted from what the caller receives.
func (c *capper) dropped(s int, off, n int64) {
	if !c.capped() {
		return
	}
	if from := max(off, c.head); from < off+n {
		c.omit[s] += off + n - from
	}
}

func (c *capper) deliver(s int, p []byte) {
	if len(p) == 0 || c.werr[s] != nil {
		return
	}
	if _, err := c.out[s].Write(p); err != nil {
		c.werr[s] = err
		c.log.Debug("output not delivered", "stream", s, "err", err)
		return
	}
	c.wrote[s] = true
	c.last[s] = p[len(p)-1]
}

// finish writes what the ring still holds (after the marker line if the
// output was cut), settles the spill file and fills in the output fields of r.
// It must be called once, after every write.
func (c *capper) finish(r *Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.Bytes = c.total
	r.Tail = c.tail.bytes()
	cut := c.capped() && c.total > c.max
	if !cut {
		c.spill.discard()
		if c.capped() {
			c.tail.each(c.head, c.deliver)
		}
		return
	}
	r.Omitted = c.omit[stdout] + c.omit[stderr]
	path, complete := c.spill.keep()
	r.SpillPath = path
	// The marker goes to a stream that actually lost bytes, preferring
	// stdout: an agent that reads only stdout must learn that its output was
	// cut, and one that reads only stderr must not be told about stdout.
	ms := stdout
	if c.omit[stdout] == 0 {
		ms = stderr
	}
	m := marker(r.Omitted, path, complete, c.spill.size())
	if c.wrote[ms] && c.last[ms] != '\n' {
		m = "\n" + m
	}
	c.deliver(ms, []byte(m))
	c.tail.each(c.head, c.deliver)
}

// marker is the line that stands for the omitted bytes.
func marker(omitted int64, path string, complete bool, spilled int64) string {
	switch {
	case path == "":
		return fmt.Sprintf("… [execgate: %d bytes omitted; full output not saved] …\n", omitted)
	case complete:
		return fmt.Sprintf("… [execgate: %d bytes omitted; full output: %s] …\n", omitted, path)
	default:
		return fmt.Sprintf("… [execgate: %d bytes omitted; first %d bytes of output: %s] …\n", omitted, spilled, path)
	}
}

// ring keeps the last size bytes of the combined output together with the
// stream each byte came from. Bytes are appended to buf and the live window
// slides forward; the buffer is compacted once the dead prefix is larger
// than the window, so it never exceeds about twice the window plus one chunk.
type ring struct {
	size  int
	buf   []byte // live bytes are buf[off:]
	off   int
	runs  []run // live runs are runs[roff:], covering buf[off:] in order
	roff  int
	start int64 // combined offset of buf[off]
}

// run is a stretch of n consecutive bytes from one stream.
type run struct{ stream, n int }

// push appends p, from stream s, and calls drop for every stretch of bytes
// that leaves the window.
func (r *ring) push(s int, p []byte, drop func(s int, off, n int64)) {
	if len(p) >= r.size {
		// Everything live and all but the last size bytes of p fall out;
		// skip copying them.
		r.evict(len(r.buf)-r.off, drop)
		if k := len(p) - r.size; k > 0 {
			drop(s, r.start, int64(k))
			r.start += int64(k)
			p = p[k:]
		}
		r.buf, r.off, r.runs, r.roff = r.buf[:0], 0, r.runs[:0], 0
	}
	if len(p) == 0 {
		return
	}
	r.buf = append(r.buf, p...)
	if n := len(r.runs); n > r.roff && r.runs[n-1].stream == s {
		r.runs[n-1].n += len(p)
	} else {
		r.runs = append(r.runs, run{s, len(p)})
	}
	if over := len(r.buf) - r.off - r.size; over > 0 {
		r.evict(over, drop)
	}
	if r.off > r.size {
		r.buf = r.buf[:copy(r.buf, r.buf[r.off:])]
		r.off = 0
	}
	if r.roff > len(r.runs)/2 {
		r.runs = r.runs[:copy(r.runs, r.runs[r.roff:])]
		r.roff = 0
	}
}

// evict removes n bytes from the front of the window.
func (r *ring) evict(n int, drop func(s int, off, n int64)) {
	for n > 0 {
		ru := &r.runs[r.roff]
		k := min(n, ru.n)
		drop(ru.stream, r.start, int64(k))
		r.start += int64(k)
		r.off += k
		ru.n -= k
		n -= k
		if ru.n == 0 {
			r.roff++
		}
	}
}

// each calls f, in order, for every live stretch at combined offset from or
// later.
func (r *ring) each(from int64, f func(s int, p []byte)) {
	off, i := r.start, r.off
	for _, ru := range r.runs[r.roff:] {
		p := r.buf[i : i+ru.n]
		if skip := from - off; skip > 0 {
			p = p[min(skip, int64(len(p))):]
		}
		f(ru.stream, p)
		off += int64(ru.n)
		i += ru.n
	}
}

// bytes returns a copy of the live window.
func (r *ring) bytes() []byte {
	if len(r.buf) == r.off {
		return nil
	}
	return append([]byte(nil), r.buf[r.off:]...)
}
