package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/approve"
	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/internal/state"
)

// exitNoHub is the status of a hub command when no hub runs.
const exitNoHub = 3

// Detached start-up.
const (
	// detachWait bounds how long hub --detach waits for the new hub.
	detachWait = 10 * time.Second
	detachPoll = 50 * time.Millisecond
	// defaultElevation is how long session elevate lasts without --for.
	defaultElevation = 30 * time.Minute
)

// hubCommands returns the hub and approver subcommands: hub, approve,
// pending, resolve, watch and session.
func hubCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{
		newHubCmd(g), newApproveCmd(g), newPendingCmd(g), newResolveCmd(g), newWatchCmd(g), newSessionCmd(g), newWebCmd(g),
	}
}

// noArgs rejects arguments with a usage line naming the command.
func noArgs(use string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("%s takes no arguments, got %s", use, strconv.Quote(args[0]))
		}
		return nil
	}
}

// hubTarget reads where the hub listens and the token from the
// configuration. It is read afresh on every call: the hub creates the
// token on its first start.
func hubTarget(g *globals) (socket, token string, err error) {
	path := configPath(g)
	cfg, _, _, err := config.Load(path)
	if err != nil {
		return "", "", unusableLine(g, err)
	}
	socket, err = hub.SocketPath(cfg, g.getenv)
	if err != nil {
		return "", "", err
	}
	return socket, cfg.Socket.Token, nil
}

// dialApprover connects to the hub as an approver named name.
func dialApprover(ctx context.Context, g *globals, name string) (*hub.Client, string, error) {
	return dialAs(ctx, g, hub.DialOptions{Role: hub.RoleApprover, Name: name})
}

// dialAs connects to the hub with o's role, name and kind, filling in
// where the hub listens and the token.
func dialAs(ctx context.Context, g *globals, o hub.DialOptions) (*hub.Client, string, error) {
	socket, token, err := hubTarget(g)
	if err != nil {
		return nil, socket, err
	}
	o.Socket, o.Token = socket, token
	c, err := hub.Dial(ctx, o)
	return c, socket, err
}

// connect dials for a one-shot command; with no hub it prints one line
// and the error makes the command exit 3.
func connect(ctx context.Context, g *globals, name string) (*hub.Client, error) {
	return connectAs(ctx, g, hub.DialOptions{Role: hub.RoleApprover, Name: name})
}

// connectAs is connect with o's role and kind.
func connectAs(ctx context.Context, g *globals, o hub.DialOptions) (*hub.Client, error) {
	c, socket, err := dialAs(ctx, g, o)
	if errors.Is(err, hub.ErrNoHub) {
		fmt.Fprintf(g.stderr, "execgate: hub not running (socket %s); start it with: execgate hub --detach\n", socket)
		return nil, exitCodeError{exitNoHub}
	}
	return c, err
}

// clientName labels this client in the hub ("approve@pts/3"): the command
// and the terminal it runs on, else its pid.
func clientName(g *globals, what string) string {
	if f, ok := g.stdin.(*os.File); ok {
		if tty, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil && strings.HasPrefix(tty, "/dev/") {
			return what + "@" + strings.TrimPrefix(tty, "/dev/")
		}
	}
	return what + "@pid" + strconv.Itoa(os.Getpid())
}

// isNotFound reports the hub's NOT_FOUND.
func isNotFound(err error) bool {
	var body *hub.ErrorBody
	return errors.As(err, &body) && body.Code == hub.ErrCodeNotFound
}

// ---- execgate hub ----

