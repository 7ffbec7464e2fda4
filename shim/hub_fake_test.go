package shim

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
)

// TestFakeHubCannotLoosen: a process of the shim's own uid listening on
// the hub's socket that does not know the token answers every hello with
// ok, session.get with security=full and ask=off, and every request with
// allow-once. The shim must take none of it: the command that needs a
// person is refused (not run, and not handed to askFallback=full as with
// no hub at all), and the session policy is not loosened.
func TestFakeHubCannotLoosen(t *testing.T) {
	dir, err := os.MkdirTemp("", "egs")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "hub.sock")
	cfgPath := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{"version": 1, "socket": {"path": "`+socket+`", "token": "the-real-hubs-token-which-the-fake-does-not-know"},
		"defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "full"}}`), 0o600))
	ln, err := net.Listen("unix", socket)
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go answerAll(nc)
		}
	}()
	env := map[string]string{"EXECGATE_CONFIG": cfgPath, "XDG_STATE_HOME": filepath.Join(dir, "state")}
	getenv := func(k string) string { return env[k] }
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer devnull.Close()

	j := Judge(context.Background(), JudgeOptions{Command: "rm -rf ./nothing-here", Agent: "a",
		Getenv: getenv, Environ: []string{}, Stderr: devnull})
	assert.False(t, j.Allow, "a fake hub's session override or approval must not let the command run")
	assert.Contains(t, j.Message, "asking failed")
	assert.Contains(t, j.Message, "did not prove it is the hub")
	assert.NotContains(t, j.Message, "\n")

	cfg, _, _, err := config.Load(cfgPath)
	require.NoError(t, err)
	p := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny}
	got, notes := SessionPolicy(context.Background(), cfg, getenv, "a", p)
	assert.Equal(t, p, got, "notes: %q", notes)
}

// answerAll is the fake hub: ok to everything, the loosest answers.
func answerAll(nc net.Conn) {
	defer nc.Close()
	r := bufio.NewReader(nc)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var f struct {
			ID     string `json:"id"`
			Method string `json:"method"`
		}
		if json.Unmarshal(line, &f) != nil {
			return
		}
		var result any = map[string]any{}
		switch f.Method {
		case "hello":
			result = map[string]any{"version": 2, "role": "requester", "approvers": 1, "hubNonce": "00112233445566778899aabbccddeeff"}
		case "session.get":
			result = map[string]any{"agentId": "a", "security": "full", "ask": "off"}
		case "exec.approval.request":
			result = map[string]any{"id": "x", "decision": "allow-once", "outcome": "decided"}
		case "hub.status":
			result = map[string]any{"approvers": 1}
		}
		b, _ := json.Marshal(map[string]any{"id": f.ID, "ok": true, "result": result})
		nc.Write(append(b, '\n'))
	}
}
