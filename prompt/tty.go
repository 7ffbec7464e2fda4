package prompt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/execgate/execgate/internal/display"
	"golang.org/x/term"
)

// TTY asks on a terminal device, normally the controlling terminal. It never
// uses stdin or stdout: agents connect those to /dev/null or pipes.
//
// The screen shows the command (one row per source line, each marked with
// "|"; rows wrapped to fit the terminal are indented instead), the cwd, agent,
// risk and reasons, all through display.Escape, then a countdown. Keys: o allows
// once, a allows always, d or n denies, and so do Esc, Ctrl-C and Ctrl-D.
// Only a lone key press can allow: a read holding several bytes (a paste, an
// escape sequence) is ignored unless it holds Ctrl-C or Ctrl-D, which deny.
// Keys typed before the question appears are discarded.
//
// The screen also shows what "always" would save for each segment. After
// a, where a segment has more than one scope to choose from (the exact
// command, or a wider pattern), the prompt lists them narrowest first and
// a digit picks one, Enter the narrowest; s saves nothing for that
// segment; Esc, Ctrl-C or d deny.
//
// Prompts on one terminal take turns: a second Ask waits (up to its Timeout,
// without showing anything) until the first is answered. Cancel ctx on
// signals so the terminal is always restored from raw mode.
type TTY struct {
	// Path is the terminal to open; empty means /dev/tty.
	Path string
	// Now reads the clock for the countdown; nil means time.Now.
	Now func() time.Time
	// Getenv reads TERM and NO_COLOR to choose colour and in-place
	// redraws; nil means os.Getenv.
	Getenv func(string) string
}

// Answer.By for the terminal channel.
const byTTY = "tty"

// Key bytes that deny.
const (
	keyCtrlC = 0x03
	keyCtrlD = 0x04
	keyEsc   = 0x1b
)

// defaultWidth is assumed when the terminal does not report its size.
const defaultWidth = 80

// Ask implements Asker. It returns an error wrapping ErrUnavailable when Path
// cannot be opened or is not a terminal, and ctx's error (after restoring
// the terminal) when ctx ends first.
func (t TTY) Ask(ctx context.Context, r Request) (ans Answer, err error) {
	if err := ctx.Err(); err != nil {
		return Answer{}, fmt.Errorf("prompt: %w", err)
	}
	path := t.Path
	if path == "" {
		path = "/dev/tty"
	}
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return Answer{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer f.Close()
	// Fd also switches the file to blocking reads, which pollMode's timed
	// reads rely on.
	fd := int(f.Fd())
	if !term.IsTerminal(fd) {
		return Answer{}, fmt.Errorf("%w: %s is not a terminal", ErrUnavailable, path)
	}

	now := t.Now
	if now == nil {
		now = time.Now
	}
	got, err := waitLock(ctx, fd, now, r.Timeout)
	if err != nil {
		return Answer{}, fmt.Errorf("prompt: lock %s: %w", path, err)
	}
	if !got {
		return Answer{Decision: Deny, By: byTTY, TimedOut: true}, nil
	}

	old, err := term.MakeRaw(fd)
	if err != nil {
		return Answer{}, fmt.Errorf("prompt: raw mode on %s: %w", path, err)
	}
	defer func() {
		if rerr := term.Restore(fd, old); rerr != nil && err == nil {
			// The terminal is left unusable; do not act on the answer.
			ans, err = Answer{}, fmt.Errorf("prompt: restore %s: %w", path, rerr)
		}
	}()
	if err := pollMode(fd); err != nil {
		return Answer{}, fmt.Errorf("prompt: set up %s: %w", path, err)
	}

	getenv := t.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	termName := getenv("TERM")
	s := &screen{
		w:     f,
		ansi:  termName != "" && termName != "dumb",
		width: defaultWidth,
	}
	s.color = s.ansi && getenv("NO_COLOR") == ""
	if w, _, err := term.GetSize(fd); err == nil && w > 0 {
		s.width = w
	}
	ans, err = s.converse(ctx, f, now, r)
	if err != nil {
		return Answer{}, fmt.Errorf("prompt: %s: %w", path, err)
	}
	return ans, nil
}

// waitLock takes the terminal's lock, polling until ctx ends or, when
// timeout is positive, until timeout has passed (got is then false).
func waitLock(ctx context.Context, fd int, now func() time.Time, timeout time.Duration) (got bool, err error) {
	deadline := now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if got, err := tryLock(fd); got || err != nil {
			return got, err
		}
		if timeout > 0 && !now().Before(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-tick.C:
		}
	}
}

