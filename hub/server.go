package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/execgate/execgate/config"
)

// Limits of the daemon.
const (
	// writeTimeout bounds one write to a peer; a peer that does not read
	// for that long is dropped.
	writeTimeout = 10 * time.Second
	// frameRate and frameBurst limit the frames one connection may send
	// (before hello, and as a requester: one shim asks a few questions).
	frameRate  = 100
	frameBurst = 200
	// approverRate and approverBurst are an approver's limits: it is
	// authenticated as the hub's owner, and a scripted one may resolve a
	// backlog of thousands of approvals at once (Limits.Pending bounds it).
	approverRate  = 10_000
	approverBurst = 20_000
	// maxQueuedFrames and maxQueuedBytes bound what waits to be written to
	// one peer; a subscriber that falls further behind is disconnected.
	maxQueuedFrames = 10_000
	maxQueuedBytes  = 32 << 20
	// maxNameLen bounds HelloParams.Name.
	maxNameLen = 128
)

// ServerOptions configure Listen.
type ServerOptions struct {
	// ConfigPath is the configuration file holding socket.token and
	// socket.requesterUids; "" means config.ConfigPath's default.
	ConfigPath string
	// Socket is where to listen; "" means SocketPath of the configuration.
	Socket string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Now tells the time (tests); nil means time.Now. Timers still run on
	// the real clock.
	Now func() time.Time
	// Limits override the hub's limits (tests); zero fields keep the
	// defaults.
	Limits Limits

	// peerCred reads a connection's peer (tests that cannot run a process
	// as another user stand a uid in for one); nil means peerOf.
	peerCred func(net.Conn) (peer, error)
}

// Server is a running hub: it owns the socket, the lock beside it and all
// pending approvals and session overrides, which live only in memory.
type Server struct {
	log       *slog.Logger
	now       func() time.Time
	socket    string
	uid       int
	startedAt time.Time
	limits    Limits
	peerCred  func(net.Conn) (peer, error)
	config    *configState
	nonces    nonceCache

	ln       *net.UnixListener
	socketFi os.FileInfo // the socket file we made, to remove only it
	lock     *flock.Flock
	shared   bool // socket modes opened for requester uids
	// hostname is where an approver is when its hello does not say.
	hostname string

	mu       sync.Mutex
	conns    map[*conn]struct{}
	subs     map[*conn]struct{}
	pending  map[string]*pending
	seq      uint64
	sessions map[string]*sessionEntry
	// connShares and pendingShares divide the connection and approval
	// budgets between uids; refusing counts connections held only to
	// tell them why they are refused. requesters is how many uids
	// socket.requesterUids lists, as last read.
	connShares    shares
	pendingShares shares
	refusing      int
	requesters    int
	closed        bool
	closeOnce     sync.Once
	done          chan struct{}
	wg            sync.WaitGroup
}

// Listen takes the per-user lock, replaces a stale socket and starts
// listening; Serve then accepts connections. It fails with a message
// naming the running hub when another one holds the lock.
func Listen(ctx context.Context, o ServerOptions) (*Server, error) {
	s := newServer(o)
	auth := s.config.current(ctx)
	if auth.err != nil {
		return nil, fmt.Errorf("hub: %w", auth.err)
	}
	path := o.Socket
	if path == "" {
		cfg, _, _, err := config.Load(s.config.path)
		if err != nil {
			return nil, fmt.Errorf("hub: %w", err) // current saw it usable; it changed since
		}
		p, err := SocketPath(cfg, nil)
		if err != nil {
			return nil, fmt.Errorf("hub: %w", err)
		}
		path = p
	}
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("hub: socket %s: %w", path, err)
		}
		path = abs
	}
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("hub: socket path %s is longer than %d bytes", path, maxSocketPath)
	}
	s.socket = path
	s.shared = auth.shared()
	dir := filepath.Dir(path)
	if err := prepareDir(dir, s.shared); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if err := s.takeLock(filepath.Join(dir, lockName)); err != nil {
		return nil, err
	}
	if err := s.bind(); err != nil {
		s.lock.Unlock()
		return nil, err
	}
	if s.shared {
		if d := unreachable(dir); d != "" {
			s.log.Warn("socket.requesterUids is set but other users cannot traverse a directory on the way to the socket; set socket.path elsewhere",
				"dir", d, "socket", path)
		}
	}
	s.log.Info("hub listening", "socket", path, "pid", os.Getpid(), "config", s.config.path)
	return s, nil
}

