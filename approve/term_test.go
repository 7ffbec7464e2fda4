//go:build unix

package approve

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/term"

	"github.com/execgate/execgate/hub"
)

// terminal is the far side of a pty: what Run draws, and a keyboard.
type terminal struct {
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
}

func (tm *terminal) read() {
	buf := make([]byte, 4096)
	for {
		n, err := tm.master.Read(buf)
		tm.mu.Lock()
		tm.out.Write(buf[:n])
		tm.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (tm *terminal) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

func (tm *terminal) waitFor(t *testing.T, s string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(tm.output(), s) }, 5*time.Second, 10*time.Millisecond,
		"waiting for %q; screen so far: %q", s, tm.output())
}

func TestRunOnPty(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	require.NoError(t, pty.Setsize(tty, &pty.Winsize{Rows: 30, Cols: 100}))
	before, err := term.GetState(int(tty.Fd()))
	require.NoError(t, err)
	tm := &terminal{master: master}
	go tm.read()

	c := &clock{t: time.Now()}
	src := newFake()
	o := Options{
		Dial:  func(context.Context) (Source, error) { return src, nil },
		Bell:  true,
		Color: true,
		Name:  "approve@test",
	}
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), tty, tty, o) }()
	tm.waitFor(t, "no pending requests")
	raw, err := term.GetState(int(tty.Fd()))
	require.NoError(t, err)
	assert.NotEqual(t, before, raw, "the terminal is in raw mode while the approver runs")

	a := approval(c, "pty00001", "terraform destroy")
	a.ExpiresAtMs = time.Now().Add(time.Minute).UnixMilli()
	src.events <- event(t, hub.EventRequested, a)
	tm.waitFor(t, "terraform destroy")
	assert.Contains(t, tm.output(), bell)
	time.Sleep(guardTime + 50*time.Millisecond)

	_, err = master.Write([]byte("a"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(src.decisions()) == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"pty00001 " + hub.AllowAlways}, src.decisions())
	tm.waitFor(t, "allowed always by you")

	_, err = master.Write([]byte("q"))
	require.NoError(t, err)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end on q")
	}
	after, err := term.GetState(int(tty.Fd()))
	require.NoError(t, err)
	assert.Equal(t, before, after, "the terminal is restored")
	tm.waitFor(t, leaveScreen)
	assert.True(t, src.closed)
}

func TestRunNeedsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer f.Close()
	err = Run(context.Background(), f, f, Options{})
	require.ErrorContains(t, err, "approve needs a terminal")
}

func TestRunEndsWithContext(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	tm := &terminal{master: master}
	go tm.read()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	o := Options{Dial: func(context.Context) (Source, error) { return nil, hub.ErrNoHub }, Retry: 10 * time.Millisecond}
	go func() { done <- Run(ctx, tty, tty, o) }()
	tm.waitFor(t, "hub not running — retrying")
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end with its context")
	}
}
