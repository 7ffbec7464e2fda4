package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/config"
)

// Exit statuses shared by the subcommands.
const (
	exitOK    = 0
	exitError = 1 // evaluation or I/O failed
	exitUsage = 2 // the command line was wrong
)

// globals are the flags every subcommand understands.
type globals struct {
	config string // --config, else $EXECGATE_CONFIG, else the XDG default
	agent  string // --agent, else $EXECGATE_AGENT, else detected
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// usageError marks errors that should exit with exitUsage.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// lineError is printed as it is, without run's "execgate: " prefix.
type lineError struct{ line string }

func (e lineError) Error() string { return e.line }

// unusableLine turns a configuration that cannot be used into its one
// refusal line (config.UnusableError.Refusal); other errors pass through.
func unusableLine(g *globals, err error) error {
	if u, ok := config.AsUnusable(err); ok {
		return lineError{u.Refusal(g.getenv("HOME"))}
	}
	return err
}

// exitCodeError lets a subcommand choose its exit status without printing.
type exitCodeError struct{ code int }

func (e exitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	// Library diagnostics go to stderr only when asked for: the CLI says
	// what went wrong in its own single line.
	level := slog.LevelError + 1
	if os.Getenv("EXECGATE_DEBUG") == "1" {
		level = slog.LevelDebug
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
	root := newRootCmd(g)
	root.SetArgs(args[1:])
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ec exitCodeError
	if errors.As(err, &ec) {
		return ec.code
	}
	var le lineError
	if errors.As(err, &le) {
		fmt.Fprintln(stderr, le.line)
		return exitError
	}
	fmt.Fprintf(stderr, "execgate: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "execgate",
		Short:         "A human-in-the-loop gate for the shell commands AI agents run",
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version(),
		// An unknown subcommand is a usage error (exit 2), with a hint.
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q (execgate --help lists them)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetVersionTemplate("execgate {{.Version}}\n")
	root.PersistentFlags().StringVar(&g.config, "config", "", "configuration file (default $EXECGATE_CONFIG or $XDG_CONFIG_HOME/execgate/exec-approvals.json)")
	root.PersistentFlags().StringVar(&g.agent, "agent", "", "agent `ID` (check and policy get: default $EXECGATE_AGENT or detected from the environment; allow, deny, allowlist: *; policy set: the defaults)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newCheckCmd(g))
	root.AddCommand(newReplayCmd(g))
	root.AddCommand(configCommands(g)...)
	root.AddCommand(newShCmd(g), newLogCmd(g))
	root.AddCommand(hubCommands(g)...)
	root.AddCommand(newSetupCmd(g))
	root.AddCommand(newHookCmd(g))
	root.AddCommand(newGateCmd(g))
	root.AddCommand(newVersionCmd(g))
	root.AddCommand(newDoctorCmd(g))
	root.AddCommand(newUndoCmd(g))
	return root
}