// newServer sets up the state shared by Listen and the tests that drive
// connections without a socket.
func newServer(o ServerOptions) *Server {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	cfgPath := o.ConfigPath
	if cfgPath == "" {
		cfgPath = config.ConfigPath("", nil)
	}
	limits := o.Limits.withDefaults()
	uid := os.Geteuid()
	peerCred := o.peerCred
	if peerCred == nil {
		peerCred = peerOf
	}
	return &Server{
		log:           log,
		now:           now,
		uid:           uid,
		startedAt:     now(),
		hostname:      hostnameOrEmpty(),
		limits:        limits,
		peerCred:      peerCred,
		config:        &configState{path: cfgPath, log: log},
		conns:         map[*conn]struct{}{},
		subs:          map[*conn]struct{}{},
		pending:       map[string]*pending{},
		sessions:      map[string]*sessionEntry{},
		connShares:    newShares(limits.Conns, limits.OwnerConns, uid),
		pendingShares: newShares(limits.Pending, limits.OwnerPending, uid),
		done:          make(chan struct{}),
	}
}

// takeLock makes this the only hub of the user. The lock file holds the
// owner's pid, for the message another start prints.
func (s *Server) takeLock(path string) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("hub: lock file %s is not a regular file; refusing to use it", path)
	}
	lock := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW), flock.SetPermissions(0o600))
	ok, err := lock.TryLock()
	if err != nil {
		return fmt.Errorf("hub: lock %s: %w", path, err)
	}
	if !ok {
		pid := "?"
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			pid = strings.TrimSpace(string(b))
		}
		return fmt.Errorf("execgate hub already running (pid %s, socket %s)", pid, s.socket)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		lock.Unlock()
		return fmt.Errorf("hub: lock %s: %w", path, err)
	}
	s.lock = lock
	return nil
}

// bind replaces a stale socket (only ever a socket that nobody answers
// on) and listens, with the mode set after bind so the umask plays no part.
func (s *Server) bind() error {
	if fi, err := os.Lstat(s.socket); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return fmt.Errorf("hub: %s exists and is not a socket (%s); refusing to replace it", s.socket, fi.Mode().Type())
		}
		if c, err := net.DialTimeout("unix", s.socket, time.Second); err == nil {
			c.Close()
			return fmt.Errorf("execgate hub already running (socket %s answers)", s.socket)
		}
		if err := os.Remove(s.socket); err != nil {
			return fmt.Errorf("hub: remove stale socket %s: %w", s.socket, err)
		}
		s.log.Info("removed stale socket", "socket", s.socket)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.socket, Net: "unix"})
	if err != nil {
		return fmt.Errorf("hub: listen on %s: %w", s.socket, err)
	}
	// We remove the file ourselves, after the last connection is gone.
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(s.socket, socketMode(s.shared)); err != nil {
		ln.Close()
		os.Remove(s.socket)
		return fmt.Errorf("hub: chmod %s: %w", s.socket, err)
	}
	s.ln = ln
	s.socketFi, _ = os.Lstat(s.socket)
	return nil
}

// Socket returns the path the hub listens on.
func (s *Server) Socket() string { return s.socket }

// Serve accepts connections until ctx ends or Close is called, then shuts
// down: every connection is closed (a waiting shim sees its hub fail and
// falls back), pending approvals are dropped, and the socket file removed.
// It returns nil after a requested shutdown.
func (s *Server) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	s.wg.Go(func() { s.watchConfig(ctx) })
	var err error
	for {
		nc, aerr := s.ln.AcceptUnix()
		if aerr != nil {
			if s.isClosed() {
				break
			}
			var ne net.Error
			if errors.As(aerr, &ne) && ne.Timeout() || errors.Is(aerr, syscall.EMFILE) || errors.Is(aerr, syscall.ENFILE) {
				// Out of descriptors: back off instead of spinning.
				s.log.Warn("accept", "err", aerr)
				time.Sleep(100 * time.Millisecond)
				continue
			}
			err = fmt.Errorf("hub: accept: %w", aerr)
			break
		}
		s.accept(ctx, nc)
	}
	s.Close()
	s.wg.Wait()
	return err
}

// configPoll is how often the hub looks at its configuration file between
// connections (each connection looks too).
const configPoll = 2 * time.Second

// watchConfig keeps the socket's modes in step with requesterUids, so that
// a uid added to the file can connect without waiting for anything else
// to make the hub re-read it.
func (s *Server) watchConfig(ctx context.Context) {
	t := time.NewTicker(configPoll)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.authConfig(ctx)
		}
	}
}

// authConfig returns the current configuration for authenticating a
// peer, first applying a change of requesterUids to the socket's modes.
func (s *Server) authConfig(ctx context.Context) authConfig {
	auth := s.config.current(ctx)
	if auth.err != nil {
		return auth // keep the modes: an unreadable file lets nobody else in anyway
	}
	shared := auth.shared()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requesters = len(auth.requesterUids)
	if shared == s.shared || s.closed || s.ln == nil {
		return auth
	}
	dir := filepath.Dir(s.socket)
	// Opening up: the socket, then the directory that leads to it;
	// closing: the directory first.
	errs := []error{os.Chmod(s.socket, socketMode(shared)), os.Chmod(dir, dirMode(shared))}
	if !shared {
		errs = []error{os.Chmod(dir, dirMode(shared)), os.Chmod(s.socket, socketMode(shared))}
	}
	if err := errors.Join(errs...); err != nil {
		s.log.Error("cannot change the socket's modes for requesterUids", "err", err)
		return auth
	}
	s.shared = shared
	s.log.Info("requesterUids changed; socket modes updated", "requesterUids", auth.requesterUids)
	if shared {
		if d := unreachable(dir); d != "" {
			s.log.Warn("other users cannot traverse a directory on the way to the socket; set socket.path elsewhere", "dir", d)
		}
	}
	return auth
}

