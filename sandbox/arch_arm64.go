//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_AARCH64

func x32Bit() uint32 { return 0 }

func archDeniedCalls() []uint32 { return nil }

func archModeCalls() []modeCall { return nil }
