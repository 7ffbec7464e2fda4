package hub

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/user"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execgate/execgate/internal/display"
	"golang.org/x/time/rate"
)

// errTooLarge reports a line over MaxLine.
var errTooLarge = errors.New("line too long")

// readLine reads one line of at most max bytes, newline included, without
// ever buffering more than that. A final line without a newline is
// returned with the reader's error.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, errTooLarge
		}
		if err == nil && line == nil {
			// The common case: the whole line was in the buffer. Copy it,
			// since the next read reuses the buffer.
			return slices.Clone(chunk), nil
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// conn is one client connection on the hub side: a reader goroutine that
// handles frames in order, and a writer goroutine draining a bounded queue
// so that nothing the hub does ever waits on a slow peer.
type conn struct {
	srv     *Server
	nc      net.Conn
	out     outQueue
	limiter *rate.Limiter

	// Set once by the hello, before any handler runs.
	peer peer
	role Role
	name string
	kind string // approver kind from the hello (KindTUI …), "" when not said
	host string // where the person is, from the hello; "" for this host
	// inKey, set by the hello of a client that proved the token, is the
	// key every later frame of that client must be sealed with; inSeq
	// counts them. Only the reader uses them.
	inKey []byte
	inSeq uint64

	// Set by the server before serve runs: what the connection is charged
	// to (its uid's connection share, or the pool of refusals).
	charged, refused bool

	// Guarded by srv.mu.
	pending map[string]*pending // approvals this requester waits on
	running map[string]struct{} // commands reported started, not finished

	// lastFrame is when the peer last sent a line (UnixNano), for the
	// idle check; idle is the timer that makes it, nil before the hello
	// and after the connection ended.
	lastFrame atomic.Int64
	idleMu    sync.Mutex
	idle      *time.Timer

	killOnce sync.Once
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv:     s,
		nc:      nc,
		limiter: rate.NewLimiter(frameRate, frameBurst),
		pending: map[string]*pending{},
		running: map[string]struct{}{},
	}
	c.out.init()
	return c
}

// kill closes the connection at once; the reader then cleans up.
func (c *conn) kill() {
	c.killOnce.Do(func() {
		c.out.close()
		c.nc.Close()
	})
}

// serve runs the connection until it ends and then forgets it. A peer uid
// below zero means the connection was refused and is only told why.
func (c *conn) serve(ctx context.Context, p peer, auth authConfig) {
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	defer func() {
		if r := recover(); r != nil {
			// A bug, not a client's doing: log it and drop only this
			// connection. Handlers are written not to need this.
			c.srv.log.Error("connection handler panicked", "panic", r, "stack", string(debug.Stack()))
		}
		c.stopIdleTimer()
		c.out.finish()
		select {
		case <-writerDone:
		case <-time.After(time.Second):
		}
		c.kill()
		<-writerDone
		c.srv.dropConn(c)
	}()
	if p.uid < 0 || c.out.isFinished() {
		return // already refused
	}
	c.peer = p
	c.readLoop(ctx, auth)
}

// readLoop reads and handles frames until the peer goes away or breaks a
// rule that ends the connection.
func (c *conn) readLoop(ctx context.Context, auth authConfig) {
	c.nc.SetReadDeadline(time.Now().Add(c.srv.limits.HelloTimeout))
	// A small buffer: a hub may hold a thousand idle shims. readLine
	// gathers longer lines up to MaxLine.
	r := bufio.NewReaderSize(c.nc, 4<<10)
	for {
		line, err := readLine(r, MaxLine)
		c.lastFrame.Store(time.Now().UnixNano())
		if errors.Is(err, errTooLarge) {
			c.fatal("", ErrCodeTooLarge, fmt.Sprintf("line longer than %d bytes; closing", MaxLine))
			return
		}
		if err != nil {
			if c.role == "" && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.fatal("", ErrCodeAuth, "no hello in time")
			}
			return
		}
		if !c.handleLine(ctx, line, auth) {
			return
		}
	}
}

