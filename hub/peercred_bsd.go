//go:build darwin || freebsd

package hub

import "golang.org/x/sys/unix"

func peerCred(fd int) (peer, error) {
	x, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return peer{}, err
	}
	return peer{uid: int(x.Uid), pid: peerPid(fd)}, nil
}
