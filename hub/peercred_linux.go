package hub

import "golang.org/x/sys/unix"

func peerCred(fd int) (peer, error) {
	u, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return peer{}, err
	}
	return peer{uid: int(u.Uid), pid: int(u.Pid)}, nil
}