func newHubCmd(g *globals) *cobra.Command {
	var detach bool
	cmd := &cobra.Command{
		Use:   "hub [--detach]",
		Short: "Run the approval hub that shims ask and approvers answer",
		Long: `hub runs the approval daemon on its Unix socket (socket.path, default
$XDG_RUNTIME_DIR/execgate/hub.sock) in the foreground until SIGINT or
SIGTERM. With --detach it starts itself in the background, logging to
$XDG_STATE_HOME/execgate/hub.log, and prints the new hub's pid once it
answers. One hub runs per user.`,
		Example: `  execgate hub --detach
  execgate hub status
  execgate hub stop
  execgate hub unit systemd > ~/.config/systemd/user/execgate-hub.service`,
		Args: noArgs("hub (subcommands: status, stop, unit)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if detach {
				return detachHub(cmd.Context(), g)
			}
			return runHub(cmd.Context(), g)
		},
	}
	cmd.Flags().BoolVar(&detach, "detach", false, "run in the background and print the pid once the hub answers")
	cmd.AddCommand(newHubStatusCmd(g), newHubStopCmd(g), newHubUnitCmd(g))
	return cmd
}

// hubLogger is the daemon's log: info by default, debug with
// EXECGATE_DEBUG=1.
func hubLogger(g *globals) *slog.Logger {
	level := slog.LevelInfo
	if g.getenv("EXECGATE_DEBUG") == "1" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level}))
}

func runHub(ctx context.Context, g *globals) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	path := configPath(g)
	cfg, _, warnings, err := config.Load(path)
	for _, w := range warnings {
		fmt.Fprintf(g.stderr, "execgate: warning: %s: %s\n", path, w)
	}
	if err != nil {
		// A hub under a policy it cannot read would refuse every client:
		// better not to start, and say why.
		return unusableLine(g, err)
	}
	socket, err := hub.SocketPath(cfg, g.getenv)
	if err != nil {
		return err
	}
	srv, err := hub.Listen(ctx, hub.ServerOptions{ConfigPath: path, Socket: socket, Logger: hubLogger(g)})
	if err != nil {
		// "execgate hub already running (...)" reads better without our
		// own "execgate: " in front twice.
		return errors.New(strings.TrimPrefix(err.Error(), "execgate "))
	}
	return srv.Serve(ctx)
}

// hubLogPath is where a detached hub logs.
func hubLogPath(g *globals) (string, error) {
	return state.Path(g.getenv, "hub.log")
}

// detachHub starts `execgate hub` in a session of its own and waits until
// that very process answers on the socket.
func detachHub(ctx context.Context, g *globals) error {
	if _, _, _, err := config.Load(configPath(g)); err != nil {
		return unusableLine(g, err) // said here, not only in hub.log
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	logPath, err := hubLogPath(g)
	if err != nil {
		return err
	}
	if err := state.MkdirPrivate(filepath.Dir(logPath)); err != nil {
		return fmt.Errorf("hub log: %w", err)
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, state.FileMode)
	if err != nil {
		return fmt.Errorf("hub log: %w", err)
	}
	defer logf.Close()
	if err := state.TightenFile(logf); err != nil {
		return fmt.Errorf("hub log: %w", err)
	}
	start, _ := logf.Seek(0, io.SeekEnd)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()

	args := []string{"hub"}
	if g.config != "" {
		abs, err := filepath.Abs(g.config)
		if err != nil {
			return fmt.Errorf("--config: %w", err)
		}
		args = append(args, "--config", abs)
	}
	child := exec.Command(exe, args...)
	child.Stdin, child.Stdout, child.Stderr = devnull, logf, logf
	child.Dir = "/"
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		return fmt.Errorf("start hub: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()

	ctx, cancel := context.WithTimeout(ctx, detachWait)
	defer cancel()
	tick := time.NewTicker(detachPoll)
	defer tick.Stop()
	var last error
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("hub exited at start (%v): %s", err, lastLogLine(logPath, start))
		case <-ctx.Done():
			return fmt.Errorf("hub (pid %d) did not answer within %v (last error: %v); see %s", child.Process.Pid, detachWait, last, logPath)
		case <-tick.C:
		}
		c, _, err := dialApprover(ctx, g, "hub --detach")
		if err != nil {
			last = err
			continue
		}
		st, err := c.Status(ctx)
		c.Close()
		// Another hub answering means ours is about to exit, saying why.
		if err == nil && st.Pid == child.Process.Pid {
			fmt.Fprintln(g.stdout, st.Pid)
			return nil
		}
		last = err
	}
}

