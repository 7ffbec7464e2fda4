//go:build linux && (amd64 || arm64)

package sandbox

import "golang.org/x/sys/unix"

// The seccomp filter covers what Landlock of ABI 6 and 7 cannot: sockets
// other than TCP (UDP, raw, packet, netlink), pathname Unix sockets, and
// the few system calls that reach past both (io_uring creates sockets
// without socket(2); a handle open skips path checks; the kernel keyring
// holds the user's secrets; loading code into the kernel). It is a
// classic BPF program over struct seccomp_data.

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits on a little-endian machine
	offArg1 = 24
)

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

const (
	ldW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeqK = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jgeK = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	andK = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	retK = unix.BPF_RET | unix.BPF_K
)

const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retEACCES = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
)

// deniedCalls are refused with EPERM whatever the grants.
func deniedCalls() []uint32 {
	calls := []uint32{
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		unix.SYS_OPEN_BY_HANDLE_AT,
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
		unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
		unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
		unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_REBOOT,
		unix.SYS_SWAPON, unix.SYS_SWAPOFF,
	}
	return append(calls, archDeniedCalls()...)
}

// filter builds the program for g.
//
//	arch != native            → EPERM (no 32-bit or x32 back door)
//	nr in deniedCalls         → EPERM
//	ioctl TIOCSTI, TIOCLINUX  → EPERM (see terminalInjection)
//	chmod with S_ISUID/S_ISGID → EPERM (see setIDBits)
//	socket(family, type, …):
//	  AF_UNIX                 → allowed only with UnixSockets
//	  AF_INET, AF_INET6       → with Network any; with Loopback (in a
//	                            private network namespace) TCP and UDP;
//	                            else SOCK_STREAM only (Landlock refuses
//	                            its bind and connect)
//	  anything else           → allowed only with Network… and never
//	                            packet sockets
//	otherwise                 → allowed
func filter(g Grants) []unix.SockFilter {
	var f []unix.SockFilter
	f = append(f,
		stmt(ldW, offArch),
		jump(jeqK, auditArch, 1, 0),
		stmt(retK, retEPERM),
		stmt(ldW, offNr),
	)
	if x32 := x32Bit(); x32 != 0 {
		f = append(f, jump(jgeK, x32, 0, 1), stmt(retK, retEPERM))
	}
	for _, nr := range deniedCalls() {
		f = append(f, jump(jeqK, nr, 0, 1), stmt(retK, retEPERM))
	}
	f = append(f, terminalInjection()...)
	f = append(f, setIDBits()...)
	// Not socket(2): allowed. Otherwise fall through to the family checks.
	f = append(f, jump(jeqK, unix.SYS_SOCKET, 1, 0), stmt(retK, retAllow))
	f = append(f, stmt(ldW, offArg0))
	unixRet := uint32(retEACCES)
	if g.UnixSockets {
		unixRet = retAllow
	}
	f = append(f, jump(jeqK, unix.AF_UNIX, 0, 1), stmt(retK, unixRet))
	if g.Network {
		// Any socket but a packet socket (a sniffer, which a grant of
		// hosts never means).
		f = append(f, jump(jeqK, unix.AF_PACKET, 0, 1), stmt(retK, retEACCES), stmt(retK, retAllow))
		return f
	}
	if g.Loopback {
		// In a private network namespace: TCP and UDP on loopback, the
		// only interface; still no raw, packet or netlink sockets.
		return append(f,
			jump(jeqK, unix.AF_INET, 1, 0),
			jump(jeqK, unix.AF_INET6, 0, 6),
			stmt(ldW, offArg1),
			stmt(andK, 0xf),
			jump(jeqK, unix.SOCK_STREAM, 2, 0),
			jump(jeqK, unix.SOCK_DGRAM, 1, 0),
			stmt(retK, retEACCES),
			stmt(retK, retAllow),
			stmt(retK, retEACCES),
		)
	}
	f = append(f,
		jump(jeqK, unix.AF_INET, 1, 0),
		jump(jeqK, unix.AF_INET6, 0, 4),
		stmt(ldW, offArg1),
		stmt(andK, 0xf), // SOCK_NONBLOCK and SOCK_CLOEXEC ride in the type
		jump(jeqK, unix.SOCK_STREAM, 0, 1),
		stmt(retK, retAllow),
		stmt(retK, retEACCES),
	)
	return f
}
