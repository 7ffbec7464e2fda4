//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks the x32 system calls, which seccomp sees under the x86-64
// architecture with this bit set.
func x32Bit() uint32 { return 0x40000000 }

// archDeniedCalls are this architecture's calls to refuse: raw port I/O.
func archDeniedCalls() []uint32 { return []uint32{unix.SYS_IOPL, unix.SYS_IOPERM} }

// archModeCalls are this architecture's own calls that set a mode.
func archModeCalls() []modeCall { return []modeCall{{unix.SYS_CHMOD, offArg1}} }
