package web

import (
	"errors"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiagUID: one exact question to the kernel names the owner of this
// process's own connection, and says errNoSocket for an end that does not
// exist here.
func TestDiagUID(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	s, err := ln.Accept()
	require.NoError(t, err)
	defer s.Close()
	local, remote := s.LocalAddr().(*net.TCPAddr), s.RemoteAddr().(*net.TCPAddr)
	uid, err := diagUID(remote, local)
	if err != nil && !errors.Is(err, errNoSocket) {
		t.Skipf("no sock_diag here: %v", err)
	}
	require.NoError(t, err)
	assert.Equal(t, uint32(os.Getuid()), uid)

	gone := &net.TCPAddr{IP: remote.IP, Port: remote.Port ^ 1}
	_, err = diagUID(gone, local)
	assert.ErrorIs(t, err, errNoSocket)
}

// FuzzParseDiagReply: whatever the kernel's answer holds, reading it
// never panics.
func FuzzParseDiagReply(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 16))
	f.Add(append([]byte{88, 0, 0, 0, 20, 0, 0, 0}, make([]byte, 80)...))
	f.Add([]byte{20, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 254, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) { parseDiagReply(b) })
}