// handleLine handles one line and reports whether the connection goes on.
func (c *conn) handleLine(ctx context.Context, line []byte, auth authConfig) bool {
	if len(trimSpace(line)) == 0 {
		return true
	}
	if c.inKey != nil {
		body, err := openSealed(line, c.inKey, dirClient, c.inSeq+1)
		if err != nil {
			c.srv.log.Warn("unauthenticated frame; closing", "role", c.role, "name", c.name, "pid", c.peer.pid, "err", err)
			c.fatal("", ErrCodeAuth, "frame not authenticated ("+err.Error()+"): every frame after the hello must be sealed with the connection's key; closing")
			return false
		}
		c.inSeq++
		line = body
	}
	var f Frame
	decErr := json.Unmarshal(line, &f)
	if !c.limiter.Allow() {
		c.replyErr(f.ID, ErrCodeRateLimit, fmt.Sprintf("more than %g frames a second; slow down", float64(c.limiter.Limit())))
		return true
	}
	if decErr != nil {
		if c.role == "" {
			c.fatal(f.ID, ErrCodeAuth, "the first frame must be a hello")
			return false
		}
		c.replyErr(f.ID, ErrCodeBadRequest, "malformed frame: "+oneLine(decErr.Error()))
		return true
	}
	if c.role == "" {
		return c.hello(ctx, &f, auth)
	}
	spec, ok := methods[f.Method]
	switch {
	case f.Method == MethodHello:
		c.replyErr(f.ID, ErrCodeBadRequest, "hello already done")
		return true
	case !ok:
		c.replyErr(f.ID, ErrCodeBadRequest, fmt.Sprintf("unknown method %q", truncate(f.Method)))
		return true
	case !slices.Contains(spec.roles, c.role):
		c.replyErr(f.ID, ErrCodeForbidden, fmt.Sprintf("a %s may not call %s", c.role, f.Method))
		return true
	}
	result, err := spec.fn(ctx, c, &f)
	switch {
	case errors.Is(err, errDeferred):
	case err != nil:
		var eb *ErrorBody
		if !errors.As(err, &eb) {
			c.srv.log.Error("handler failed", "method", f.Method, "err", err)
			eb = errBody(ErrCodeInternal, oneLine(err.Error()))
		}
		c.replyErr(f.ID, eb.Code, eb.Message)
	case f.ID != "":
		// A frame without an id is a notification: no success answer.
		c.reply(f.ID, result)
	}
	return true
}

// hello authenticates the connection; see HelloParams.
func (c *conn) hello(ctx context.Context, f *Frame, auth authConfig) bool {
	if f.Method != MethodHello {
		c.fatal(f.ID, ErrCodeAuth, "the first frame must be a hello")
		return false
	}
	var p HelloParams
	if err := decodeParams(f.Params, &p); err != nil {
		c.fatal(f.ID, ErrCodeAuth, "hello: "+err.Error())
		return false
	}
	if p.Version != ProtocolVersion {
		c.fatal(f.ID, ErrCodeVersion, fmt.Sprintf("protocol version %d not supported (the hub speaks %d)", p.Version, ProtocolVersion))
		return false
	}
	if p.Role != RoleRequester && p.Role != RoleApprover && p.Role != RoleWatcher {
		c.fatal(f.ID, ErrCodeAuth, fmt.Sprintf("unknown role %q", truncate(string(p.Role))))
		return false
	}
	if p.Kind != "" && !slices.Contains(approverKinds, p.Kind) {
		c.fatal(f.ID, ErrCodeBadRequest, fmt.Sprintf("hello: unknown kind %q (want tui, web or cli)", truncate(p.Kind)))
		return false
	}
	proved := c.peer.uid == c.srv.uid
	if proved {
		if auth.err != nil {
			c.fatal(f.ID, ErrCodeAuth, "the hub cannot read its configuration: "+oneLine(auth.err.Error()))
			return false
		}
		if why := verifyHello(&p, auth.token, c.srv.now(), &c.srv.nonces); why != "" {
			c.srv.log.Warn("hello refused", "why", why, "pid", c.peer.pid)
			c.fatal(f.ID, ErrCodeAuth, why)
			return false
		}
	} else if p.Role != RoleRequester {
		// A requester uid is let in on the kernel's word alone, so it may
		// only ask, never approve.
		c.fatal(f.ID, ErrCodeAuth, fmt.Sprintf("uid %d may only be a requester", c.peer.uid))
		return false
	}
	c.role = p.Role
	c.name = truncate(p.Name)
	c.kind, c.host = p.Kind, truncate(p.Host)
	if c.role != RoleRequester {
		// A fresh limiter starts with a full burst (only the reader uses it).
		c.limiter = rate.NewLimiter(approverRate, approverBurst)
	}
	c.nc.SetReadDeadline(time.Time{})
	c.startIdleTimer(auth)
	c.srv.mu.Lock()
	res := HelloResult{Version: ProtocolVersion, Role: p.Role, Approvers: c.srv.approversLocked()}
	c.srv.mu.Unlock()
	// The hub proves itself with the token whenever the client sent a
	// challenge it can answer: from this answer on, every frame it sends
	// is sealed. A requester uid without the token cannot check the seal
	// (the kernel vouches for the hub to it); a client that proved the
	// token must seal its own frames too.
	if auth.err == nil && auth.token != "" && nonceOK(p.Nonce) {
		res.HubNonce = randomHex(16)
		key := connKey(auth.token, p.Role, p.Nonce, res.HubNonce)
		c.out.sealWith(key)
		if proved {
			c.inKey = key
		}
	}
	c.srv.log.Debug("hello", "role", p.Role, "name", c.name, "uid", c.peer.uid, "pid", c.peer.pid)
	c.reply(f.ID, res)
	return true
}

