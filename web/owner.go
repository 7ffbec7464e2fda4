package web

import (
	"errors"
	"log/slog"
	"net"
	"os"
)

// ownerListener lets in only connections from this user (or root) when
// they come over loopback. A session cookie is not bound to a port:
// browsers send it to every server on 127.0.0.1, an agent's dev server
// included, and a cookie is all the web approver asks for once logged in.
// So a connection is also judged by who opened it: another local user —
// the separate uid an agent may run as — cannot use a cookie it took, even
// with a forged Origin. Root is let in because it can read the cookie
// anyway, and `tailscale serve` forwards as root. Connections from other
// machines (an explicit --listen) are not told apart this way; where the
// system does not say who owns a socket, neither.
type ownerListener struct {
	net.Listener
	uid uint32
	log *slog.Logger
}

func (l ownerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.admits(c) {
			return c, nil
		}
		c.Close()
	}
}

// admits decides one connection.
func (l ownerListener) admits(c net.Conn) bool {
	local, lok := c.LocalAddr().(*net.TCPAddr)
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok || !remote.IP.IsLoopback() {
		return true
	}
	uid, err := peerUID(local, remote)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return true
	case err != nil:
		l.log.Warn("web: refused a connection whose owner is unknown", "remote", remote, "err", err)
		return false
	case uid != l.uid && uid != 0:
		l.log.Warn("web: refused a connection from another user", "remote", remote, "uid", uid)
		return false
	}
	return true
}

func newOwnerListener(ln net.Listener, log *slog.Logger) net.Listener {
	return ownerListener{Listener: ln, uid: uint32(os.Getuid()), log: log}
}
