package hub

import (
	"errors"
	"fmt"
	"net"
)

// peer is who is at the other end of a connection, as the kernel says.
type peer struct {
	uid, pid int
}

// peerOf reads the credentials of a Unix socket connection's peer.
func peerOf(c net.Conn) (peer, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return peer{}, errors.New("not a Unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return peer{}, fmt.Errorf("peer credentials: %w", err)
	}
	var p peer
	var cerr error
	if err := raw.Control(func(fd uintptr) { p, cerr = peerCred(int(fd)) }); err != nil {
		return peer{}, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return peer{}, fmt.Errorf("peer credentials: %w", cerr)
	}
	return p, nil
}
