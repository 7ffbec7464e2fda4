package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/prompt"
	"github.com/execgate/execgate/shim"
)

// shellNames are the names under which execgate is a shell: install.sh
// links them into the shim directory an agent puts first on its PATH.
var shellNames = map[string]bool{"bash": true, "sh": true}

// shellArgv reports whether this invocation is a shell: argv[0]'s base
// name is a shell name (a leading '-' marks a login shell), or the first
// argument is "sh". It returns the shell's argv and whether argv[0] should
// become the real shell's name.
func shellArgv(args []string) (argv []string, fromShell, ok bool) {
	if len(args) == 0 {
		return nil, false, false
	}
	if shellNames[filepath.Base(strings.TrimPrefix(args[0], "-"))] {
		return args, false, true
	}
	if len(args) >= 2 && args[1] == "sh" {
		return args[1:], true, true
	}
	return nil, false, false
}

// runShell is shell mode: see package shim. getenv may be nil.
func runShell(argv []string, fromShell bool, getenv func(string) string) int {
	return shim.Main(context.Background(), shim.Options{Argv: argv, Argv0FromShell: fromShell, Getenv: getenv})
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
	follow, json bool
	since        string
}

func newLogCmd(g *globals) *cobra.Command {
	var f logFlags
	cmd := &cobra.Command{
		Use:   "log [--follow] [--json] [--since DURATION|TIME]",
		Short: "Show the audit log of commands run, asked about and refused",
		Long: `log prints the audit log the shim writes to
$XDG_STATE_HOME/execgate/audit.jsonl (rotated files included), one event
per line: exec.denied, exec.started, exec.finished.`,
		Example: "  execgate log --since 1h\n  execgate log --follow --json | jq .",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLog(cmd.Context(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.follow, "follow", "f", false, "keep printing events as they are logged")
	fl.BoolVar(&f.json, "json", false, "print the events as JSON lines, as stored")
	fl.StringVar(&f.since, "since", "", "only events newer than `DURATION` ago (90m, 24h) or an RFC 3339 time")
	return cmd
}

func runLog(ctx context.Context, g *globals, f logFlags) error {
	var since time.Time
	if f.since != "" {
		if d, err := time.ParseDuration(f.since); err == nil && d >= 0 {
			since = time.Now().Add(-d)
		} else if t, err := time.Parse(time.RFC3339, f.since); err == nil {
			since = t
		} else {
			return usagef("--since %q: want a duration such as 90m or 24h, or an RFC 3339 time", f.since)
		}
	}
	path, err := shim.DefaultAuditPath(g.getenv)
	if err != nil {
		return err
	}
	audit := shim.AuditLog{Path: path}
	print := func(ev shim.Event, raw []byte) error {
		if f.json {
			_, err := fmt.Fprintf(g.stdout, "%s\n", raw)
			return err
		}
		return writeEvent(g.stdout, ev)
	}
	var st shim.ReadStats
	if !f.follow {
		st, err = audit.Scan(since, print)
	} else {
		if ctx == nil {
			ctx = context.Background()
		}
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		st, err = audit.Follow(ctx, since, 250*time.Millisecond, print)
	}
	reportSkipped(g.stderr, audit.Path, st)
	return err
}

// reportSkipped says, on stderr (stdout may be JSON lines for a program),
// how many lines of the log were not events: cut short by a crash or a full
// disk, or edited by hand.
func reportSkipped(w io.Writer, path string, st shim.ReadStats) {
	if st.Skipped == 0 {
		return
	}
	fmt.Fprintf(w, "execgate: log: skipped %d of %d lines of %s (rotated files included) as unreadable: cut short by a full disk or a crash, or not an event\n",
		st.Skipped, st.Read+st.Skipped, oneLineText(path))
}

// writeEvent prints one event for a person, on one line:
//
//	2025-01-02 15:04:05  finished  claude-code  exit 0, 12ms        git status
func writeEvent(w io.Writer, ev shim.Event) error {
	var what string
	switch ev.Event {
	case shim.EventDenied:
		what = fmt.Sprintf("%s, by %s", ev.Risk, ev.DecidedBy)
	case shim.EventStarted, shim.EventAllowed:
		what = fmt.Sprintf("%s, allowed by %s", ev.Risk, ev.DecidedBy)
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
	_, err := fmt.Fprintf(w, "%s  %-8s  %-12s  %-28s  %s\n",
		ev.Time.Local().Format("2006-01-02 15:04:05"), name, prompt.Escape(ev.Agent), what, prompt.Escape(ev.Command))
	if err != nil {
		return err
	}
	if ev.Message != "" {
		_, err = fmt.Fprintf(w, "%22s%s\n", "", prompt.Escape(ev.Message))
	}
	return err
}
