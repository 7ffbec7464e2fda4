package hub

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nextUidSeam stands a uid in for the kernel's on the next connection the
// hub accepts, for tests that speak the protocol from this process.
type nextUidSeam struct{ uid atomic.Int64 }

func (s *nextUidSeam) peerCred(nc net.Conn) (peer, error) {
	p, err := peerOf(nc)
	if err != nil {
		return p, err
	}
	if uid := s.uid.Swap(-1); uid >= 0 {
		p.uid = int(uid)
	}
	return p, nil
}

// TestRequesterUidOnlyRequests: a uid let in by socket.requesterUids is
// let in on the kernel's word alone, so it may only ask. A hello as
// approver or watcher is refused, with or without a valid MAC (a requester
// uid that got hold of a copy of the token is still not the owner), and the
// same hello as requester is accepted, so the refusal is the role's.
func TestRequesterUidOnlyRequests(t *testing.T) {
	const other = 4_000_000_007
	seam := &nextUidSeam{}
	seam.uid.Store(-1)
	dir := shortTempDir(t)
	cfg := filepath.Join(dir, "cfg.json")
	writeConfig(t, cfg, `{"requesterUids":[4000000007]}`)
	h := startHub(t, func(o *ServerOptions) {
		o.ConfigPath = cfg
		o.peerCred = seam.peerCred
	})
	_, ev := h.approver(t, "owner")

	for _, role := range []Role{RoleApprover, RoleWatcher} {
		for _, token := range []string{"", h.token} {
			name := string(role) + " without MAC"
			if token != "" {
				name = string(role) + " with a valid MAC"
			}
			t.Run(name, func(t *testing.T) {
				seam.uid.Store(other)
				r := h.raw(t)
				f := r.hello(token, role)
				require.NotNil(t, f.Error, "a requester uid said hello as %s and got %+v", role, f)
				assert.Equal(t, ErrCodeAuth, f.Error.Code)
				assert.Contains(t, f.Error.Message, "may only be a requester")
				assert.True(t, r.closed())
			})
		}
	}
	t.Run("requester", func(t *testing.T) {
		seam.uid.Store(other)
		r := h.raw(t)
		f := r.hello("", RoleRequester)
		require.Nil(t, f.Error)
		r.sendFrame("l", MethodList, nil)
		f = r.next()
		require.NotNil(t, f.Error)
		assert.Equal(t, ErrCodeForbidden, f.Error.Code)
	})
	select {
	case e := <-ev:
		t.Fatalf("an event from the refused hellos: %v", e)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestRequesterUidOnlyRequestsReal is TestRequesterUidOnlyRequests with a
// process really running as another user (as root).
func TestRequesterUidOnlyRequestsReal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	const nobody = 65534
	dir := shortTempDir(t)
	require.NoError(t, os.Chmod(dir, 0o711))
	exe, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(dir, "hub.test")
	copyFile(t, exe, bin, 0o755)
	sub := filepath.Join(dir, "h")
	require.NoError(t, os.Mkdir(sub, 0o711))
	h := startHubIn(t, sub, `{"requesterUids":[65534]}`)

	run := func(role Role, token string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin)
		cmd.Env = []string{clientEnv + "=1", serveSocketEnv + "=" + h.socket, clientRoleEnv + "=" + string(role), clientTokenEnv + "=" + token}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	for _, role := range []Role{RoleApprover, RoleWatcher} {
		for _, token := range []string{"", h.token} {
			out := run(role, token)
			assert.Contains(t, out, "UNAUTHORIZED", "%s, token %v", role, token != "")
			assert.Contains(t, out, "uid 65534 may only be a requester", "%s, token %v", role, token != "")
		}
	}
	// As a requester it gets in, and may not list.
	out := run(RoleRequester, "")
	assert.Contains(t, out, "hello ok")
	assert.Contains(t, out, ErrCodeForbidden)
}
