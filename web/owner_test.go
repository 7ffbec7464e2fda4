package web

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseProcAddr(t *testing.T) {
	a, ok := parseProcAddr("0100007F:1F90")
	require.True(t, ok)
	assert.Equal(t, "127.0.0.1:8080", a.String())
	a, ok = parseProcAddr("00000000000000000000000001000000:0050")
	require.True(t, ok)
	assert.Equal(t, "[::1]:80", a.String())
	for _, bad := range []string{"", "0100007F", "zz00007F:1F90", "0100007F:zzzz", "01:1F90"} {
		_, ok := parseProcAddr(bad)
		assert.False(t, ok, bad)
	}
}

// TestPeerUIDOwnConnection: the kernel's tables name this process's uid
// for a loopback connection it opened.
func TestPeerUIDOwnConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	s, err := ln.Accept()
	require.NoError(t, err)
	defer s.Close()
	uid, err := peerUID(s.LocalAddr().(*net.TCPAddr), s.RemoteAddr().(*net.TCPAddr))
	if err != nil && strings.Contains(err.Error(), "not supported") {
		t.Skip("the system does not say who owns a socket")
	}
	require.NoError(t, err)
	assert.Equal(t, uint32(os.Getuid()), uid)
}

// TestOtherUserRefused: another local user (the separate uid an agent may
// run as) gets no answer from the web approver, with or without a stolen
// cookie; this user gets the usual refusal for a missing cookie.
func TestOtherUserRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to connect as a second uid")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for /dev/tcp")
	}
	e := startEnv(t)
	port := e.base[strings.LastIndex(e.base, ":")+1:]
	get := "exec 3<>/dev/tcp/127.0.0.1/" + port + ` && printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1:` + port +
		`\r\nCookie: execgate_session=stolen\r\n\r\n' >&3 && cat <&3`
	run := func(cred *syscall.Credential) string {
		cmd := exec.Command("bash", "-c", get)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	assert.Contains(t, run(nil), "401", "this user: refused for the cookie, at the HTTP level")
	other := run(&syscall.Credential{Uid: 65534, Gid: 65534})
	assert.NotContains(t, other, "HTTP/", "another user: no answer at all; got %q", other)
}
