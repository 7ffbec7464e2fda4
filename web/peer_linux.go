package web

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// peerUID returns the uid that owns the client end of a TCP connection
// when that end is a socket of this machine: one exact question to the
// kernel (sock_diag), or where that is not available its socket tables
// (/proc/net/tcp and tcp6: the line whose local address is the client's
// and whose remote address is ours carries the owner's uid). A client end
// the kernel does not know here is errNoSocket: another machine's.
func peerUID(local, remote *net.TCPAddr) (uint32, error) {
	uid, err := diagUID(remote, local)
	if err == nil || errors.Is(err, errNoSocket) {
		return uid, err
	}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		uid, ok, err := findSocket(table, remote, local)
		if err != nil {
			return 0, err
		}
		if ok {
			return uid, nil
		}
	}
	return 0, fmt.Errorf("%w (%s → %s is in none of the kernel's tables)", errNoSocket, remote, local)
}

// findSocket scans one table for the socket from → to.
func findSocket(table string, from, to *net.TCPAddr) (uint32, bool, error) {
	f, err := os.Open(table)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, false, nil // no IPv6 on this kernel
		}
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		l, lok := parseProcAddr(fields[1])
		r, rok := parseProcAddr(fields[2])
		if !lok || !rok || !sameAddr(l, from) || !sameAddr(r, to) {
			continue
		}
		uid, err := strconv.ParseUint(fields[7], 10, 32)
		if err != nil {
			return 0, false, fmt.Errorf("%s: uid %q", table, fields[7])
		}
		return uint32(uid), true, nil
	}
	return 0, false, sc.Err()
}

// parseProcAddr reads "0100007F:1F90" (IPv4) or 32 hex digits and a port
// (IPv6): the address as the kernel stores it, in 32-bit words of host
// byte order, and the port in hex.
func parseProcAddr(s string) (*net.TCPAddr, bool) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return nil, false
	}
	raw, err := hex.DecodeString(host)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, false
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return nil, false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(ip[i:], binary.NativeEndian.Uint32(raw[i:]))
	}
	return &net.TCPAddr{IP: ip, Port: int(p)}, true
}

func sameAddr(a, b *net.TCPAddr) bool { return a.Port == b.Port && a.IP.Equal(b.IP) }
