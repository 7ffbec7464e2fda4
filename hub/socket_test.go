package hub

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestSocketPath(t *testing.T) {
	dir := shortTempDir(t)
	rt := filepath.Join(dir, "rt")
	require.NoError(t, os.Mkdir(rt, 0o700))
	tmp := filepath.Join(dir, "tmp")
	require.NoError(t, os.Mkdir(tmp, 0o700))
	t.Setenv("TMPDIR", tmp)
	uid := strconv.Itoa(os.Geteuid())

	explicit := &config.Config{Socket: config.SocketConfig{Path: filepath.Join(dir, "x", "..", "my.sock")}}
	tests := []struct {
		name    string
		cfg     *config.Config
		env     map[string]string
		want    string
		wantErr string
	}{
		{name: "configured", cfg: explicit, env: map[string]string{"XDG_RUNTIME_DIR": rt}, want: filepath.Join(dir, "my.sock")},
		{name: "runtime dir", cfg: &config.Config{}, env: map[string]string{"XDG_RUNTIME_DIR": rt}, want: filepath.Join(rt, "execgate", "hub.sock")},
		{name: "nil config", env: map[string]string{"XDG_RUNTIME_DIR": rt}, want: filepath.Join(rt, "execgate", "hub.sock")},
		{name: "no runtime dir", want: filepath.Join(tmp, "execgate-"+uid, "hub.sock")},
		{name: "relative runtime dir ignored", env: map[string]string{"XDG_RUNTIME_DIR": "run"}, want: filepath.Join(tmp, "execgate-"+uid, "hub.sock")},
		{name: "relative configured path", cfg: &config.Config{Socket: config.SocketConfig{Path: "hub.sock"}}, wantErr: "want an absolute path"},
		{name: "too long", cfg: &config.Config{Socket: config.SocketConfig{Path: "/" + strings.Repeat("d", 120) + "/hub.sock"}}, wantErr: "Unix sockets allow at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SocketPath(tt.cfg, envOf(tt.env))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	// SocketPath creates nothing.
	_, err := os.Stat(filepath.Join(rt, "execgate"))
	assert.True(t, os.IsNotExist(err))
}

func TestSocketPathRefusesForeignDirectories(t *testing.T) {
	dir := shortTempDir(t)
	env := envOf(map[string]string{"XDG_RUNTIME_DIR": dir})
	own := filepath.Join(dir, "execgate")

	require.NoError(t, os.Mkdir(own, 0o700))
	require.NoError(t, os.Chmod(own, 0o777))
	_, err := SocketPath(nil, env)
	require.ErrorContains(t, err, "writable by others")
	require.NoError(t, os.Remove(own))

	// A symbolic link where our directory should be was not put there by us.
	target := filepath.Join(dir, "elsewhere")
	require.NoError(t, os.Mkdir(target, 0o700))
	require.NoError(t, os.Symlink(target, own))
	_, err = SocketPath(nil, env)
	require.ErrorContains(t, err, "not a directory")
	require.NoError(t, os.Remove(own))

	// A configured path in a group-writable directory.
	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.Mkdir(shared, 0o700))
	require.NoError(t, os.Chmod(shared, 0o770))
	_, err = SocketPath(&config.Config{Socket: config.SocketConfig{Path: filepath.Join(shared, "h.sock")}}, env)
	require.ErrorContains(t, err, "writable by others")

	if os.Geteuid() != 0 {
		t.Skip("a directory owned by another user needs root to make")
	}
	require.NoError(t, os.Mkdir(own, 0o700))
	require.NoError(t, os.Chown(own, 65534, 65534))
	_, err = SocketPath(nil, env)
	require.ErrorContains(t, err, "belongs to uid 65534")
	// A configured path may sit in the hub owner's directory.
	p := filepath.Join(own, "h.sock")
	got, err := SocketPath(&config.Config{Socket: config.SocketConfig{Path: p}}, env)
	require.NoError(t, err)
	assert.Equal(t, p, got)
	// The hub itself never uses a directory it does not own.
	_, err = Listen(context.Background(), ServerOptions{ConfigPath: filepath.Join(dir, "c.json"), Socket: p})
	require.ErrorContains(t, err, "belongs to uid 65534")
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	return fi.Mode().Perm()
}

func TestListenModesAndCleanup(t *testing.T) {
	h := startHub(t)
	assert.Equal(t, os.FileMode(0o700), mode(t, filepath.Dir(h.socket)))
	assert.Equal(t, os.FileMode(0o600), mode(t, h.socket))
	assert.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(filepath.Dir(h.socket), "hub.lock")))
	h.stop()
	_, err := os.Lstat(h.socket)
	assert.True(t, os.IsNotExist(err), "socket removed on exit")

	// With requester uids the socket opens up; SO_PEERCRED guards it.
	dir := shortTempDir(t)
	cfg := filepath.Join(dir, "c.json")
	writeConfig(t, cfg, `{"requesterUids":[12345]}`)
	sock := filepath.Join(dir, "run", "hub.sock")
	s, err := Listen(context.Background(), ServerOptions{ConfigPath: cfg, Socket: sock})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, os.FileMode(0o711), mode(t, filepath.Dir(sock)))
	assert.Equal(t, os.FileMode(0o666), mode(t, sock))
}