// lastLogLine is the last line written to the log at path after offset,
// for the one-line account of a failed start.
func lastLogLine(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) <= offset {
		return "see " + path
	}
	lines := strings.Split(strings.TrimSpace(string(b[offset:])), "\n")
	return display.Escape(strings.TrimPrefix(lines[len(lines)-1], "execgate: "))
}

func newHubStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Say whether the hub runs (exit 0) or not (exit 3)",
		Args:  noArgs("hub status"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, socket, err := dialApprover(ctx, g, clientName(g, "status"))
			if errors.Is(err, hub.ErrNoHub) {
				fmt.Fprintf(g.stdout, "hub not running (socket %s)\n", socket)
				return exitCodeError{exitNoHub}
			}
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.Status(ctx)
			if err != nil {
				return fmt.Errorf("hub status: %w", err)
			}
			up := approve.Duration(time.Since(time.UnixMilli(st.StartedAtMs)))
			fmt.Fprintf(g.stdout, "hub running: pid %d, socket %s, up %s, %d pending, %d approvers\n",
				st.Pid, st.Socket, up, st.Pending, st.Approvers)
			return nil
		},
	}
}

// unitFormats are the service managers hub unit knows. Tables in this
// file are slices, not maps: the linker lays them out, so they cost nothing
// when the binary starts as the shim.
var unitFormats = []struct {
	name  string
	write func(exe string, args []string, g *globals) string
}{
	{"systemd", systemdUnit},
	{"launchd", launchdPlist},
}

func unitFormat(name string) func(exe string, args []string, g *globals) string {
	for _, f := range unitFormats {
		if f.name == name {
			return f.write
		}
	}
	return nil
}

func newHubUnitCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "unit systemd|launchd",
		Short: "Print a user service definition that runs the hub",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || unitFormat(args[0]) == nil {
				return usagef("hub unit needs one of: systemd, launchd")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find own executable: %w", err)
			}
			if exe, err = filepath.EvalSymlinks(exe); err != nil {
				return fmt.Errorf("find own executable: %w", err)
			}
			hubArgs := []string{"hub"}
			// The service does not see this shell's EXECGATE_CONFIG.
			if g.config != "" || g.getenv("EXECGATE_CONFIG") != "" {
				abs, err := filepath.Abs(configPath(g))
				if err != nil {
					return err
				}
				hubArgs = append(hubArgs, "--config", abs)
			}
			_, err = io.WriteString(g.stdout, unitFormat(args[0])(exe, hubArgs, g))
			return err
		},
	}
}

func systemdUnit(exe string, args []string, _ *globals) string {
	words := []string{systemdQuote(exe)}
	for _, a := range args {
		words = append(words, systemdQuote(a))
	}
	return `# execgate approval hub, a systemd user service. Install:
#   execgate hub unit systemd > ~/.config/systemd/user/execgate-hub.service
#   systemctl --user daemon-reload && systemctl --user enable --now execgate-hub
[Unit]
Description=execgate approval hub

[Service]
Type=simple
ExecStart=` + strings.Join(words, " ") + `
Restart=on-failure
RestartSec=2

[Install]
WantedBy=default.target
`
}