// accept starts serving one connection, or refuses it. The peer's uid is
// read here, before the connection counts against anything, so that a
// connection is charged to its uid's share from the start; a refused one
// is held (boundedly) only to be told why.
func (s *Server) accept(ctx context.Context, nc net.Conn) {
	p, perr := s.peerCred(nc)
	auth := s.authConfig(ctx)
	c := newConn(s, nc)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return
	}
	code, why := s.admitLocked(c, p, perr, auth)
	if code != "" && s.refusing >= maxRefusing {
		// Too many refusals in flight to explain this one too.
		s.mu.Unlock()
		s.log.Warn("refusing connection without a word", "uid", p.uid, "why", why)
		nc.Close()
		return
	}
	if code != "" {
		s.refusing++
		c.refused = true
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		if code != "" {
			s.log.Warn("refusing connection", "uid", p.uid, "pid", p.pid, "code", code, "why", why)
			c.fatal("", code, why)
			c.serve(ctx, peer{uid: -1}, auth)
			return
		}
		c.serve(ctx, p, auth)
	}()
}

// admitLocked decides whether the peer may connect, and if so charges the
// connection to its uid's share. It returns the error code and message of
// a refusal, or "" when admitted.
func (s *Server) admitLocked(c *conn, p peer, perr error, auth authConfig) (code, why string) {
	switch {
	case perr != nil:
		s.log.Warn("cannot read peer credentials", "err", perr)
		return ErrCodeAuth, "cannot read peer credentials"
	case p.uid == s.uid, auth.isRequester(p.uid):
	default:
		return ErrCodeAuth, fmt.Sprintf("uid %d may not use this hub", p.uid)
	}
	if v := s.connShares.take(p.uid, s.requesters); v != shareGranted {
		return ErrCodeBusy, s.connShares.connRefusal(v, p.uid, s.requesters)
	}
	c.charged = true
	c.peer = p
	return "", ""
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the hub: no new connections, every connection closed,
// timers stopped, the socket file removed and the lock released. It waits
// for connections to finish only in Serve.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		conns := make([]*conn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		for _, p := range s.pending {
			p.timer.Stop()
		}
		clear(s.pending)
		for _, e := range s.sessions {
			if e.timer != nil {
				e.timer.Stop()
			}
		}
		s.mu.Unlock()
		// The socket file goes first, then the listener: a client must
		// never find a socket file that nobody listens on (it would take
		// the hub for crashed rather than stopped, and a caller waiting
		// for "no hub" would still see the file).
		if s.socketFi != nil {
			// Only our own socket: another hub may have replaced it if
			// ours had been removed by hand.
			if fi, err := os.Lstat(s.socket); err == nil && os.SameFile(fi, s.socketFi) {
				os.Remove(s.socket)
			}
		}
		if s.ln != nil {
			s.ln.Close()
		}
		for _, c := range conns {
			c.kill()
		}
		if s.lock != nil {
			s.lock.Unlock()
		}
		close(s.done)
		s.log.Info("hub stopped", "socket", s.socket)
	})
	return nil
}

// status reports the hub's counters.
func (s *Server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{
		Pid:         os.Getpid(),
		Socket:      s.socket,
		StartedAtMs: s.startedAt.UnixMilli(),
		Pending:     len(s.pending),
		Approvers:   s.approversLocked(),
		Watchers:    len(s.subs) - s.approversLocked(),
		Connections: len(s.conns),
	}
}

// approversLocked counts the subscribed connections that can answer:
// approvers, not watchers. s.mu must be held.
func (s *Server) approversLocked() int {
	n := 0
	for c := range s.subs {
		if c.role == RoleApprover {
			n++
		}
	}
	return n
}

// hostnameOrEmpty is this machine's name, "" when it has none.
func hostnameOrEmpty() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

// dropConn forgets a finished connection: its subscription ends and the
// approvals it was waiting on are withdrawn (approvers are told).
func (s *Server) dropConn(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; !ok {
		return // forgotten already: give nothing back twice
	}
	delete(s.conns, c)
	delete(s.subs, c)
	if c.charged {
		s.connShares.give(c.peer.uid)
	}
	if c.refused {
		s.refusing--
	}
	for _, p := range c.pending {
		s.settleLocked(p, settleWithdrawn, "", "")
	}
}
