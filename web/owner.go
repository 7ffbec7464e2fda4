package web

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
)

// errNoSocket reports that the kernel knows no local socket at the other
// end of a connection: it comes from another machine (or another network
// namespace), or its end is already closed.
var errNoSocket = errors.New("no local socket at the other end")

// Connection limits. A person's browser opens a handful of connections;
// these bound what one party can hold so that it cannot take the rest.
const (
	// maxConnsPerParty bounds the connections of one local uid, or of
	// one remote address.
	maxConnsPerParty = 128
	// maxConns bounds all connections.
	maxConns = 512
)

// ownerListener lets in only connections from this user (or root) when
// they come from this machine, over loopback or any other local address.
// A session cookie is not bound to a port: browsers send it to every
// server on the host, an agent's dev server included, and a cookie is all
// the web approver asks for once logged in. So a connection is also judged
// by who opened it: another local user — the separate uid an agent may run
// as — cannot use a cookie it took, even with a forged Origin, and even
// through the machine's own non-loopback address when --listen binds one.
// Root is let in because it can read the cookie anyway, and `tailscale
// serve` forwards as root. Connections from other machines (an explicit
// --listen) are not told apart this way; where the system does not say who
// owns a socket, neither.
//
// Who opened a connection is asked in the connection's own goroutine, on
// its first read (gatedConn), never in the accept loop: a flood of
// connections, or a slow answer about one, cannot hold up the others.
// Each party (a local uid, a remote address) may hold maxConnsPerParty
// connections, and all together maxConns; the HTTP server's timeouts end
// the ones that send nothing.
type ownerListener struct {
	net.Listener
	uid uint32
	log *slog.Logger
	lim *connLimits
}

func newOwnerListener(ln net.Listener, log *slog.Logger) net.Listener {
	return ownerListener{Listener: ln, uid: uint32(os.Getuid()), log: log,
		lim: &connLimits{perParty: maxConnsPerParty, total: maxConns, held: map[string]int{}}}
}

// Accept hands over every connection at once; gatedConn judges it.
func (l ownerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: c, l: l}, nil
}

// party names who holds a connection for the limits, or refuses it.
func (l ownerListener) party(c net.Conn) (string, error) {
	local, lok := c.LocalAddr().(*net.TCPAddr)
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return "other", nil
	}
	uid, err := peerUID(local, remote)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return "address " + remote.IP.String(), nil
	case errors.Is(err, errNoSocket) && !remote.IP.IsLoopback():
		return "address " + remote.IP.String(), nil // another machine
	case err != nil:
		return "", fmt.Errorf("a connection whose owner is unknown (%v)", err)
	case uid != l.uid && uid != 0:
		return "", fmt.Errorf("a connection from another user (uid %d)", uid)
	}
	return "uid " + strconv.FormatUint(uint64(uid), 10), nil
}

// admit judges c and charges it to its party; release gives it back.
func (l ownerListener) admit(c net.Conn) (release func(), err error) {
	p, err := l.party(c)
	if err != nil {
		l.log.Warn("web: refused "+err.Error(), "remote", c.RemoteAddr())
		return nil, err
	}
	release, ok := l.lim.take(p)
	if !ok {
		l.log.Warn("web: refused a connection: too many open", "party", p)
		return nil, fmt.Errorf("too many connections from %s", p)
	}
	return release, nil
}

// gatedConn is a connection that is judged before its first byte is read
// or written; a refused one is closed without a word.
type gatedConn struct {
	net.Conn
	l ownerListener

	mu      sync.Mutex
	judged  bool
	err     error
	release func()
	closed  bool
}

func (c *gatedConn) gate() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.judged {
		c.judged = true
		if c.closed {
			c.err = net.ErrClosed
		} else {
			c.release, c.err = c.l.admit(c.Conn)
		}
		if c.err != nil {
			c.Conn.Close()
		}
	}
	return c.err
}

func (c *gatedConn) Read(p []byte) (int, error) {
	if err := c.gate(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *gatedConn) Write(p []byte) (int, error) {
	if err := c.gate(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

func (c *gatedConn) Close() error {
	c.mu.Lock()
	release := c.release
	c.release, c.closed = nil, true
	c.mu.Unlock()
	if release != nil {
		release()
	}
	return c.Conn.Close()
}

// connLimits counts open connections per party.
type connLimits struct {
	perParty, total int
	mu              sync.Mutex
	held            map[string]int
	all             int
}

// take charges one connection to party; ok is false when party or the
// server holds its limit.
func (l *connLimits) take(party string) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[party] >= l.perParty || l.all >= l.total {
		return nil, false
	}
	l.held[party]++
	l.all++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.all--
			if l.held[party]--; l.held[party] <= 0 {
				delete(l.held, party)
			}
		})
	}, true
}