// systemdQuote quotes one ExecStart word: inside double quotes only \ and "
// need a backslash; % and $ are doubled so that systemd expands nothing.
func systemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$", "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func launchdPlist(exe string, args []string, g *globals) string {
	// Not encoding/xml: its package init would run in every shim.
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace
	var progArgs strings.Builder
	for _, a := range append([]string{exe}, args...) {
		fmt.Fprintf(&progArgs, "\t\t<string>%s</string>\n", esc(a))
	}
	logPath := "/tmp/execgate-hub.log"
	if home := g.getenv("HOME"); home != "" {
		logPath = filepath.Join(home, "Library", "Logs", "execgate-hub.log")
	}
	return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- execgate approval hub, a launchd user agent. Install:
       execgate hub unit launchd > ~/Library/LaunchAgents/com.github.execgate.hub.plist
       launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/com.github.execgate.hub.plist -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>com.github.execgate.hub</string>
	<key>ProgramArguments</key>
	<array>
` + progArgs.String() + `	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ProcessType</key>
	<string>Background</string>
	<key>StandardErrorPath</key>
	<string>` + esc(logPath) + `</string>
</dict>
</plist>
`
}

// ---- execgate pending ----

func newPendingCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pending [--json]",
		Short: "List the approvals waiting in the hub",
		Args:  noArgs("pending"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := connect(ctx, g, clientName(g, "pending"))
			if err != nil {
				return err
			}
			defer c.Close()
			list, err := c.List(ctx)
			if err != nil {
				return fmt.Errorf("list approvals: %w", err)
			}
			if asJSON {
				return printJSON(g, nonNilSlice(list))
			}
			return printPending(g.stdout, list, time.Now())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the approvals as a JSON array")
	return cmd
}

func printPending(w io.Writer, list []hub.Approval, now time.Time) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no pending approvals")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGE\tLEFT\tAGENT\tRISK\tCOMMAND")
	for _, a := range list {
		left := "expiring"
		if d := time.UnixMilli(a.ExpiresAtMs).Sub(now); d > 0 {
			left = approve.Duration(d)
		}
		agent := display.Escape(a.AgentID)
		if a.Via != "" {
			agent += " via " + display.Escape(a.Via)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", approve.ShortID(a.ID), approve.Duration(now.Sub(time.UnixMilli(a.CreatedAtMs))),
			left, agent, display.Escape(a.Risk), display.Escape(a.Command))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("print approvals: %w", err)
	}
	// What allow-always may save, per segment, for resolve --pattern.
	for _, a := range list {
		for _, p := range a.Proposals {
			scopes := "nothing (asked again next time)"
			if len(p.Patterns) > 0 {
				scopes = strings.Join(escapeAll(p.Patterns), " | ")
			}
			if _, err := fmt.Fprintf(w, "%s always: %s   for %s\n", approve.ShortID(a.ID), scopes, display.Escape(p.Text)); err != nil {
				return fmt.Errorf("print approvals: %w", err)
			}
		}
	}
	return nil
}

// escapeAll escapes each string for the terminal.
func escapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = display.Escape(s)
	}
	return out
}

func printJSON(g *globals, v any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ---- execgate resolve ----

// decisions are the values resolve accepts, in the order its usage names them.
var decisions = []string{hub.AllowOnce, hub.AllowAlways, hub.Deny}

// minIDPrefix is the shortest ID prefix the hub accepts.
const minIDPrefix = 4

func newResolveCmd(g *globals) *cobra.Command {
	var patterns []string
	var message string
	cmd := &cobra.Command{
		Use:   "resolve ID allow-once|allow-always|deny [--pattern P]... [--message M]",
		Short: "Answer a pending approval (ID may be a unique prefix)",
		Long: `resolve answers a pending approval (see execgate pending, which lists
what "allow always" may save for each segment, narrowest first).

With allow-always, --pattern chooses the scope to save, one of the
patterns proposed for a segment; give it once per segment to save for.
Segments no --pattern names get nothing saved (they will be asked again).
Without --pattern each segment's narrowest proposal is saved. The hub
refuses a pattern that was not proposed. With deny, --message reaches
the agent in its refusal line.`,
		Example: `  execgate pending
  execgate resolve 3f9a allow-once
  execgate resolve 3f9a allow-always --pattern 'npm run test **'
  execgate resolve 3f9a deny --message 'use make test instead'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("resolve needs an ID and a decision: execgate resolve ID allow-once|allow-always|deny")
			}
			if !slices.Contains(decisions, args[1]) {
				return usagef("resolve: decision %s: want allow-once, allow-always or deny", strconv.Quote(args[1]))
			}
			if len(args[0]) < minIDPrefix {
				return usagef("resolve: ID %s is too short: give at least %d characters", strconv.Quote(args[0]), minIDPrefix)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(patterns) > 0 && args[1] != hub.AllowAlways {
				return usagef("resolve: --pattern goes with allow-always only")
			}
			if message != "" && args[1] != hub.Deny {
				return usagef("resolve: --message goes with deny only")
			}
			ctx := cmd.Context()
			c, err := connectAs(ctx, g, hub.DialOptions{Role: hub.RoleApprover, Name: clientName(g, "resolve"), Kind: hub.KindCLI})
			if err != nil {
				return err
			}
			defer c.Close()
			p := hub.ResolveParams{ID: args[0], Decision: args[1], Message: message}
			if len(patterns) > 0 {
				pending, err := c.Get(ctx, args[0])
				if err != nil {
					return resolveErr(args[0], err)
				}
				if p.Patterns, err = chooseScopes(pending.Proposals, patterns); err != nil {
					return usagef("resolve: %v", err)
				}
			}
			a, err := c.ResolveWith(ctx, p)
			if err != nil {
				return resolveErr(args[0], err)
			}
			fmt.Fprintf(g.stdout, "%s: %s %s\n", approve.PastTense(args[1]), approve.ShortID(a.ID), display.Escape(a.Command))
			if args[1] == hub.AllowAlways {
				for _, line := range approve.SavedLines(a) {
					fmt.Fprintf(g.stdout, "  %s\n", line)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&patterns, "pattern", nil, "with allow-always: the proposed pattern to save for a segment (repeat for several segments)")
	cmd.Flags().StringVar(&message, "message", "", "with deny: a note for the agent, shown in its refusal line")
	return cmd
}

// resolveErr says why resolving id failed, in one line.
func resolveErr(id string, err error) error {
	if isNotFound(err) {
		return fmt.Errorf("no pending approval %s (unknown, expired or already resolved)", display.Escape(id))
	}
	return fmt.Errorf("resolve %s: %w", display.Escape(id), err)
}

// chooseScopes places each chosen pattern at the proposal that offers it
// ("" for the others: nothing saved). A pattern no proposal offers, or two
// for one segment, is an error that lists what is on offer.
func chooseScopes(proposals []hub.SegmentProposal, chosen []string) ([]string, error) {
	out := make([]string, len(proposals))
	for _, c := range chosen {
		i := slices.IndexFunc(proposals, func(p hub.SegmentProposal) bool { return slices.Contains(p.Patterns, c) })
		if i < 0 {
			var offered []string
			for _, p := range proposals {
				offered = append(offered, p.Patterns...)
			}
			if len(offered) == 0 {
				return nil, fmt.Errorf("pattern %q was not proposed: this request proposes none", c)
			}
			return nil, fmt.Errorf("pattern %q was not proposed; choose from %s", c, strings.Join(quoteAll(offered), ", "))
		}
		if out[i] != "" && out[i] != c {
			return nil, fmt.Errorf("patterns %q and %q are both for %q; give one", out[i], c, proposals[i].Text)
		}
		out[i] = c
	}
	return out, nil
}

// quoteAll quotes each string for a message.
func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// ---- execgate watch ----

func newWatchCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "watch [--json]",
		Short: "Print the hub's events as they happen (JSON lines with --json)",
		Args:  noArgs("watch"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// A watcher: it sees everything and answers nothing, so the
			// hub never counts it as someone who can approve.
			c, err := connectAs(ctx, g, hub.DialOptions{Role: hub.RoleWatcher, Name: clientName(g, "watch")})
			if err != nil {
				return err
			}
			defer c.Close()
			events, err := c.Subscribe(ctx)
			if err != nil {
				return fmt.Errorf("subscribe: %w", err)
			}
			enc := json.NewEncoder(g.stdout)
			enc.SetEscapeHTML(false)
			for ev := range events {
				if asJSON {
					err = enc.Encode(watchLine{Event: ev.Name, Payload: ev.Payload})
				} else {
					_, err = fmt.Fprintf(g.stdout, "%s %s\n", time.Now().Format("15:04:05"), describeEvent(ev))
				}
				if err != nil {
					return fmt.Errorf("print event: %w", err)
				}
			}
			if ctx.Err() != nil {
				return nil // interrupted
			}
			fmt.Fprintln(g.stderr, "execgate: the hub went away")
			return exitCodeError{exitNoHub}
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print one JSON object per event: {"event": NAME, "payload": {...}}`)
	return cmd
}

// watchLine is one line of watch --json, shaped like the hub's own event
// frames.
type watchLine struct {
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
}

// approvalEvents describe the events about one approval for a person.
var approvalEvents = []struct {
	name string
	view func(a hub.Approval) string
}{
	{hub.EventRequested, func(a hub.Approval) string {
		left := approve.Duration(time.Until(time.UnixMilli(a.ExpiresAtMs)))
		return fmt.Sprintf("requested %s %s %s (%s left): %s", approve.ShortID(a.ID), display.Escape(a.AgentID),
			display.Escape(a.Risk), left, display.Escape(a.Command))
	}},
	{hub.EventResolved, func(a hub.Approval) string {
		by := display.Escape(a.ResolvedBy)
		if w := a.Approver; w != nil && w.User != "" {
			by += " (" + display.Escape(w.User)
			if w.Kind != "" {
				by += ", " + display.Escape(w.Kind)
			}
			by += ")"
		}
		return fmt.Sprintf("resolved %s %s by %s: %s", approve.ShortID(a.ID), display.Escape(a.Decision),
			by, display.Escape(a.Command))
	}},
	{hub.EventExpired, func(a hub.Approval) string {
		return fmt.Sprintf("expired %s: %s", approve.ShortID(a.ID), display.Escape(a.Command))
	}},
	{hub.EventWithdrawn, func(a hub.Approval) string {
		return fmt.Sprintf("withdrawn %s: %s", approve.ShortID(a.ID), display.Escape(a.Command))
	}},
}

// eventLine is a person's line for one event, decoded into the type the
// protocol gives its payload; ok is false for an unknown or undecodable one.
func eventLine(ev hub.Event) (string, bool) {
	for _, e := range approvalEvents {
		if e.name == ev.Name {
			var a hub.Approval
			if json.Unmarshal(ev.Payload, &a) != nil {
				return "", false
			}
			return e.view(a), true
		}
	}
	switch ev.Name {
	case hub.EventStarted, hub.EventFinished, hub.EventDenied:
		var r hub.ExecReport
		if json.Unmarshal(ev.Payload, &r) != nil {
			return "", false
		}
		return reportLine(r), true
	case hub.EventSession:
		var o hub.SessionOverride
		if json.Unmarshal(ev.Payload, &o) != nil {
			return "", false
		}
		return "session " + describeSession(o, time.Now()), true
	}
	return "", false
}

func reportLine(r hub.ExecReport) string {
	what := strings.TrimPrefix(r.Event, "exec.")
	var extra string
	if r.ExitStatus != nil {
		extra += fmt.Sprintf(" exit %d", *r.ExitStatus)
	}
	if r.DurationMs != nil {
		extra += fmt.Sprintf(" in %v", time.Duration(*r.DurationMs)*time.Millisecond)
	}
	if r.DecidedBy != "" {
		extra += " (" + display.Escape(r.DecidedBy) + ")"
	}
	return fmt.Sprintf("%s %s%s: %s", display.Escape(what), display.Escape(r.AgentID), extra, display.Escape(r.Command))
}

// describeEvent is watch's line for one event.
func describeEvent(ev hub.Event) string {
	if s, ok := eventLine(ev); ok {
		return s
	}
	return display.Escape(ev.Name) + " " + display.Escape(string(ev.Payload))
}

// ---- execgate session ----

// sessionKey is one setting session set takes, with its check.
type sessionKey struct {
	key   string
	want  string
	valid func(string) bool
	set   func(*hub.SessionOverride, string)
}

var sessionKeys = []sessionKey{
	{"security", "deny, allowlist or full", func(v string) bool { return config.Security(v).Valid() },
		func(o *hub.SessionOverride, v string) { o.Security = v }},
	{"ask", "off, on-miss or always", func(v string) bool { return config.Ask(v).Valid() },
		func(o *hub.SessionOverride, v string) { o.Ask = v }},
	{"askFallback", "deny, allowlist or full", func(v string) bool { return config.Security(v).Valid() },
		func(o *hub.SessionOverride, v string) { o.AskFallback = v }},
}

func sessionKeyNames() string {
	var names []string
	for _, k := range sessionKeys {
		names = append(names, k.key+"=")
	}
	return strings.Join(names, ", ")
}

func newSessionCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session set|elevate|clear|list",
		Short: "Set, list or clear an agent's temporary policy held by the hub",
		Long: `session manages overrides the hub holds for one agent until they expire,
are cleared or the hub stops; the agent's shims apply them. Overrides set
here may loosen the policy (only approvers can set them); whatever an
agent sets in its own environment can only tighten it.`,
		Example: `  execgate session set claude-code security=allowlist ask=always --for 2h
  execgate session elevate codex --for 15m
  execgate session clear codex`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown session subcommand %s (want set, elevate, clear or list)", strconv.Quote(args[0]))
			}
			return usagef("session needs a subcommand: set, elevate, clear or list")
		},
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	cmd.AddCommand(newSessionSetCmd(g), newSessionElevateCmd(g), newSessionClearCmd(g), newSessionListCmd(g))
	return cmd
}

// agentArg validates the AGENT argument.
func agentArg(what, agent string) error {
	if agent == "" || strings.ContainsFunc(agent, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return usagef("%s: AGENT %s: want a non-empty agent ID without control characters", what, strconv.Quote(agent))
	}
	return nil
}

// expiry turns --for into the override's ExpiresAtMs (0: no expiry).
func expiry(what string, d time.Duration, required bool) (int64, error) {
	switch {
	case d < 0, d == 0 && required:
		return 0, usagef("%s: --for %v: want a positive duration such as 30m or 2h", what, d)
	case d == 0:
		return 0, nil
	}
	return time.Now().Add(d).UnixMilli(), nil
}

func setSession(ctx context.Context, g *globals, o hub.SessionOverride) error {
	c, err := connect(ctx, g, clientName(g, "session"))
	if err != nil {
		return err
	}
	defer c.Close()
	o, err = c.SetSession(ctx, o)
	if err != nil {
		return fmt.Errorf("session %s: %w", display.Escape(o.AgentID), err)
	}
	fmt.Fprintln(g.stdout, "session "+describeSession(o, time.Now()))
	return nil
}

func newSessionSetCmd(g *globals) *cobra.Command {
	var dur time.Duration
	cmd := &cobra.Command{
		Use:   "set AGENT KEY=VALUE... [--for DURATION]",
		Short: "Override security, ask or askFallback for an agent",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("session set needs an AGENT and KEY=VALUE settings (%s)", sessionKeyNames())
			}
			return agentArg("session set", args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o := hub.SessionOverride{AgentID: args[0]}
			seen := map[string]bool{}
			for _, a := range args[1:] {
				key, value, ok := strings.Cut(a, "=")
				i := slices.IndexFunc(sessionKeys, func(k sessionKey) bool { return k.key == key })
				switch {
				case !ok || i < 0:
					return usagef("session set: %s is not a setting (want %s)", strconv.Quote(a), sessionKeyNames())
				case seen[key]:
					return usagef("session set: %s given twice", key)
				case !sessionKeys[i].valid(value):
					return usagef("session set: %s=%s: want %s", key, strconv.Quote(value), sessionKeys[i].want)
				}
				seen[key] = true
				sessionKeys[i].set(&o, value)
			}
			var err error
			if o.ExpiresAtMs, err = expiry("session set", dur, false); err != nil {
				return err
			}
			return setSession(cmd.Context(), g, o)
		},
	}
	cmd.Flags().DurationVar(&dur, "for", 0, "expire after `DURATION` (default: until cleared or the hub stops)")
	return cmd
}

func newSessionElevateCmd(g *globals) *cobra.Command {
	var dur time.Duration
	cmd := &cobra.Command{
		Use:   "elevate AGENT [--for 30m]",
		Short: "Let an agent run everything unasked (security=full, ask=off) for a while",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("session elevate needs one AGENT")
			}
			return agentArg("session elevate", args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			exp, err := expiry("session elevate", dur, true)
			if err != nil {
				return err
			}
			return setSession(cmd.Context(), g, hub.SessionOverride{AgentID: args[0], Elevated: true, ExpiresAtMs: exp})
		},
	}
	cmd.Flags().DurationVar(&dur, "for", defaultElevation, "how long the elevation lasts")
	return cmd
}

func newSessionClearCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "clear AGENT",
		Short: "Remove an agent's override",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("session clear needs one AGENT")
			}
			return agentArg("session clear", args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := connect(ctx, g, clientName(g, "session"))
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.ClearSession(ctx, args[0]); err != nil {
				return fmt.Errorf("session clear %s: %w", display.Escape(args[0]), err)
			}
			fmt.Fprintf(g.stdout, "session %s: cleared\n", display.Escape(args[0]))
			return nil
		},
	}
}

func newSessionListCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the overrides the hub holds",
		Args:  noArgs("session list"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := connect(ctx, g, clientName(g, "session"))
			if err != nil {
				return err
			}
			defer c.Close()
			list, err := c.Sessions(ctx)
			if err != nil {
				return fmt.Errorf("session list: %w", err)
			}
			if asJSON {
				return printJSON(g, nonNilSlice(list))
			}
			if len(list) == 0 {
				fmt.Fprintln(g.stdout, "no session overrides")
				return nil
			}
			now := time.Now()
			for _, o := range list {
				fmt.Fprintln(g.stdout, describeSession(o, now))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the overrides as a JSON array")
	return cmd
}

// describeSession is one line for an override: "AGENT: security=full
// ask=off (elevated, 29m59s left, set by approve@pts/3)".
func describeSession(o hub.SessionOverride, now time.Time) string {
	var fields []string
	for _, f := range []struct{ key, value string }{
		{"security", o.Security}, {"ask", o.Ask}, {"askFallback", o.AskFallback},
	} {
		if f.value != "" {
			fields = append(fields, f.key+"="+display.Escape(f.value))
		}
	}
	if len(fields) == 0 {
		return display.Escape(o.AgentID) + ": no override"
	}
	var notes []string
	if o.Elevated {
		notes = append(notes, "elevated")
	}
	if o.ExpiresAtMs != 0 {
		t := time.UnixMilli(o.ExpiresAtMs)
		notes = append(notes, fmt.Sprintf("until %s, %s left", t.Format("15:04:05"), approve.Duration(t.Sub(now))))
	}
	if o.SetBy != "" {
		notes = append(notes, "set by "+display.Escape(o.SetBy))
	}
	s := display.Escape(o.AgentID) + ": " + strings.Join(fields, " ")
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, ", ") + ")"
	}
	return s
}
