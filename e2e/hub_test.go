package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hub"
)

// startHub runs `execgate hub` in the world until the test ends and waits
// until it answers.
func (w *world) startHub() {
	t := w.t
	t.Helper()
	cmd := exec.Command(w.exe, "hub")
	cmd.Env, cmd.Dir = w.env, w.work
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	must(t, cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := w.dialHub(hub.RoleApprover)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("hub exited: %s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("hub did not answer: %v\n%s", err, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *world) dialHub(role hub.Role) (*hub.Client, error) {
	cfg, _, _, err := config.Load(w.configPath())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(w.t.Context(), 2*time.Second)
	defer cancel()
	return hub.Dial(ctx, hub.DialOptions{Socket: filepath.Join(w.runtime, "execgate", "hub.sock"),
		Token: cfg.Socket.Token, Role: role, Name: "e2e-" + string(role)})
}

// approveAll is a scripted approver: it answers every request with
// decision and reports the commands it was shown.
func (w *world) approveAll(decision string) (shown func() []string) {
	t := w.t
	t.Helper()
	c, err := w.dialHub(hub.RoleApprover)
	must(t, err)
	t.Cleanup(func() { c.Close() })
	events, err := c.Subscribe(t.Context())
	must(t, err)
	var mu sync.Mutex
	var commands []string
	go func() {
		for ev := range events {
			if ev.Name != hub.EventRequested {
				continue
			}
			var ap hub.Approval
			if json.Unmarshal(ev.Payload, &ap) != nil {
				continue
			}
			mu.Lock()
			commands = append(commands, ap.Command)
			mu.Unlock()
			c.Resolve(t.Context(), ap.ID, decision)
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), commands...)
	}
}

// lockedBuffer is written by exec's copying goroutine while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
