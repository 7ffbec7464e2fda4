package hub

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrNoHub reports that no hub is running: its socket is missing or nobody
// listens on it. Dial wraps it.
var ErrNoHub = errors.New("hub: not running")

// Client-side limits.
const (
	// dialTimeout bounds connect and hello when ctx has no deadline.
	dialTimeout = 5 * time.Second
	// reportTimeout bounds writing a fire-and-forget report.
	reportTimeout = time.Second
	// maxQueuedEvents bounds the events a subscriber has not taken yet;
	// past it the client drops the connection rather than grow forever.
	maxQueuedEvents = 1 << 16
)

// DialOptions say where and as whom to connect.
type DialOptions struct {
	// Socket is the hub's socket path (see SocketPath).
	Socket string
	// Token is socket.token from the configuration. Leave it empty for a
	// requester running as a uid listed in socket.requesterUids (the hub
	// then relies on the kernel's word for who connects).
	Token string
	// Role defaults to RoleRequester.
	Role Role
	// Name labels the client in resolvedBy and the hub's log.
	Name string
	// Kind is an approver's surface (KindTUI, KindWeb, KindCLI), recorded
	// with each decision it makes; Host where its person is, if not here.
	Kind, Host string
}

// closingCodes are the errors after which the hub closes the connection;
// sent without an id, they say why the connection ended.
var closingCodes = []string{ErrCodeAuth, ErrCodeTooLarge, ErrCodeVersion, ErrCodeBusy, ErrCodeIdle}

// Client is one connection to the hub. It is safe for concurrent use and
// may have many calls in flight. When the connection drops (the hub died)
// every pending call fails at once and Done is closed.
type Client struct {
	nc    net.Conn
	hello HelloResult
	// key seals and checks every frame after the hello, when the hub was
	// checked (see Dial); nil when the kernel vouches for it instead.
	key  []byte
	rseq uint64 // the hub's last frame number; the reader's alone

	wmu  sync.Mutex // serialises writes
	wseq uint64     // our last frame number, under wmu

	nextID     atomic.Uint64
	mu         sync.Mutex
	calls      map[string]chan Frame
	subs       map[*subscription]struct{}
	err        error // why the connection ended; set before done closes
	done       chan struct{}
	readerDone chan struct{}
}

// Dial connects to the hub and says hello. When nothing listens on the
// socket the error wraps ErrNoHub; a refused hello is an *ErrorBody.
//
// The hub must prove itself too. When the process listening on the
// socket runs as our own user (or the system does not say who it is), it
// must answer the hello's challenge with the token, and seal every frame
// after it: anything else is an error wrapping ErrNotAuthentic, and so is
// a client without a token to check it by. When another user listens, the
// kernel vouches for it (a requester uid connecting to its owner's hub,
// through a directory SocketPath checked), and the client, which has no
// token of that hub, checks nothing more.
func Dial(ctx context.Context, o DialOptions) (*Client, error) {
	if o.Socket == "" {
		return nil, errors.New("hub: dial: no socket path")
	}
	if o.Role == "" {
		o.Role = RoleRequester
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, dialTimeout)
		defer cancel()
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", o.Socket)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w (socket %s)", ErrNoHub, o.Socket)
		}
		return nil, fmt.Errorf("hub: dial %s: %w", o.Socket, err)
	}
	check := checksHub(nc)
	if check && o.Token == "" {
		nc.Close()
		return nil, fmt.Errorf("hub: %s: %w: it runs as your own user, and your configuration has no socket.token to check it by; refusing it", o.Socket, ErrNotAuthentic)
	}
	c := &Client{
		nc:         nc,
		calls:      map[string]chan Frame{},
		subs:       map[*subscription]struct{}{},
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	p := newHelloParams(o.Token, o.Role, o.Name, time.Now())
	p.Kind, p.Host = o.Kind, o.Host
	r := bufio.NewReader(nc)
	token := ""
	if check {
		token = o.Token
	}
	if err := c.sayHello(ctx, r, p, token); err != nil {
		nc.Close()
		return nil, fmt.Errorf("hub: hello on %s: %w", o.Socket, err)
	}
	go c.readLoop(r)
	return c, nil
}