// Editing requesterUids while the hub runs opens or closes the socket.
func TestRequesterUidsApplyLive(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	raw, err := os.ReadFile(h.config)
	require.NoError(t, err)
	open := strings.Replace(string(raw), `"token"`, `"requesterUids": [12345], "token"`, 1)
	require.NoError(t, os.WriteFile(h.config, []byte(open), 0o600))
	h.dial(t, RoleApprover, "any connection makes the hub look") // as does a 2 s poll
	assert.Equal(t, os.FileMode(0o666), mode(t, h.socket))
	assert.Equal(t, os.FileMode(0o711), mode(t, filepath.Dir(h.socket)))

	require.NoError(t, os.WriteFile(h.config, raw, 0o600))
	deadline := time.Now().Add(5 * time.Second)
	for mode(t, h.socket) != 0o600 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, os.FileMode(0o600), mode(t, h.socket), "the poll closed it again")
	assert.Equal(t, os.FileMode(0o700), mode(t, filepath.Dir(h.socket)))
}

func TestOneHubPerUser(t *testing.T) {
	h := startHub(t)
	_, err := Listen(context.Background(), ServerOptions{ConfigPath: h.config, Socket: h.socket})
	require.Error(t, err)
	assert.Equal(t, "execgate hub already running (pid "+strconv.Itoa(os.Getpid())+", socket "+h.socket+")", err.Error())
	// The first hub is unharmed.
	c := h.dial(t, RoleApprover, "a")
	_, err = c.Status(context.Background())
	require.NoError(t, err)
}

func TestStaleSocket(t *testing.T) {
	dir := shortTempDir(t)
	cfg := filepath.Join(dir, "c.json")
	run := filepath.Join(dir, "run")
	require.NoError(t, os.Mkdir(run, 0o700))
	sock := filepath.Join(run, "hub.sock")

	// A socket file nobody listens on (a crashed hub's) is replaced.
	s, err := Listen(context.Background(), ServerOptions{ConfigPath: cfg, Socket: sock})
	require.NoError(t, err)
	s.ln.Close() // leaves the file behind, like a kill -9
	s.lock.Unlock()
	fi, err := os.Lstat(sock)
	require.NoError(t, err)
	require.Equal(t, os.ModeSocket, fi.Mode().Type())
	s2, err := Listen(context.Background(), ServerOptions{ConfigPath: cfg, Socket: sock})
	require.NoError(t, err)
	s2.Close()

	// Never a regular file or a symbolic link.
	require.NoError(t, os.WriteFile(sock, []byte("precious"), 0o600))
	_, err = Listen(context.Background(), ServerOptions{ConfigPath: cfg, Socket: sock})
	require.ErrorContains(t, err, "is not a socket")
	b, err := os.ReadFile(sock)
	require.NoError(t, err)
	assert.Equal(t, "precious", string(b))
	require.NoError(t, os.Remove(sock))
	require.NoError(t, os.Symlink(cfg, sock))
	_, err = Listen(context.Background(), ServerOptions{ConfigPath: cfg, Socket: sock})
	require.ErrorContains(t, err, "is not a socket")
	_, err = os.Lstat(sock)
	require.NoError(t, err, "symlink kept")
}

func TestDialNoHub(t *testing.T) {
	dir := shortTempDir(t)
	_, err := Dial(context.Background(), DialOptions{Socket: filepath.Join(dir, "none.sock")})
	require.ErrorIs(t, err, ErrNoHub)

	// A stale socket: connection refused.
	s, err := Listen(context.Background(), ServerOptions{ConfigPath: filepath.Join(dir, "c.json"), Socket: filepath.Join(dir, "r", "hub.sock")})
	require.NoError(t, err)
	s.ln.Close()
	defer s.Close()
	_, err = Dial(context.Background(), DialOptions{Socket: s.Socket()})
	require.ErrorIs(t, err, ErrNoHub)
}

func TestListenRefusesCorruptConfig(t *testing.T) {
	dir := shortTempDir(t)
	cfg := filepath.Join(dir, "c.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"version":1,`), 0o600))
	_, err := Listen(context.Background(), ServerOptions{ConfigPath: cfg, Socket: filepath.Join(dir, "hub.sock")})
	require.ErrorContains(t, err, "invalid JSON")
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	assert.Equal(t, `{"version":1,`, string(b), "the hub never rewrites a file it cannot read")
}

// TestStopRemovesSocketFirst: while a hub stops, a client that cannot
// connect never finds the socket file still there. Closing the listener
// before removing the file left a window (17–25 ms under load) in which a
// client saw a socket that nobody listened on. Open connections widen the
// window the shutdown spends killing them.
func TestStopRemovesSocketFirst(t *testing.T) {
	h := startHub(t)
	for range 200 {
		c, err := net.Dial("unix", h.socket)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
	}
	done, probing := make(chan struct{}), make(chan struct{})
	var probes, stale int
	go func() {
		defer close(done)
		for {
			c, err := net.Dial("unix", h.socket)
			probes++
			if err == nil {
				c.Close()
				if probes == 1 {
					close(probing)
				}
				continue
			}
			// Dialing failed: the file must be gone already.
			if _, err := os.Lstat(h.socket); err == nil {
				stale++
			}
			return
		}
	}()
	<-probing
	h.stop()
	<-done
	assert.Zero(t, stale, "a socket file nobody listens on (after %d probes)", probes)
	_, err := os.Lstat(h.socket)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
