//go:build unix

package approve

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hub"
)

// typed decodes what a terminal sent as Bubble Tea does and names the keys
// as the model sees them.
func typed(t *testing.T, in string) []string {
	t.Helper()
	events := make(chan uv.Event, 64)
	r := uv.NewTerminalReader(bytes.NewReader([]byte(in)), "xterm-256color")
	require.NoError(t, r.StreamEvents(context.Background(), events))
	close(events)
	var keys []string
	for ev := range events {
		if k, ok := ev.(uv.KeyPressEvent); ok {
			keys = append(keys, keyName(tea.Key(k)))
		}
	}
	return keys
}

func TestKeyNames(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a", []string{"a"}},
		{"A", []string{"A"}},
		{"jk", []string{"j", "k"}},
		{"\x1b[A", []string{"up"}},
		{"\x1b[B\x1bOA", []string{"down", "up"}},
		{"\x03", []string{"ctrl+c"}},
		{"\x04", []string{"ctrl+d"}},
		{"\x1b", []string{"esc"}},
		{"é", []string{"é"}},
		{"\r\x7f", []string{"enter", "backspace"}},
		// Alt-a, F5, Ctrl-Up, Ctrl-A: nothing in them is a key of the
		// model's, in particular not the "a".
		{"\x1ba", []string{""}},
		{"\x1b[15~", []string{""}},
		{"\x1b[1;5A", []string{""}},
		{"\x01", []string{""}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, typed(t, tt.in), "%q", tt.in)
	}
}

// A mouse or focus report is no key press at all.
func TestReportsAreNoKeys(t *testing.T) {
	for _, in := range []string{"\x1b[I", "\x1b[<0;12;5M"} {
		assert.Empty(t, typed(t, in), "%q", in)
	}
}

func TestPasteKeys(t *testing.T) {
	assert.Equal(t, []string{"o", "k", "enter", "", "é"}, pasteKeys("ok\n\x1bé"))
}

// driven is a driver over a connected model with one request, past the
// guard.
func driven(t *testing.T) (*driver, *fakeSource) {
	t.Helper()
	c := newClock()
	src := newFake(approval(c, "abcd1234", "ls"), approval(c, "efgh5678", "pwd"))
	m := connected(t, c, src, Options{})
	c.advance(guardTime)
	return &driver{ctx: context.Background(), m: m}, src
}

// press gives the driver key presses and ends their burst window.
func press(d *driver, keys ...tea.Key) tea.Cmd {
	for _, k := range keys {
		d.Update(tea.KeyPressMsg(k))
	}
	_, c := d.Update(flushMsg{d.seq})
	return c
}

// TestDriverBurst: keys that come within the burst window of each other
// may move the selection but decide nothing; a key on its own decides.
func TestDriverBurst(t *testing.T) {
	d, src := driven(t)
	assert.Nil(t, press(d, tea.Key{Code: 'j', Text: "j"}, tea.Key{Code: 'o', Text: "o"}))
	assert.Equal(t, "efgh5678", d.m.sel, "moving is fine in a burst")
	assert.Contains(t, d.m.status, "one key at a time")

	// A flush for an earlier key is no end of the window.
	d.Update(tea.KeyPressMsg{Code: 'o', Text: "o"})
	_, c := d.Update(flushMsg{d.seq - 1})
	assert.Nil(t, c)
	assert.Len(t, d.held, 1)

	c = press(d)
	require.NotNil(t, c)
	assert.IsType(t, resolvedMsg{}, c())
	assert.Equal(t, []string{"efgh5678 " + hub.AllowOnce}, src.decisions())
}

// TestDriverPaste: a bracketed paste decides nothing, even of one key.
func TestDriverPaste(t *testing.T) {
	d, src := driven(t)
	for _, paste := range []string{"o", "a", "d\r", "m"} {
		_, c := d.Update(tea.PasteMsg{Content: paste})
		assert.Nil(t, c, "%q", paste)
	}
	assert.Empty(t, src.decisions())
	assert.Equal(t, modeList, d.m.mode)
}

// TestDriverTicksAndQuits: the clock re-arms itself, and q ends the
// program.
func TestDriverTicksAndQuits(t *testing.T) {
	d, _ := driven(t)
	_, c := d.Update(tickMsg{})
	require.NotNil(t, c)
	start := time.Now()
	assert.IsType(t, tickMsg{}, c())
	assert.GreaterOrEqual(t, time.Since(start), tickEvery/2)

	c = press(d, tea.Key{Code: 'q', Text: "q"})
	require.NotNil(t, c)
	assert.IsType(t, tea.QuitMsg{}, c())
}
