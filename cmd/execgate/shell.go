package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/shim"
)

// shellArgv reports whether this invocation is a shell: argv[0]'s base
// name is a shell name (a leading '-' marks a login shell), or the first
// argument is "sh". It returns the shell's argv and whether argv[0] should
// become the real shell's name.
func shellArgv(args []string) (argv []string, fromShell, ok bool) {
	if len(args) == 0 {
		return nil, false, false
	}
	if shim.IsShellName(args[0]) {
		return args, false, true
	}
	if len(args) >= 2 && args[1] == "sh" {
		return args[1:], true, true
	}
	return nil, false, false
}

// runShell is shell mode: see package shim. getenv may be nil.
func runShell(argv []string, fromShell bool, getenv func(string) string) int {
	return shim.Main(context.Background(), shim.Options{Argv: argv, Argv0FromShell: fromShell, Getenv: getenv, SandboxHelper: shim.SelfHelper})
}

// globalShellFlags maps the global flags `execgate --config X sh …` may carry
// to the variables shell mode reads instead.
var globalShellFlags = map[string]string{"--config": "EXECGATE_CONFIG", "--agent": "EXECGATE_AGENT"}

// takeGlobalFlags removes leading --config/--agent flags from args (cobra
// does not parse them for sh, whose arguments are bash's) and returns a
// getenv that reports them.
func takeGlobalFlags(args []string, getenv func(string) string) ([]string, func(string) string, error) {
	set := map[string]string{}
	for len(args) > 0 {
		name, value, hasValue := strings.Cut(args[0], "=")
		env, ok := globalShellFlags[name]
		if !ok {
			break
		}
		if !hasValue {
			if len(args) < 2 {
				return nil, nil, usagef("flag needs an argument: %s", name)
			}
			value, args = args[1], args[1:]
		}
		set[env] = value
		args = args[1:]
	}
	return args, func(k string) string {
		if v, ok := set[k]; ok {
			return v
		}
		return getenv(k)
	}, nil
}

// newShCmd documents `execgate sh`; main dispatches `execgate sh …` before
// the CLI is built, so this only runs for `execgate --config X sh …`.
func newShCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "sh [bash options] [-c COMMAND [NAME [ARG…]] | SCRIPT [ARG…]]",
		Short: "Run a command through the gate, with bash's command line",
		Long: `sh behaves as bash: it accepts bash's command line, checks the program
(the -c string, the script file or stdin) against the policy, asks on the
terminal when the policy says so, and runs what is allowed with the real
bash. A refused command prints one line, "execgate: denied: REASON", and
exits 126.

Installed as "bash" or "sh" (see install.sh), execgate does the same
whenever it is invoked under that name. Configuration and agent come from
$EXECGATE_CONFIG and $EXECGATE_AGENT.`,
		Example:            "  execgate sh -c 'git status'\n  execgate sh ./build.sh release",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Global flags before "sh" reach here unparsed.
			args, getenv, err := takeGlobalFlags(args, g.getenv)
			if err != nil {
				return err
			}
			code := runShell(append([]string{"sh"}, args...), true, getenv)
			if code != 0 {
				return exitCodeError{code}
			}
			return nil
		},
	}
}

type logFlags struct {
	follow, json, full, verify, export bool
	since, agent                       string
	lines                              int
}

// logWidth bounds a command in `execgate log`: an unrecognised agent
// prologue or a script from stdin is kilobytes on one line. --full and
// --json show it whole.
const logWidth = 240

// followLines is how many past events --follow shows before the new ones,
// as tail -f does, unless -n says otherwise.
const followLines = 10

