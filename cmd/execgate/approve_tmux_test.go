package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hub"
)

// notAnswered fails when req gets an answer within a while.
func notAnswered(t *testing.T, req *asked, why string) {
	t.Helper()
	select {
	case <-req.done:
		t.Fatalf("%s: the request was answered: %+v", why, req.ans)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestApproveInTmux runs `execgate approve` in a tmux pane, as many people
// keep it: typeahead and pastes (tmux pastes bracketed when the
// application asks for it) decide nothing, the layout follows the pane's
// size, one key decides, and q leaves the pane.
func TestApproveInTmux(t *testing.T) {
	bin := wiredBinary(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	e := newHubCLIEnv(t)
	e.startHub(t)
	sockDir, err := os.MkdirTemp("", "approve-tmux-") // short: socket paths are limited
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	p := &tmuxPane{t: t, sock: filepath.Join(sockDir, "sock"), env: append(os.Environ(), "TERM=xterm-256color")}
	t.Cleanup(func() { p.tmux("kill-server") })
	_, err = p.tmux("-f", "/dev/null", "new-session", "-d", "-s", "gate", "-x", "100", "-y", "30", bin, "approve", "--no-bell")
	require.NoError(t, err)
	p.waitFor("no pending requests", 1)
	p.waitFor("o once · a always · d deny", 1)

	req := e.request(t, "tmuxreq001", "terraform destroy")
	p.waitFor("terraform destroy", 2)  // the row and the details
	time.Sleep(600 * time.Millisecond) // past the guard after an arrival

	// Typeahead: two keys in one write.
	_, err = p.tmux("send-keys", "-t", "gate", "-l", "ao")
	require.NoError(t, err)
	p.waitFor("ignored keys that came all at once", 1)
	notAnswered(t, req, "typeahead")

	// A paste of one decision key.
	_, err = p.tmux("set-buffer", "o")
	require.NoError(t, err)
	_, err = p.tmux("paste-buffer", "-p", "-t", "gate")
	require.NoError(t, err)
	notAnswered(t, req, "a one-key paste")

	// A narrow pane: the short key line.
	_, err = p.tmux("resize-window", "-t", "gate", "-x", "40", "-y", "30")
	require.NoError(t, err)
	p.waitFor("o/a/d · j/k · ? · q", 1)

	_, err = p.tmux("send-keys", "-t", "gate", "d")
	require.NoError(t, err)
	ans := req.wait(t)
	require.NotNil(t, ans.Decision)
	assert.Equal(t, hub.Deny, *ans.Decision)
	p.waitFor("denied by you", 1)

	_, err = p.tmux("send-keys", "-t", "gate", "q")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := p.tmux("has-session", "-t", "gate")
		return err != nil
	}, 10*time.Second, 20*time.Millisecond, "approve did not quit on q; screen:\n%s", p.screen())
}