// checksHub reports whether the hub on nc must prove the token: when the
// process listening runs as our own user, or the kernel does not say who
// it is. Only our own user (or root) can put a socket in a directory
// SocketPath accepts; another user there is the hub's owner, seen from a
// requester uid.
func checksHub(nc net.Conn) bool {
	p, err := peerOf(nc)
	return err != nil || p.uid == os.Geteuid()
}

// helloID is the id of the hello frame.
const helloID = "hello"

// sayHello sends the hello and reads its answer before anything else runs
// on the connection. With a token it checks the hub's proof: the answer
// must be sealed with the key derived from the token, both nonces and the
// role, and the key then seals and checks every later frame.
func (c *Client) sayHello(ctx context.Context, r *bufio.Reader, p HelloParams, token string) error {
	deadline, _ := ctx.Deadline()
	c.nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Now()) })
	err := c.hello1(r, p, token)
	if !stop() {
		return ctx.Err() // the deadline was cut short: the connection is spoilt
	}
	c.nc.SetDeadline(time.Time{})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

func (c *Client) hello1(r *bufio.Reader, p HelloParams, token string) error {
	b, err := encodeFrame(helloID, MethodHello, p)
	if err != nil {
		return err
	}
	if _, err := c.nc.Write(append(b, '\n')); err != nil {
		// The hub may have refused the connection before reading it.
		if eb := refusal(r); eb != nil {
			return eb
		}
		return fmt.Errorf("send: %w", err)
	}
	line, err := readLine(r, MaxLine)
	if err != nil {
		return fmt.Errorf("no answer: %w", err)
	}
	u, sealed := splitSeal(line)
	body := line
	if sealed {
		body = u.body
	}
	var f Frame
	if err := json.Unmarshal(body, &f); err != nil {
		return fmt.Errorf("%w: malformed answer: %v", ErrNotAuthentic, err)
	}
	if f.Error != nil {
		// A refusal needs no proof: it only ever stops us.
		return f.Error
	}
	if f.ID != helloID || f.OK == nil || !*f.OK {
		return fmt.Errorf("%w: the answer is not the hello's", ErrNotAuthentic)
	}
	if err := json.Unmarshal(f.Result, &c.hello); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if token == "" {
		return nil
	}
	switch {
	case !sealed:
		return fmt.Errorf("%w (its answer is not sealed with socket.token: not execgate's hub, or one older than this client, then restart it); refusing it", ErrNotAuthentic)
	case !nonceOK(c.hello.HubNonce):
		return fmt.Errorf("%w (no hub nonce in its answer); refusing it", ErrNotAuthentic)
	}
	key := connKey(token, p.Role, p.Nonce, c.hello.HubNonce)
	if err := u.check(key, dirHub, 1); err != nil {
		return fmt.Errorf("%w (its answer fails the check with socket.token: %v); refusing it", ErrNotAuthentic, err)
	}
	c.key, c.rseq = key, 1
	return nil
}

// refusal returns the error a hub sent before closing, if it sent one.
func refusal(r *bufio.Reader) *ErrorBody {
	line, _ := readLine(r, MaxLine)
	var f Frame
	if json.Unmarshal(line, &f) == nil && f.Error != nil {
		return f.Error
	}
	return nil
}

// Hello returns what the hub answered to the hello.
func (c *Client) Hello() HelloResult { return c.hello }

// ServerPid returns the pid of the process listening on the hub's socket,
// as the kernel says (0 where it does not say). Unlike Status's Pid it is
// not the hub's own word, and it is in this process's pid namespace: it is
// the one to signal. uid is that process's user.
func (c *Client) ServerPid() (pid, uid int, err error) {
	p, err := peerOf(c.nc)
	return p.pid, p.uid, err
}

// Done is closed when the connection is gone.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close ends the connection; pending calls fail.
func (c *Client) Close() error {
	c.nc.Close()
	<-c.readerDone
	return nil
}

