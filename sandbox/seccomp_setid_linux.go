//go:build linux && (amd64 || arm64)

package sandbox

import "golang.org/x/sys/unix"

// offArg2 is the low half of the third argument in struct seccomp_data.
const offArg2 = 32

// modeCall is a system call that sets a file's mode, and where its mode
// argument is.
type modeCall struct {
	nr  uint32
	arg uint32 // offset of the mode in struct seccomp_data
}

// modeCalls are the calls that set a file's mode: chmod (x86-64 only),
// fchmod, fchmodat and fchmodat2.
func modeCalls() []modeCall {
	calls := []modeCall{
		{unix.SYS_FCHMOD, offArg1},
		{unix.SYS_FCHMODAT, offArg2},
		{unix.SYS_FCHMODAT2, offArg2},
	}
	return append(calls, archModeCalls()...)
}

// setIDBits refuses setting the set-user-ID and set-group-ID bits, which
// Landlock does not mediate (it has no right for a file's mode): a
// confined command run as root would otherwise leave a set-uid program in
// the workspace, or on anything it may write, for another user to run
// with root's rights after it. The mode is a 32-bit mode_t: its low half
// is what the kernel reads.
//
//	nr == a mode call:
//	  mode & (S_ISUID|S_ISGID) == 0 → allowed
//	  otherwise                     → EPERM
func setIDBits() []unix.SockFilter {
	var f []unix.SockFilter
	for _, c := range modeCalls() {
		f = append(f,
			jump(jeqK, c.nr, 0, 5),
			stmt(ldW, c.arg),
			stmt(andK, unix.S_ISUID|unix.S_ISGID),
			jump(jeqK, 0, 0, 1),
			stmt(retK, retAllow),
			stmt(retK, retEPERM),
		)
	}
	return f
}