// screen draws on a terminal in raw mode, where "\r\n" must be explicit.
type screen struct {
	w     io.Writer
	ansi  bool // in-place redraw with CSI K; otherwise overwrite with spaces
	color bool
	width int
	// drawn is the width of the status line now on screen, if onStatus.
	drawn    int
	onStatus bool
}

// converse shows r, then reads keys from in until a decision, the timeout
// or the end of ctx.
func (s *screen) converse(ctx context.Context, in io.Reader, now func() time.Time, r Request) (Answer, error) {
	if err := s.write(s.render(r)); err != nil {
		return Answer{}, err
	}
	var deadline time.Time
	if r.Timeout > 0 {
		deadline = now().Add(r.Timeout)
	}
	buf := make([]byte, 64)
	shown, hint, redraw := -1, false, true
	quickEOFs := 0
	for {
		if err := ctx.Err(); err != nil {
			return Answer{}, errors.Join(err, s.finish("cancelled"))
		}
		left := 0
		if !deadline.IsZero() {
			rem := deadline.Sub(now())
			if rem <= 0 {
				ans := Answer{Decision: Deny, By: byTTY, TimedOut: true}
				return ans, s.finish(fmt.Sprintf("no answer within %v; approval timed out", r.Timeout))
			}
			left = int((rem + time.Second - 1) / time.Second)
		}
		if redraw || left != shown {
			if err := s.status(hint, left); err != nil {
				return Answer{}, err
			}
			shown, redraw = left, false
		}

		start := time.Now()
		n, err := in.Read(buf)
		if err != nil && !errors.Is(err, io.EOF) {
			return Answer{}, fmt.Errorf("read: %w", err)
		}
		if n == 0 {
			// A timed read lasts pollInterval; a terminal that hung up
			// returns at once, every time.
			if time.Since(start) < 10*time.Millisecond {
				quickEOFs++
				if quickEOFs > 20 {
					return Answer{}, errors.New("terminal hung up")
				}
			} else {
				quickEOFs = 0
			}
			continue
		}
		quickEOFs = 0
		d, ok := decide(buf[:n])
		if !ok {
			hint, redraw = true, !hint
			continue
		}
		if d == AllowAlways && needsChoice(r.Proposals) {
			return s.chooseScopes(ctx, in, now, deadline, r)
		}
		ans := Answer{Decision: d, By: byTTY}
		if d == AllowAlways {
			ans.Patterns = narrowest(r.Proposals)
		}
		return ans, s.finish(outcome(d))
	}
}

// needsChoice reports whether some segment has more than one scope.
func needsChoice(ps []Proposal) bool {
	for _, p := range ps {
		if len(p.Patterns) > 1 {
			return true
		}
	}
	return false
}

// narrowest is each proposal's first pattern, nil without proposals.
func narrowest(ps []Proposal) []string {
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		if len(p.Patterns) > 0 {
			out[i] = p.Patterns[0]
		}
	}
	return out
}

