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
	assert.Contains(t, tm.output(), "\a", "the bell rang")
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
	tm.waitFor(t, "\x1b[?1049l")
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

// TestRunPasteNeverDecides: on a real terminal, keys typed ahead in one
// go and a bracketed paste (even of a single key) decide nothing, and with
// the bell off a request arrives in silence; a key on its own decides.
func TestRunPasteNeverDecides(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	require.NoError(t, pty.Setsize(tty, &pty.Winsize{Rows: 30, Cols: 100}))
	tm := &terminal{master: master}
	go tm.read()
	c := &clock{t: time.Now()}
	src := newFake()
	o := Options{Dial: func(context.Context) (Source, error) { return src, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, tty, tty, o) }()
	tm.waitFor(t, "no pending requests")

	a := approval(c, "pty00002", "terraform destroy")
	a.ExpiresAtMs = time.Now().Add(time.Minute).UnixMilli()
	src.events <- event(t, hub.EventRequested, a)
	tm.waitFor(t, "terraform destroy")
	time.Sleep(guardTime + 50*time.Millisecond)

	for _, keys := range []string{"ao", "\x1b[200~o\x1b[201~", "\x1b[200~a\x1b[201~"} {
		_, err = master.Write([]byte(keys))
		require.NoError(t, err)
		time.Sleep(200 * time.Millisecond)
		assert.Empty(t, src.decisions(), "%q decided", keys)
	}
	tm.waitFor(t, "ignored keys that came all at once")
	assert.NotContains(t, tm.output(), "\a", "the bell is off")

	_, err = master.Write([]byte("d"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(src.decisions()) == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"pty00002 " + hub.Deny}, src.decisions())
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end with its context")
	}
}

// TestRunEndsWhenTerminalHangsUp: a terminal that goes away ends the
// approver with an error, so that it does not stay connected to the hub
// as an approver nobody watches.
func TestRunEndsWhenTerminalHangsUp(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer tty.Close()
	src := newFake()
	o := Options{Dial: func(context.Context) (Source, error) { return src, nil }}
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), tty, tty, o) }()
	// Read here, not in a goroutine: a read left pending would keep the
	// master open.
	var screen []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(screen, []byte("no pending requests")) {
		n, err := master.Read(buf)
		require.NoError(t, err)
		screen = append(screen, buf[:n]...)
	}
	require.NoError(t, master.Close())
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end when the terminal hung up")
	}
	require.Eventually(t, func() bool { return src.isClosed() }, time.Second, 10*time.Millisecond,
		"the hub connection is closed")
}

func (f *fakeSource) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}