// startIdleTimer arms the check that closes the connection once it has
// been idle for the idle timeout: see checkIdle.
func (c *conn) startIdleTimer(auth authConfig) {
	d := c.srv.idleTimeout(auth)
	c.idleMu.Lock()
	defer c.idleMu.Unlock()
	c.idle = time.AfterFunc(d, func() { c.checkIdle(d) })
}

func (c *conn) stopIdleTimer() {
	c.idleMu.Lock()
	defer c.idleMu.Unlock()
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
}

// rearmIdle makes the idle check come back after d, unless the
// connection ended meanwhile.
func (c *conn) rearmIdle(d time.Duration) {
	c.idleMu.Lock()
	defer c.idleMu.Unlock()
	if c.idle != nil {
		c.idle.Reset(d)
	}
}

// checkIdle closes the connection if it is idle: it sent nothing for d
// and has nothing outstanding. Waiting is not idleness when the wait is on
// the hub or on a command: an approval of its own pending, a subscription
// (an approver waiting for requests), or a command it reported started and
// not yet finished (a shim holds its connection while the command runs, to
// report the end). Otherwise the check comes back when d may have passed.
func (c *conn) checkIdle(d time.Duration) {
	quiet := time.Since(time.Unix(0, c.lastFrame.Load()))
	if quiet < d {
		c.rearmIdle(d - quiet)
		return
	}
	if c.busy() {
		c.rearmIdle(d)
		return
	}
	c.srv.log.Info("closing idle connection", "role", c.role, "name", c.name, "uid", c.peer.uid, "pid", c.peer.pid, "idle", d)
	c.fatal("", ErrCodeIdle, fmt.Sprintf("nothing sent for %v and nothing outstanding; closing (connect again when needed)", d))
	// Wake the reader, which then ends the connection.
	c.nc.SetReadDeadline(time.Now())
}

// busy reports whether the connection waits on the hub or on a command.
func (c *conn) busy() bool {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	_, subscribed := c.srv.subs[c]
	return subscribed || len(c.pending) > 0 || len(c.running) > 0
}

// approver says who this connection is, for an approval it decides: uid
// and user from the kernel, kind and host from its hello.
func (c *conn) approver() *ApproverInfo {
	host := c.host
	if host == "" {
		host = c.srv.hostname
	}
	return &ApproverInfo{Uid: c.peer.uid, User: userName(c.peer.uid), Kind: c.kind, Host: host, Name: c.name}
}

// userName is uid's login name, or "" when the system does not know it.
func userName(uid int) string {
	if uid < 0 {
		return ""
	}
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return ""
	}
	return u.Username
}

// label names the connection in resolvedBy and setBy.
func (c *conn) label() string {
	if c.name != "" {
		return c.name
	}
	return fmt.Sprintf("%s pid %d", c.role, c.peer.pid)
}

// reply queues a success answer.
func (c *conn) reply(id string, result any) {
	raw, err := marshal(result)
	if err != nil {
		c.srv.log.Error("encode result", "err", err)
		c.replyErr(id, ErrCodeInternal, "cannot encode the result")
		return
	}
	ok := true
	c.send(Frame{ID: id, OK: &ok, Result: raw})
}

// replyErr queues an error answer.
func (c *conn) replyErr(id, code, msg string) {
	ok := false
	c.send(Frame{ID: id, OK: &ok, Error: &ErrorBody{Code: code, Message: msg}})
}

// fatal sends an error and ends the connection once it is written.
func (c *conn) fatal(id, code, msg string) {
	c.replyErr(id, code, msg)
	c.out.finish()
}

// send queues a frame. One that would exceed the line limit is never
// sent: an answer becomes a TOO_LARGE error (without the id, if the id is
// what makes it long), anything else is dropped and logged. The handlers
// keep within the limit (see size.go); this is the last line.
func (c *conn) send(f Frame) {
	b, err := marshal(f)
	if err != nil {
		c.srv.log.Error("encode frame", "err", err)
		return
	}
	if !fits(len(b)) {
		c.srv.log.Error("frame over the line limit not sent", "bytes", len(b), "event", f.Event, "role", c.role, "name", c.name)
		if f.OK == nil {
			return
		}
		id := f.ID
		if len(id) > maxClientID {
			id = ""
		}
		ok := false
		b, err = marshal(Frame{ID: id, OK: &ok, Error: &ErrorBody{Code: ErrCodeTooLarge,
			Message: fmt.Sprintf("the answer would be %d bytes, over the %d-byte line limit", len(b), MaxLine)}})
		if err != nil {
			return
		}
	}
	c.sendFrame(b, nil)
}