// readLoop dispatches answers to calls and events to subscriptions until
// the connection ends, then fails whatever still waits.
func (c *Client) readLoop(r *bufio.Reader) {
	defer close(c.readerDone)
	var fatal error // an error the hub sent without an id before closing
	var err error
	for {
		var line []byte
		line, err = readLine(r, MaxLine)
		if err != nil {
			break
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		if c.key != nil {
			if line, err = openSealed(line, c.key, dirHub, c.rseq+1); err != nil {
				err = fmt.Errorf("%w: a frame failed its check (%v); dropping the connection", ErrNotAuthentic, err)
				break
			}
			c.rseq++
		}
		var f Frame
		if err = json.Unmarshal(line, &f); err != nil {
			err = fmt.Errorf("hub sent a malformed frame: %w", err)
			break
		}
		switch {
		case f.Event != "":
			c.deliverEvent(Event{Name: f.Event, Payload: f.Payload})
		case f.ID != "":
			c.mu.Lock()
			ch, ok := c.calls[f.ID]
			delete(c.calls, f.ID)
			c.mu.Unlock()
			if ok {
				ch <- f // buffered: never blocks
			}
		case f.Error != nil && slices.Contains(closingCodes, f.Error.Code):
			fatal = f.Error
		}
		// Other errors without an id answer notifications (a refused
		// report): nobody waits for them.
	}
	switch {
	case fatal != nil:
		err = fmt.Errorf("hub closed the connection: %w", fatal)
	default:
		err = fmt.Errorf("hub: connection lost: %w", err)
	}
	c.nc.Close()
	c.mu.Lock()
	c.err = err
	c.calls = nil
	subs := c.subs
	c.subs = nil
	c.mu.Unlock()
	close(c.done)
	for s := range subs {
		s.connGone()
	}
}

// Call sends one request and decodes its result into result (nil to
// discard it). An error answer is returned as *ErrorBody; a done ctx
// abandons the call (the hub's answer, if any, is dropped).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id := strconv.FormatUint(c.nextID.Add(1), 10)
	ch := make(chan Frame, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.calls[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		if c.calls != nil {
			delete(c.calls, id)
		}
		c.mu.Unlock()
	}
	b, err := encodeFrame(id, method, params)
	if err != nil {
		forget()
		return err
	}
	if err := c.write(ctx, b); err != nil {
		forget()
		return c.sendFailed(err)
	}
	select {
	case f := <-ch:
		return decodeAnswer(f, result)
	case <-ctx.Done():
		forget()
		return ctx.Err()
	case <-c.done:
		select {
		case f := <-ch:
			return decodeAnswer(f, result)
		default:
		}
		return c.err
	}
}

func decodeAnswer(f Frame, result any) error {
	if f.Error != nil {
		return f.Error
	}
	if f.OK == nil || !*f.OK {
		return errors.New("hub: answer without ok or error")
	}
	if result == nil || len(f.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(f.Result, result); err != nil {
		return fmt.Errorf("hub: decode result: %w", err)
	}
	return nil
}

// encodeFrame builds one frame, a JSON object without the newline; id ""
// makes it a notification. It leaves room for the seal.
func encodeFrame(id, method string, params any) ([]byte, error) {
	f := Frame{ID: id, Method: method}
	if params != nil {
		raw, err := marshal(params)
		if err != nil {
			return nil, fmt.Errorf("hub: encode %s params: %w", method, err)
		}
		f.Params = raw
	}
	b, err := marshal(f)
	if err != nil {
		return nil, fmt.Errorf("hub: encode %s: %w", method, err)
	}
	if len(b)+sealSuffixMax > MaxLine {
		return nil, fmt.Errorf("hub: %s: frame of %d bytes exceeds the %d-byte line limit", method, len(b)+sealSuffixMax, MaxLine)
	}
	return b, nil
}

// write sends one encoded frame (encodeFrame's), sealed when the hub was
// checked. A failed write means the connection is broken: the caller must
// call sendFailed.
func (c *Client) write(ctx context.Context, b []byte) error {
	deadline := time.Now().Add(writeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return c.err
	default:
	}
	if c.key != nil {
		c.wseq++
		b = seal(c.key, dirClient, c.wseq, b)
	} else {
		b = append(b, '\n')
	}
	c.nc.SetWriteDeadline(deadline)
	if _, err := c.nc.Write(b); err != nil {
		return fmt.Errorf("hub: send: %w", err)
	}
	return nil
}

// notify sends a frame without an id, expecting no answer.
func (c *Client) notify(ctx context.Context, method string, params any) error {
	b, err := encodeFrame("", method, params)
	if err != nil {
		return err
	}
	if err := c.write(ctx, b); err != nil {
		return c.sendFailed(err)
	}
	return nil
}

// sendFailed handles a failed write: the connection is broken. The hub
// may have said why before it closed (a refused hello), so the reader gets
// a moment to read that; then the connection is closed in any case.
func (c *Client) sendFailed(err error) error {
	select {
	case <-c.done:
	case <-time.After(100 * time.Millisecond):
	}
	c.nc.Close()
	<-c.done
	// Why the reader dropped the connection says more than the write
	// that found it closed: the hub's refusal, or a frame that failed
	// its check (a replayed one arrives before the next request).
	var eb *ErrorBody
	if errors.As(c.err, &eb) || errors.Is(c.err, ErrNotAuthentic) {
		return c.err
	}
	return err
}

// Request asks for an approval and waits for its answer. It gives the
// request an id when it has none, so that if ctx ends first it can
// withdraw it: approvers then see it go.
//
// A request too long for an approver to receive whole is fitted first
// (FitRequest): the command stays whole, the per-segment copies shown
// beside it are shortened.
func (c *Client) Request(ctx context.Context, r ApprovalRequest) (ApprovalAnswer, error) {
	if r.ID == "" {
		r.ID = randomHex(8)
	}
	r = FitRequest(r)
	var ans ApprovalAnswer
	err := c.Call(ctx, MethodRequest, r, &ans)
	if err != nil && ctx.Err() != nil {
		wctx, cancel := context.WithTimeout(context.Background(), reportTimeout)
		defer cancel()
		c.notify(wctx, MethodWithdraw, IDParams{ID: r.ID})
		return ApprovalAnswer{}, ctx.Err()
	}
	return ans, err
}

// Resolve answers an approval (id or a unique prefix of 4+ characters).
func (c *Client) Resolve(ctx context.Context, id, decision string) (Approval, error) {
	var a Approval
	err := c.Call(ctx, MethodResolve, ResolveParams{ID: id, Decision: decision}, &a)
	return a, err
}

// ResolveWith answers an approval with every field of p (a deny's message).
func (c *Client) ResolveWith(ctx context.Context, p ResolveParams) (Approval, error) {
	var a Approval
	err := c.Call(ctx, MethodResolve, p, &a)
	return a, err
}

// maxPages bounds the pages a list is read in: far more than the hub's
// limits make (10,000 approvals of at most a page each).
const maxPages = 100_000

// List returns the pending approvals, oldest first, reading every page.
func (c *Client) List(ctx context.Context) ([]Approval, error) {
	var all []Approval
	p := ListParams{}
	for range maxPages {
		var r ListResult
		if err := c.Call(ctx, MethodList, p, &r); err != nil {
			return nil, err
		}
		all = append(all, r.Approvals...)
		if r.Next == "" {
			return nonNilList(all), nil
		}
		p.Cursor = r.Next
	}
	return nil, errors.New("hub: exec.approval.list: too many pages")
}

func nonNilList[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// Get returns one pending approval (id or a unique prefix).
func (c *Client) Get(ctx context.Context, id string) (Approval, error) {
	var a Approval
	err := c.Call(ctx, MethodGet, IDParams{ID: id}, &a)
	return a, err
}

// Report sends a shim's exec event without waiting for any answer; it
// fails only when the frame cannot be written.
func (c *Client) Report(r ExecReport) error {
	ctx, cancel := context.WithTimeout(context.Background(), reportTimeout)
	defer cancel()
	return c.notify(ctx, MethodReport, r)
}

// Session returns agent's override; the zero value when it has none.
func (c *Client) Session(ctx context.Context, agent string) (SessionOverride, error) {
	var o SessionOverride
	err := c.Call(ctx, MethodSessionGet, AgentParams{AgentID: agent}, &o)
	return o, err
}

// SetSession sets an agent's override (approvers only).
func (c *Client) SetSession(ctx context.Context, o SessionOverride) (SessionOverride, error) {
	var out SessionOverride
	err := c.Call(ctx, MethodSessionSet, o, &out)
	return out, err
}

// ClearSession removes an agent's override (approvers only).
func (c *Client) ClearSession(ctx context.Context, agent string) error {
	return c.Call(ctx, MethodSessionClear, AgentParams{AgentID: agent}, nil)
}

// Sessions lists the live overrides (approvers only), reading every page.
func (c *Client) Sessions(ctx context.Context) ([]SessionOverride, error) {
	var all []SessionOverride
	p := ListParams{}
	for range maxPages {
		var r SessionListResult
		if err := c.Call(ctx, MethodSessionList, p, &r); err != nil {
			return nil, err
		}
		all = append(all, r.Sessions...)
		if r.Next == "" {
			return nonNilList(all), nil
		}
		p.Cursor = r.Next
	}
	return nil, errors.New("hub: session.list: too many pages")
}

// Status describes the hub.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var s Status
	err := c.Call(ctx, MethodStatus, struct{}{}, &s)
	return s, err
}

// ConfigGet returns the configuration file, token redacted, and its hash.
func (c *Client) ConfigGet(ctx context.Context) (ConfigSnapshot, error) {
	var s ConfigSnapshot
	err := c.Call(ctx, MethodConfigGet, struct{}{}, &s)
	return s, err
}

// ConfigSet replaces the configuration file if its hash is still baseHash
// (else a CONFLICT *ErrorBody); socket path and token are kept.
func (c *Client) ConfigSet(ctx context.Context, file []byte, baseHash string) (ConfigSnapshot, error) {
	if !json.Valid(file) {
		return ConfigSnapshot{}, errors.New("hub: config set: file is not valid JSON")
	}
	var s ConfigSnapshot
	err := c.Call(ctx, MethodConfigSet, ConfigSetParams{File: file, BaseHash: baseHash}, &s)
	return s, err
}

// Subscribe asks for events (approvers only). The channel delivers them in
// the hub's order and is closed when ctx ends or the connection drops
// (after the events already received). A subscriber that leaves more than
// 65,536 events untaken loses the connection.
func (c *Client) Subscribe(ctx context.Context) (<-chan Event, error) {
	s := &subscription{out: make(chan Event), wake: make(chan struct{}, 1), gone: make(chan struct{})}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	// Registered before the request is sent: events may follow the answer
	// at once.
	c.subs[s] = struct{}{}
	c.mu.Unlock()
	if err := c.Call(ctx, MethodSubscribe, struct{}{}, nil); err != nil {
		c.dropSub(s)
		return nil, err
	}
	go s.forward(ctx, func() { c.dropSub(s) })
	return s.out, nil
}

func (c *Client) dropSub(s *subscription) {
	c.mu.Lock()
	if c.subs != nil {
		delete(c.subs, s)
	}
	c.mu.Unlock()
}

func (c *Client) deliverEvent(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.subs {
		if !s.push(e) {
			// The consumer stopped reading: drop the connection rather
			// than grow without bound.
			c.nc.Close()
		}
	}
}

// subscription queues events between the reader and a consumer so that a
// consumer that calls the hub while handling an event never blocks the
// reader (which must deliver that call's answer).
type subscription struct {
	mu    sync.Mutex
	queue []Event
	ended bool
	wake  chan struct{}
	gone  chan struct{} // closed when the connection is gone
	out   chan Event
}

func (s *subscription) push(e Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) >= maxQueuedEvents {
		return false
	}
	s.queue = append(s.queue, e)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

func (s *subscription) connGone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.ended = true
		close(s.gone)
	}
}

// forward moves queued events to out until ctx ends, or the connection is
// gone and the queue empty.
func (s *subscription) forward(ctx context.Context, unregister func()) {
	defer close(s.out)
	defer unregister()
	for {
		s.mu.Lock()
		var next *Event
		if len(s.queue) > 0 {
			next = &s.queue[0]
		}
		ended := s.ended
		s.mu.Unlock()
		if next == nil {
			if ended {
				return
			}
			select {
			case <-s.wake:
			case <-s.gone:
			case <-ctx.Done():
				return
			}
			continue
		}
		select {
		case s.out <- *next:
			s.mu.Lock()
			s.queue[0] = Event{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
		case <-ctx.Done():
			return
		}
	}
}
