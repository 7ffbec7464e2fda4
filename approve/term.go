//go:build unix

package approve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"golang.org/x/term"
)

// Driver timing.
const (
	tickEvery = 250 * time.Millisecond
	// burstWindow holds each key back this long: keys that come closer
	// together than a person types (a paste without bracketed paste,
	// typeahead) are a burst, which may move the selection but never
	// decide.
	burstWindow = 15 * time.Millisecond
)

// Messages of the driver.
type (
	// flushMsg ends the burst window opened by key number seq.
	flushMsg struct{ seq int }
	// hangupMsg: the terminal is gone.
	hangupMsg struct{ err error }
)

// Run shows the approver on the terminal in/out (normally stdin and
// stdout) until the user quits (q, Ctrl-C, Ctrl-D) or ctx ends, then
// restores the terminal. It keeps trying to reach the hub meanwhile. Cancel
// ctx on SIGTERM and SIGHUP so that the terminal is always restored.
// Bubble Tea owns the terminal: raw mode, the alternate screen, key
// decoding, resizes and redraws.
func Run(ctx context.Context, in, out *os.File, o Options) error {
	if !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return errors.New("approve needs a terminal; in scripts use execgate pending, resolve and watch")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d := &driver{ctx: ctx, m: newModel(o)}
	input := &hangupReader{File: in}
	// The profile is fixed: Options.Color already decided, and detecting
	// it would run `tmux info` inside tmux on every start.
	p := tea.NewProgram(d, tea.WithContext(ctx), tea.WithInput(input), tea.WithOutput(out),
		tea.WithoutSignalHandler(), tea.WithColorProfile(colorprofile.ANSI))
	input.send = p.Send
	_, err := p.Run()
	ended := ctx.Err() != nil
	cancel() // ends the commands still waiting
	if d.m.src != nil {
		_ = d.m.src.Close()
	}
	switch {
	case d.err != nil:
		return d.err
	case ended && errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, tea.ErrProgramPanic):
		return nil
	case err != nil:
		return fmt.Errorf("terminal: %w", err)
	}
	return nil
}

// hangupReader is the terminal's input; it reports the terminal's end,
// which Bubble Tea takes quietly for the end of input, so that approve
// does not stay connected as an approver nobody watches.
type hangupReader struct {
	*os.File
	send func(tea.Msg)
}

func (r *hangupReader) Read(b []byte) (int, error) {
	n, err := r.File.Read(b)
	if n == 0 {
		if err == nil || err == io.EOF {
			err = errors.New("terminal hung up")
		}
		go r.send(hangupMsg{fmt.Errorf("read terminal: %w", err)})
	}
	return n, err
}

// driver adapts the model to Bubble Tea: it turns the terminal's messages
// into the model's, runs the model's commands and renders its rows.
type driver struct {
	ctx context.Context
	m   *model
	// held are the keys of the burst window under way; seq numbers keys.
	held []keyMsg
	seq  int
	err  error
}

// Init starts the first connection and the clock.
func (d *driver) Init() tea.Cmd {
	return tea.Batch(append(d.cmds(d.m.init()), tick())...)
}

func tick() tea.Cmd {
	return tea.Tick(tickEvery, func(time.Time) tea.Msg { return tickMsg{} })
}

// Update turns one message into the model's and returns its commands.
func (d *driver) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		d.seq++
		d.held = append(d.held, keyMsg{key: keyName(msg.Key())})
		seq := d.seq
		return d, tea.Tick(burstWindow, func(time.Time) tea.Msg { return flushMsg{seq} })
	case tea.PasteMsg:
		// Bracketed paste: every key in it is a burst.
		for _, k := range pasteKeys(msg.Content) {
			cmds = append(cmds, d.cmds(d.m.update(keyMsg{key: k, burst: true}))...)
		}
	case flushMsg:
		if msg.seq != d.seq {
			return d, nil // more keys came: a later flush takes them all
		}
		held := d.held
		d.held = nil
		for _, k := range held {
			k.burst = len(held) > 1
			cmds = append(cmds, d.cmds(d.m.update(k))...)
		}
	case tea.WindowSizeMsg:
		d.m.update(resizeMsg{width: msg.Width, height: msg.Height})
	case tickMsg:
		d.m.update(msg)
		cmds = append(cmds, tick())
	case hangupMsg:
		d.err = msg.err
		return d, tea.Quit
	default:
		cmds = d.cmds(d.m.update(msg))
	}
	if d.m.quit {
		return d, tea.Quit
	}
	if d.m.bell {
		d.m.bell = false
		cmds = append(cmds, tea.Raw("\a"))
	}
	return d, tea.Batch(cmds...)
}

// cmds wraps the model's commands; their results come back to Update.
func (d *driver) cmds(cs []cmd) []tea.Cmd {
	out := make([]tea.Cmd, 0, len(cs))
	for _, c := range cs {
		out = append(out, func() tea.Msg { return c.run(d.ctx) })
	}
	return out
}

// View draws the model's rows on the alternate screen.
func (d *driver) View() tea.View {
	v := tea.NewView(strings.Join(d.m.view(), "\n"))
	v.AltScreen = true
	return v
}

// keyName names a key as the model knows them: a printable rune (or
// grapheme) is itself, and "up", "down", "left", "right", "enter",
// "backspace", "esc", "ctrl+c" and "ctrl+d"; any other key or chord is "",
// so that the "a" of Alt-a allows nothing.
func keyName(k tea.Key) string {
	const chords = tea.ModCtrl | tea.ModAlt | tea.ModMeta | tea.ModHyper | tea.ModSuper
	if k.Text != "" && k.Mod&chords == 0 {
		return k.Text
	}
	switch s := k.Keystroke(); s {
	case "up", "down", "left", "right", "enter", "backspace", "esc", "ctrl+c", "ctrl+d":
		return s
	}
	return ""
}

// pasteKeys are the keys a pasted text stands for: its runes, Return for a
// line end, "" for other control characters.
func pasteKeys(s string) []string {
	var keys []string
	for _, r := range s {
		switch {
		case r == '\r' || r == '\n':
			keys = append(keys, "enter")
		case r < 0x20 || r == 0x7f:
			keys = append(keys, "")
		default:
			keys = append(keys, string(r))
		}
	}
	return keys
}
