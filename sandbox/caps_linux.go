//go:build linux && (amd64 || arm64)

package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// droppedCaps are the capabilities a confined command run by root loses
// at its exec: with CAP_SYS_ADMIN and CAP_PERFMON, root read any other
// process's /proc/PID/environ and maps from inside Landlock (measured on
// 6.18: the agent's API keys, a CI runner's secrets), and CAP_SYS_PTRACE
// and CAP_CHECKPOINT_RESTORE are the rest of that family (map_files,
// ptrace). No work a confined command does needs them: mounting and
// kernel tracing are refused anyway.
func droppedCaps() []uintptr {
	return []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_PERFMON, unix.CAP_SYS_PTRACE, unix.CAP_CHECKPOINT_RESTORE}
}

// dropCaps removes droppedCaps from the calling thread's bounding set, so
// that what it executes never holds them. A process that holds none of
// them (any user but root, usually) has nothing to drop; one that cannot
// drop a capability it holds fails, and then nothing runs.
func dropCaps() error {
	for _, c := range droppedCaps() {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, c, 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			continue // a capability this kernel does not know
		}
		if err != nil {
			return fmt.Errorf("sandbox: read capability %d: %w", c, err)
		}
		if in == 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil {
			if errors.Is(err, unix.EPERM) && !holds(c) {
				// In the bounding set but never held (no CAP_SETPCAP
				// to drop it): an exec gains it only through a file's
				// capabilities, which no_new_privs ignores.
				continue
			}
			return fmt.Errorf("sandbox: drop capability %d: %w", c, err)
		}
	}
	return nil
}

// holds reports whether the calling thread has capability c permitted.
func holds(c uintptr) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return true // unknown: count it as held, so that failing to drop it fails
	}
	return data[c/32].Permitted&(1<<(c%32)) != 0
}