// chooseScopes asks, for each segment with more than one scope, which one
// "always" saves. A deny key, the timeout or ctx ends it as a deny.
func (s *screen) chooseScopes(ctx context.Context, in io.Reader, now func() time.Time, deadline time.Time, r Request) (Answer, error) {
	chosen := narrowest(r.Proposals)
	buf := make([]byte, 64)
	for i, p := range r.Proposals {
		if len(p.Patterns) < 2 {
			continue
		}
		if err := s.write(s.clearLine() + s.renderScopes(p)); err != nil {
			return Answer{}, err
		}
		s.onStatus = false
		prompt := fmt.Sprintf("save which? [1-%d], Enter = 1, [s]kip, [d]eny", len(p.Patterns))
		shown := -1
		quickEOFs := 0
		for picked := false; !picked; {
			if err := ctx.Err(); err != nil {
				return Answer{}, errors.Join(err, s.finish("cancelled"))
			}
			left := 0
			if !deadline.IsZero() {
				rem := deadline.Sub(now())
				if rem <= 0 {
					return Answer{Decision: Deny, By: byTTY, TimedOut: true}, s.finish(fmt.Sprintf("no answer within %v; approval timed out", r.Timeout))
				}
				left = int((rem + time.Second - 1) / time.Second)
			}
			if left != shown {
				line := prompt
				if left > 0 {
					line += fmt.Sprintf(" %ds", left)
				}
				if err := s.statusLine(line); err != nil {
					return Answer{}, err
				}
				shown = left
			}
			start := time.Now()
			n, err := in.Read(buf)
			if err != nil && !errors.Is(err, io.EOF) {
				return Answer{}, fmt.Errorf("read: %w", err)
			}
			if n == 0 {
				if time.Since(start) < 10*time.Millisecond {
					if quickEOFs++; quickEOFs > 20 {
						return Answer{}, errors.New("terminal hung up")
					}
				}
				continue
			}
			quickEOFs = 0
			pick, deny, ok := scopeKey(buf[:n], len(p.Patterns))
			switch {
			case deny:
				return Answer{Decision: Deny, By: byTTY}, s.finish(outcome(Deny))
			case !ok:
				continue
			case pick < 0:
				chosen[i] = ""
			default:
				chosen[i] = p.Patterns[pick]
			}
			picked = true
		}
	}
	return Answer{Decision: AllowAlways, By: byTTY, Patterns: chosen}, s.finish(outcome(AllowAlways))
}

// scopeKey maps one read during the scope choice: a digit 1..n picks that
// scope, Enter the first, s none (-1); a deny key denies. Like the main
// keys, only a lone key press counts.
func scopeKey(keys []byte, n int) (pick int, deny, ok bool) {
	if len(keys) != 1 {
		return 0, bytes.IndexByte(keys, keyCtrlC) >= 0 || bytes.IndexByte(keys, keyCtrlD) >= 0, false
	}
	k := keys[0]
	switch {
	case k >= '1' && k <= '9' && int(k-'0') <= n:
		return int(k - '1'), false, true
	case k == '\r' || k == '\n':
		return 0, false, true
	case k == 's' || k == 'S':
		return -1, false, true
	case k == 'd' || k == 'D' || k == 'n' || k == 'N' || k == keyEsc || k == keyCtrlC || k == keyCtrlD:
		return 0, true, false
	}
	return 0, false, false
}

// renderScopes lists one segment's scopes, numbered narrowest first.
func (s *screen) renderScopes(p Proposal) string {
	var b strings.Builder
	b.WriteString("\r\n")
	s.field(&b, "always", []string{p.Text}, "for ", "")
	lines := make([]string, len(p.Patterns))
	for i, pat := range p.Patterns {
		lines[i] = fmt.Sprintf("[%d] %s%s", i+1, pat, scopeNote(pat, i))
	}
	s.field(&b, "", lines, "", "")
	return b.String()
}

// scopeNote says in words what a scope covers.
func scopeNote(pat string, i int) string {
	switch {
	case strings.HasSuffix(pat, " $"):
		return "  (this exact command)"
	case strings.HasSuffix(pat, " **"):
		return "  (with any further arguments)"
	case i == 0:
		return "  (these words, then any)"
	}
	return ""
}

// decide maps what one read returned to a decision.
func decide(keys []byte) (Decision, bool) {
	if len(keys) == 1 {
		switch keys[0] {
		case 'o', 'O':
			return AllowOnce, true
		case 'a', 'A':
			return AllowAlways, true
		case 'd', 'D', 'n', 'N', keyEsc, keyCtrlC, keyCtrlD:
			return Deny, true
		}
		return "", false
	}
	if bytes.IndexByte(keys, keyCtrlC) >= 0 || bytes.IndexByte(keys, keyCtrlD) >= 0 {
		return Deny, true
	}
	return "", false
}

// outcome is the closing line's text for d.
func outcome(d Decision) string {
	switch d {
	case AllowOnce:
		return "allowed once"
	case AllowAlways:
		return "allowed always"
	}
	return "denied"
}

// SGR sequences used when colour is on.
const (
	sgrBold   = "\x1b[1m"
	sgrRed    = "\x1b[1;31m"
	sgrYellow = "\x1b[33m"
	sgrReset  = "\x1b[0m"
)

// riskStyle colours a risk grade.
func riskStyle(risk string) string {
	switch risk {
	case "dangerous":
		return sgrRed
	case "needs-review":
		return sgrYellow
	}
	return ""
}

// Layout: a label column, then the value. labelCells is its width.
const (
	labelFormat = "  %-7s  "
	labelCells  = 11
)

