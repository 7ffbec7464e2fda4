package hub

import "golang.org/x/sys/unix"

// peerPid is informational (Approval.RequesterPid); 0 when unknown.
func peerPid(fd int) int {
	pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		return 0
	}
	return pid
}
