package web

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// Layout of the sock_diag messages (linux/inet_diag.h), which x/sys does
// not define.
const (
	nlmsgHdrLen      = 16
	inetDiagSockID   = 48 // sport, dport, src[4], dst[4], if, cookie[2]
	inetDiagReqV2Len = 8 + inetDiagSockID
	inetDiagMsgUID   = 4 + inetDiagSockID + 12 // family…retrans, id, expires, rqueue, wqueue
)

// diagUID asks the kernel, over NETLINK_SOCK_DIAG, for the owner of the
// TCP socket whose local end is from and whose remote end is to: one
// exact look-up, however many sockets the machine has (reading
// /proc/net/tcp costs a pass over all of them, which a flood of
// connections makes as slow as it likes).
func diagUID(from, to *net.TCPAddr) (uint32, error) {
	fam, src, dst := uint8(unix.AF_INET6), from.IP.To16(), to.IP.To16()
	if f4, t4 := from.IP.To4(), to.IP.To4(); f4 != nil && t4 != nil {
		fam, src, dst = unix.AF_INET, f4, t4
	}
	if src == nil || dst == nil {
		return 0, fmt.Errorf("sock_diag: address %v → %v", from, to)
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("sock_diag: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 1}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)

	req := make([]byte, nlmsgHdrLen+inetDiagReqV2Len)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // seq
	r := req[nlmsgHdrLen:]
	r[0], r[1] = fam, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], 0xffffffff) // every state
	id := r[8:]
	binary.BigEndian.PutUint16(id[0:], uint16(from.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(to.Port))
	copy(id[4:20], src)
	copy(id[20:36], dst)
	ne.PutUint32(id[40:], 0xffffffff) // INET_DIAG_NOCOOKIE
	ne.PutUint32(id[44:], 0xffffffff)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("sock_diag: send: %w", err)
	}
	buf := make([]byte, 8192)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, fmt.Errorf("sock_diag: receive: %w", err)
	}
	return parseDiagReply(buf[:n])
}

// parseDiagReply reads the owner's uid from the kernel's answer: one
// inet_diag_msg, or an error message (ENOENT: no such socket).
func parseDiagReply(b []byte) (uint32, error) {
	ne := binary.NativeEndian
	if len(b) < nlmsgHdrLen {
		return 0, errors.New("sock_diag: short answer")
	}
	size, typ := int(ne.Uint32(b[0:])), ne.Uint16(b[4:])
	if size < nlmsgHdrLen || size > len(b) {
		return 0, errors.New("sock_diag: malformed answer")
	}
	body := b[nlmsgHdrLen:size]
	switch typ {
	case unix.NLMSG_ERROR:
		if len(body) < 4 {
			return 0, errors.New("sock_diag: malformed error")
		}
		errno := -int32(ne.Uint32(body))
		if errno == int32(unix.ENOENT) {
			return 0, errNoSocket
		}
		return 0, fmt.Errorf("sock_diag: %w", unix.Errno(errno))
	case unix.SOCK_DIAG_BY_FAMILY:
		if len(body) < inetDiagMsgUID+4 {
			return 0, errors.New("sock_diag: short message")
		}
		return ne.Uint32(body[inetDiagMsgUID:]), nil
	}
	return 0, fmt.Errorf("sock_diag: unexpected message type %d", typ)
}