// render lays out the question above the status line.
func (s *screen) render(r Request) string {
	var b strings.Builder
	b.WriteString(s.style(sgrBold, "execgate: approve this command?"))
	b.WriteString("\r\n")
	s.field(&b, "command", strings.Split(r.Command, "\n"), "| ", "")
	fields := []struct{ label, value, style string }{
		{"cwd", r.Cwd, ""},
		{"agent", r.Agent, ""},
		{"via", r.Via, ""},
		{"risk", r.Risk, riskStyle(r.Risk)},
	}
	for _, f := range fields {
		if f.value != "" {
			s.field(&b, f.label, []string{f.value}, "", f.style)
		}
	}
	if len(r.Reasons) > 0 {
		s.field(&b, "reasons", r.Reasons, "- ", "")
	}
	if always := alwaysLines(r.Proposals); len(always) > 0 {
		s.field(&b, "always", always, "", "")
	}
	return b.String()
}

// alwaysLines say what [a]lways may save, one line per segment: its
// scopes, narrowest first, or that nothing describes it.
func alwaysLines(ps []Proposal) []string {
	var out []string
	for _, p := range ps {
		if len(p.Patterns) == 0 {
			out = append(out, "nothing for "+p.Text+" (it will be asked again)")
			continue
		}
		out = append(out, strings.Join(p.Patterns, "  or  "))
	}
	return out
}

// field writes one labelled value of several lines, each escaped, starting
// with marker and wrapped to the terminal's width, so that no part of a
// value can reach the first column where the prompt's own lines start.
func (s *screen) field(b *strings.Builder, label string, lines []string, marker, style string) {
	indent := strings.Repeat(" ", labelCells)
	// One column spare: some terminals scroll as soon as the last is used.
	avail := max(s.width-labelCells-len(marker)-1, 8)
	for i, line := range lines {
		if i == 0 {
			fmt.Fprintf(b, labelFormat, label)
		} else {
			b.WriteString(indent)
		}
		if line == "" {
			b.WriteString(strings.TrimSpace(marker))
		} else {
			b.WriteString(marker)
		}
		b.WriteString(s.styleOn(style))
		used := 0
		for tok := range display.Tokens(line) {
			if used > 0 && used+tok.Cells > avail {
				b.WriteString(s.styleOff(style))
				b.WriteString("\r\n")
				b.WriteString(indent)
				b.WriteString(strings.Repeat(" ", len(marker)))
				b.WriteString(s.styleOn(style))
				used = 0
			}
			b.WriteString(tok.Text)
			used += tok.Cells
		}
		b.WriteString(s.styleOff(style))
		b.WriteString("\r\n")
	}
}

// status draws the key line in place, with the seconds left when left > 0.
func (s *screen) status(hint bool, left int) error {
	line := "allow [o]nce, [a]lways, or [d]eny?"
	if hint {
		line += " (keys: o a d)"
	}
	if left > 0 {
		line += fmt.Sprintf(" %ds", left)
	}
	return s.statusLine(line)
}

// statusLine draws line (the prompt's own text) as the status line.
func (s *screen) statusLine(line string) error {
	// A status line that wrapped could not be redrawn in place.
	line = line[:min(len(line), max(s.width-1, 1))]
	err := s.write(s.clearLine() + line)
	s.drawn, s.onStatus = len(line), true
	return err
}

// finish replaces the status line with a closing line and leaves the cursor
// at the start of a fresh line for the command's own output.
func (s *screen) finish(msg string) error {
	return s.write(s.clearLine() + "execgate: " + msg + "\r\n")
}

// clearLine returns to the start of the status line and blanks it.
func (s *screen) clearLine() string {
	if !s.onStatus {
		return ""
	}
	if s.ansi {
		return "\r\x1b[K"
	}
	return "\r" + strings.Repeat(" ", s.drawn) + "\r"
}

func (s *screen) style(sgr, text string) string {
	return s.styleOn(sgr) + text + s.styleOff(sgr)
}

func (s *screen) styleOn(sgr string) string {
	if !s.color || sgr == "" {
		return ""
	}
	return sgr
}

func (s *screen) styleOff(sgr string) string {
	if !s.color || sgr == "" {
		return ""
	}
	return sgrReset
}

func (s *screen) write(text string) error {
	if _, err := io.WriteString(s.w, text); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