// sendFrame queues an encoded frame (one JSON object, no newline; the
// queue seals it), with its SHA-256 when the caller has it already; a
// peer that lets its queue overflow is disconnected.
func (c *conn) sendFrame(b []byte, digest *[sha256.Size]byte) {
	if !c.out.push(b, digest) {
		c.srv.log.Warn("peer fell behind; disconnecting", "role", c.role, "name", c.name, "pid", c.peer.pid)
		c.kill()
	}
}

// writeLoop writes queued frames until the queue is closed, or finished
// and drained. A batch goes out in one writev, with no buffer of its own
// (a hub may hold a thousand idle connections).
func (c *conn) writeLoop() {
	for {
		batch, ok := c.out.wait()
		if !ok {
			return
		}
		c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
		bufs := net.Buffers(batch)
		if _, err := bufs.WriteTo(c.nc); err != nil {
			c.kill()
			return
		}
	}
}

// outQueue is a bounded queue of encoded frames for one peer. It seals
// them, once the hello has given the connection a key, in the order they
// are queued, which is the order they are written.
type outQueue struct {
	mu sync.Mutex
	// pieces are written in order: each frame is its body, shared with
	// the other subscribers of an event, then its own seal or newline.
	pieces   [][]byte
	lines    int
	bytes    int
	key      []byte // nil: frames go unsealed (before the hello)
	seq      uint64 // the last sealed frame's number
	signal   chan struct{}
	closed   bool // nothing more is written
	finished bool // nothing more is queued; drain, then stop
}

// newline ends an unsealed frame.
var newline = []byte{'\n'}

func (q *outQueue) init() { q.signal = make(chan struct{}, 1) }

// sealWith makes every frame queued from now on sealed with key.
func (q *outQueue) sealWith(key []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.key = key
}

// push queues body (one JSON object, no newline), sealed when the queue
// has a key (digest is its SHA-256 when the caller has it, else nil);
// false when the queue is over its bounds (the frame is dropped, and the
// caller disconnects the peer).
func (q *outQueue) push(body []byte, digest *[sha256.Size]byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.finished {
		return true // the connection is ending anyway
	}
	if q.lines >= maxQueuedFrames || q.bytes+len(body)+sealSuffixMax > maxQueuedBytes {
		return false
	}
	if q.key == nil || len(body) < 2 || body[len(body)-1] != '}' {
		q.pieces = append(q.pieces, body, newline)
		q.bytes += len(body) + 1
	} else {
		if digest == nil {
			d := sha256.Sum256(body)
			digest = &d
		}
		q.seq++
		suffix := sealSuffix(q.key, dirHub, q.seq, digest)
		q.pieces = append(q.pieces, body[:len(body)-1], suffix)
		q.bytes += len(body) - 1 + len(suffix)
	}
	q.lines++
	q.wake()
	return true
}

func (q *outQueue) wake() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// wait returns the next batch of frames; ok is false when the writer
// should stop.
func (q *outQueue) wait() (batch [][]byte, ok bool) {
	for {
		q.mu.Lock()
		switch {
		case q.closed:
			q.mu.Unlock()
			return nil, false
		case len(q.pieces) > 0:
			batch, q.pieces, q.bytes, q.lines = q.pieces, nil, 0, 0
			q.mu.Unlock()
			return batch, true
		case q.finished:
			q.mu.Unlock()
			return nil, false
		}
		q.mu.Unlock()
		<-q.signal
	}
}

// finish stops queueing; the writer drains what is queued and stops.
func (q *outQueue) finish() {
	q.mu.Lock()
	q.finished = true
	q.wake()
	q.mu.Unlock()
}

func (q *outQueue) isFinished() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.finished
}

// close stops the writer without draining.
func (q *outQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.pieces, q.bytes, q.lines = nil, 0, 0
	q.wake()
	q.mu.Unlock()
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// truncate shortens client-supplied text echoed in messages and labels.
func truncate(s string) string { return display.Shorten(s, maxNameLen) }

// oneLine keeps a message on one line.
func oneLine(s string) string { return display.Flatten(s, 0) }

// decodeParams decodes a frame's params; absent params are an empty object.
func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("bad params: %s", oneLine(err.Error()))
	}
	return nil
}