func newLogCmd(g *globals) *cobra.Command {
	f := logFlags{lines: -1}
	cmd := &cobra.Command{
		Use:   "log [--follow] [-n N] [--agent ID] [--since DURATION|TIME] [--json] [--full] | log --verify | log --export [--follow]",
		Short: "Show the audit log of commands run, asked about and refused",
		Long: `log prints the audit log the shim writes to
$XDG_STATE_HOME/execgate/audit.jsonl (rotated files included), one event
per line: exec.denied, exec.started, exec.finished.

--follow shows the last 10 events (or -n N) and then each new one as it is
logged, like tail -f.

--verify checks the hash chain that ties each line to the one before it,
and says where the log was edited, truncated or reordered (FILE:LINE).

--export sends the events not sent yet to the collectors audit.export
names (syslog, OpenTelemetry over OTLP/HTTP), each from a cursor of its
own; with --follow it goes on every few seconds. The shim never waits on
a collector: it only appends to the local log.`,
		Example: "  execgate log --since 1d --agent claude-code\n  execgate log -n 20\n  execgate log --follow --json | jq .\n  execgate log --verify",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.verify {
				if f.export || f.follow || f.json || f.full || f.since != "" || f.agent != "" || f.lines != -1 {
					return usagef("--verify checks the whole log: it takes no other flag")
				}
				return runLogVerify(g)
			}
			if f.export {
				if f.json || f.full || f.since != "" || f.agent != "" || f.lines != -1 {
					return usagef("--export sends the whole log from where it left off: it takes only --follow")
				}
				return runLogExport(cmd.Context(), g, f.follow)
			}
			return runLog(cmd.Context(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.follow, "follow", "f", false, "show the last events, then keep printing events as they are logged")
	fl.IntVarP(&f.lines, "lines", "n", -1, "show only the last `N` events (with --follow: before the new ones; default 10 there)")
	fl.StringVar(&f.agent, "agent", "", "only events of the agent `ID` (as execgate log shows it, e.g. claude-code)")
	fl.BoolVar(&f.json, "json", false, "print the events as JSON lines, as stored")
	fl.BoolVar(&f.full, "full", false, "print long commands whole instead of cut to one screen line")
	fl.BoolVar(&f.verify, "verify", false, "check the log's hash chain: say where it was edited, truncated or reordered")
	fl.BoolVar(&f.export, "export", false, "send the events not sent yet to the collectors audit.export names (with --follow: keep sending)")
	fl.StringVar(&f.since, "since", "", "only events newer than `DURATION` ago (90m, 24h, 7d) or an RFC 3339 time")
	return cmd
}

// parseSince reads --since: a Go duration, a number of days (7d), or an RFC
// 3339 time.
func parseSince(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 && n <= 100000 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("--since %q: want a duration such as 90m, 24h or 7d, or an RFC 3339 time", v)
}

func runLog(ctx context.Context, g *globals, f logFlags) error {
	var since time.Time
	if f.since != "" {
		var err error
		if since, err = parseSince(f.since, time.Now()); err != nil {
			return err
		}
	}
	if f.lines < -1 {
		return usagef("-n %d: want a number of events, 0 or more", f.lines)
	}
	path, err := shim.DefaultAuditPath(g.getenv)
	if err != nil {
		return err
	}
	audit := shim.AuditLog{Path: path}
	width := logWidth
	if f.full {
		width = 0
	}
	print := func(ev shim.Event, raw []byte) error {
		if f.json {
			_, err := fmt.Fprintf(g.stdout, "%s\n", raw)
			return err
		}
		return writeEvent(g.stdout, ev, width)
	}
	wanted := func(ev shim.Event) bool { return f.agent == "" || ev.Agent == f.agent }

	// The past: every wanted event, or the last n of them.
	last := f.lines
	if f.follow && last < 0 {
		last = followLines
	}
	type logged struct {
		ev  shim.Event
		raw []byte
	}
	var tail []logged
	seen := 0 // events Scan passed on, wanted or not: Follow replays them
	st, err := audit.Scan(since, func(ev shim.Event, raw []byte) error {
		seen++
		if !wanted(ev) {
			return nil
		}
		if last < 0 {
			return print(ev, raw)
		}
		tail = append(tail, logged{ev, bytes.Clone(raw)})
		if len(tail) > last {
			tail = tail[1:]
		}
		return nil
	})
	for _, l := range tail {
		if err == nil {
			err = print(l.ev, l.raw)
		}
	}
	if err != nil || !f.follow {
		reportSkipped(g.stderr, audit.Path, st)
		reportLost(g.stderr, &audit)
		return err
	}

	// The future: Follow reads the log from the start again; the events
	// Scan already passed on are skipped by count.
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err = audit.Follow(ctx, since, 250*time.Millisecond, func(ev shim.Event, raw []byte) error {
		if seen > 0 {
			seen--
			return nil
		}
		if !wanted(ev) {
			return nil
		}
		return print(ev, raw)
	})
	reportSkipped(g.stderr, audit.Path, st)
	return err
}

// reportLost says, on stderr, how many events the shims could not write at
// all (a full disk, a read-only log), as counted beside the log.
func reportLost(w io.Writer, audit *shim.AuditLog) {
	c, err := audit.Failures()
	if err != nil {
		fmt.Fprintf(w, "execgate: log: %v\n", err)
		return
	}
	if c.Count == 0 {
		return
	}
	fmt.Fprintf(w, "execgate: log: %d events could not be written to the log (the disk was full or the file not writable), the first %s, the last %s\n",
		c.Count, c.First.Local().Format("2006-01-02 15:04:05"), c.Last.Local().Format("2006-01-02 15:04:05"))
}

// reportSkipped says, on stderr (stdout may be JSON lines for a program),
// how many lines of the log were not events: cut short by a crash or a full
// disk, or edited by hand.
func reportSkipped(w io.Writer, path string, st shim.ReadStats) {
	if st.Skipped == 0 {
		return
	}
	fmt.Fprintf(w, "execgate: log: skipped %d of %d lines of %s (rotated files included) as unreadable: cut short by a full disk or a crash, or not an event\n",
		st.Skipped, st.Read+st.Skipped, display.Escape(path))
}

// writeEvent prints one event for a person, on one line:
//
//	2025-01-02 15:04:05  finished  claude-code  exit 0, 12ms        git status
//
// A command longer than width bytes as shown is cut, with its size; width 0
// shows it whole.
func writeEvent(w io.Writer, ev shim.Event, width int) error {
	var what string
	switch ev.Event {
	case shim.EventDenied:
		what = fmt.Sprintf("%s, by %s", ev.Risk, display.Escape(ev.Who()))
	case shim.EventStarted, shim.EventAllowed:
		allowed := "allowed"
		if ev.Scope != "" {
			allowed += " " + ev.Scope // once, always
		}
		what = fmt.Sprintf("%s, %s by %s", ev.Risk, allowed, display.Escape(ev.Who()))
		if len(ev.Allowlisted) > 0 {
			what += ", now allowlisted: " + strings.Join(ev.Allowlisted, "; ")
		}
	case shim.EventDeferred:
		what = fmt.Sprintf("%s, left to %s's prompt", ev.Risk, ev.Via)
	case shim.EventFinished:
		if ev.ExitStatus != nil {
			what = fmt.Sprintf("exit %d", *ev.ExitStatus)
		}
		if ev.Signal != "" {
			what += " (" + ev.Signal + ")"
		}
		if ev.DurationMs != nil {
			what += fmt.Sprintf(", %s", time.Duration(*ev.DurationMs)*time.Millisecond)
		}
		if ev.Omitted > 0 {
			what += fmt.Sprintf(", %d bytes cut", ev.Omitted)
		}
	}
	name := strings.TrimPrefix(ev.Event, "exec.")
	command := display.Clip(ev.Command, width)
	if command != display.Escape(ev.Command) {
		command += fmt.Sprintf(" (%d bytes; --full shows all)", len(ev.Command))
	}
	_, err := fmt.Fprintf(w, "%s  %-8s  %-12s  %-28s  %s\n",
		ev.Time.Local().Format("2006-01-02 15:04:05"), name, display.Escape(ev.Agent), what, command)
	if err != nil {
		return err
	}
	if ev.Message != "" {
		_, err = fmt.Fprintf(w, "%22s%s\n", "", display.Escape(ev.Message))
	}
	if len(ev.LeftRunning) > 0 && err == nil {
		_, err = fmt.Fprintf(w, "%22sleft running, confined: %s\n", "", display.Escape(strings.Join(ev.LeftRunning, ", ")))
	}
	if len(ev.Paused) > 0 && err == nil {
		_, err = fmt.Fprintf(w, "%22spaused while it ran: %s\n", "", display.Escape(strings.Join(ev.Paused, ", ")))
	}
	return err
}
