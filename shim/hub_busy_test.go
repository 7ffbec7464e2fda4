package shim

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hub"
)

// TestHubBusyFailsClosed: a hub that runs but has no room for the shim's
// connection (hub.ErrCodeBusy, as when the agent's uid floods it) refuses
// the command, in one line, although askFallback=full would run it had no
// hub been running at all. Otherwise an agent could flood the hub to get
// past it.
func TestHubBusyFailsClosed(t *testing.T) {
	dir, err := os.MkdirTemp("", "egs") // short: Unix socket paths are limited
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "run", "hub.sock")
	cfgPath := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{"version": 1, "socket": {"path": "`+socket+`"},
		"defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "full"}}`), 0o600))
	env := map[string]string{"EXECGATE_CONFIG": cfgPath, "XDG_STATE_HOME": filepath.Join(dir, "state")}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer devnull.Close()
	judge := func() Judgement {
		return Judge(context.Background(), JudgeOptions{Command: "rm -rf ./nothing-here", Agent: "a",
			Getenv: func(k string) string { return env[k] }, Environ: []string{}, Stderr: devnull})
	}

	// A hub with room for two connections, both taken.
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := hub.Listen(ctx, hub.ServerOptions{ConfigPath: cfgPath, Limits: hub.Limits{Conns: 2, OwnerConns: 1}})
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-served }) }
	defer stop()
	cfg, _, _, err := config.Load(cfgPath)
	require.NoError(t, err)
	for _, role := range []hub.Role{hub.RoleApprover, hub.RoleRequester} {
		c, err := hub.Dial(ctx, hub.DialOptions{Socket: socket, Token: cfg.Socket.Token, Role: role})
		require.NoError(t, err)
		defer c.Close()
	}

	j := judge()
	assert.False(t, j.Allow, "a busy hub must not let the command run")
	assert.False(t, j.Unanswered)
	assert.Equal(t, ByFallback, j.DecidedBy)
	assert.Contains(t, j.Message, "asking failed")
	assert.Contains(t, j.Message, "BUSY: the hub has no room for another connection")
	assert.NotContains(t, j.Message, "\n")

	// With no hub at all, askFallback applies: the refusal above is the
	// busy hub's doing, not the policy's.
	stop()
	j = judge()
	assert.True(t, j.Allow, j.Message)
	assert.True(t, j.Unanswered)
	assert.False(t, strings.Contains(j.Message, "BUSY"))
}

// TestHubSilentRefusalFailsClosed: something listens on the hub's socket
// but closes each connection without a word (a hub past its refusal
// budget) or never answers the hello: the command is refused, not handed
// to askFallback=full as with no hub at all.
func TestHubSilentRefusalFailsClosed(t *testing.T) {
	for _, mode := range []string{"close", "silent"} {
		t.Run(mode, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "egs")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(dir) })
			socket := filepath.Join(dir, "hub.sock")
			cfgPath := filepath.Join(dir, "config.json")
			require.NoError(t, os.WriteFile(cfgPath, []byte(`{"version": 1, "socket": {"path": "`+socket+`"},
		"defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "full"}}`), 0o600))
			ln, err := net.Listen("unix", socket)
			require.NoError(t, err)
			defer ln.Close()
			var held []net.Conn
			var mu sync.Mutex
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					if mode == "close" {
						c.Close()
						continue
					}
					mu.Lock()
					held = append(held, c) // says nothing until the test ends
					mu.Unlock()
				}
			}()
			t.Cleanup(func() {
				mu.Lock()
				defer mu.Unlock()
				for _, c := range held {
					c.Close()
				}
			})
			env := map[string]string{"EXECGATE_CONFIG": cfgPath, "XDG_STATE_HOME": filepath.Join(dir, "state")}
			devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			require.NoError(t, err)
			defer devnull.Close()
			j := Judge(context.Background(), JudgeOptions{Command: "rm -rf ./nothing-here", Agent: "a",
				Getenv: func(k string) string { return env[k] }, Environ: []string{}, Stderr: devnull})
			assert.False(t, j.Allow, "a hub that lets nobody in must not let the command run")
			assert.Contains(t, j.Message, "asking failed")
		})
	}
}
