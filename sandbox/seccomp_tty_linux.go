//go:build linux && (amd64 || arm64)

package sandbox

import "golang.org/x/sys/unix"

// terminalInjection refuses the two ioctls that type into a terminal:
// TIOCSTI pushes bytes into its input queue, TIOCLINUX pastes a virtual
// console's selection there. A confined command whose standard input is
// the user's terminal would otherwise leave a command line behind, which
// the user's own shell reads and runs, unconfined, once the command
// exits (Landlock's device ioctl right does not cover a terminal opened
// before the sandbox). The kernel reads the request as a 32-bit int, so
// the low half of the argument is what it acts on.
//
//	nr == ioctl:
//	  arg1 == TIOCSTI   → EPERM
//	  arg1 == TIOCLINUX → EPERM
//	  otherwise         → allowed
func terminalInjection() []unix.SockFilter {
	return []unix.SockFilter{
		jump(jeqK, unix.SYS_IOCTL, 0, 5),
		stmt(ldW, offArg1),
		jump(jeqK, unix.TIOCSTI, 2, 0),
		jump(jeqK, unix.TIOCLINUX, 1, 0),
		stmt(retK, retAllow),
		stmt(retK, retEPERM),
	}
}
