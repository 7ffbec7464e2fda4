package hub

// peerPid is informational (Approval.RequesterPid); FreeBSD's xucred has no
// pid in the version x/sys exposes.
func peerPid(int) int { return 0 }
