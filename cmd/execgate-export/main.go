// Command execgate-export sends the audit log's new events to the
// collectors the configuration names (audit.export; the managed policy's
// first): syslog and OpenTelemetry over OTLP/HTTP. It reads the local log,
// which stays the record, from a cursor per collector, so the shim never
// waits on a collector and a collector that is down loses nothing: the
// next run sends what is left. `execgate log --export` runs it; it is a
// binary apart so that neither the shim nor the CLI (which every hook call
// starts) links the OpenTelemetry SDK.
//
//	execgate-export [--config FILE] [--follow]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/execgate/execgate/auditexport"
	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/shim"
)

// every is how often --follow looks for new events.
const every = 5 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("execgate-export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFlag := fs.String("config", "", "the configuration `FILE` (default: $EXECGATE_CONFIG, else $XDG_CONFIG_HOME/execgate/exec-approvals.json)")
	follow := fs.Bool("follow", false, "keep going: send new events every 5 s, trying a collector that is down again each round")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "execgate-export: unexpected argument %q (flags: --config FILE, --follow)\n", fs.Arg(0))
		return 2
	}
	path := config.ConfigPath(*cfgFlag, getenv)
	cfg, _, warnings, err := config.Load(path)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "execgate-export: warning: %s: %s\n", display.Escape(path), display.Escape(w))
	}
	if err != nil {
		// What the managed policy requires is still sent: the log is
		// the team's record whatever the user's file says.
		fmt.Fprintf(stderr, "execgate-export: %s\n", display.Escape(err.Error()))
	}
	targets := cfg.ExportTargets()
	if len(targets) == 0 {
		fmt.Fprintf(stderr, "execgate-export: no collector is configured: set audit.export in %s\n", display.Escape(path))
		return 1
	}
	logPath, err := shim.DefaultAuditPath(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "execgate-export: %v\n", err)
		return 1
	}
	return export(ctx, &shim.AuditLog{Path: logPath}, targets, *follow, stdout, stderr)
}

// export runs each target once, or every few seconds with follow, one
// line per target and round that sent something or failed.
func export(ctx context.Context, log *shim.AuditLog, targets []config.ExportTarget, follow bool, stdout, stderr io.Writer) int {
	senders := make([]auditexport.Sender, len(targets))
	defer func() {
		for _, s := range senders {
			if s != nil {
				s.Close()
			}
		}
	}()
	for i, t := range targets {
		var err error
		if senders[i], err = newSender(t); err != nil {
			fmt.Fprintf(stderr, "execgate-export: %s %s: %s\n", t.Kind, display.Escape(t.Where()), display.Escape(err.Error()))
			return 1
		}
	}
	dir := filepath.Dir(log.Path)
	for {
		failed := 0
		for i, t := range targets {
			res, err := auditexport.Run(ctx, log, t, dir, senders[i])
			switch {
			case err != nil && ctx.Err() != nil:
				return 0
			case err != nil:
				failed++
				fmt.Fprintf(stderr, "execgate-export: %s (sent %d; the rest waits in the local log for the next run)\n", display.Escape(err.Error()), res.Sent)
			case !follow || res.Sent > 0:
				again := ""
				if res.Restarted {
					again = " (the log began again: sent from its start)"
				}
				fmt.Fprintf(stdout, "%s %s: sent %d events%s\n", t.Kind, display.Escape(t.Where()), res.Sent, again)
			}
		}
		if !follow {
			if failed > 0 {
				return 1
			}
			return 0
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(every):
		}
	}
}

// newSender makes the sender for t.
func newSender(t config.ExportTarget) (auditexport.Sender, error) {
	switch {
	case t.Syslog != nil:
		return auditexport.NewSyslogSender(t.Syslog)
	case t.OTLP != nil:
		return auditexport.NewOTLPSender(t.OTLP)
	}
	return nil, errors.New("unknown collector kind " + t.Kind)
}
