package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/shim"
)

// gateFlags are what the gate's DEBUG trap passes besides the line.
type gateFlags struct {
	aliases []string // NAME=VALUE
	each    bool
}

// newGateCmd is the callback of the interactive gate (shim/gate.bash): it
// judges one command line typed into a gated interactive shell. Hidden: the
// shim's gate runs it, people do not.
func newGateCmd(g *globals) *cobra.Command {
	var f gateFlags
	cmd := &cobra.Command{
		Use:   "gate [--each] [--alias NAME=VALUE]… -- LINE",
		Short: "Judge one line typed into a gated interactive shell (run by the shim's gate)",
		Long: `gate judges one command line typed into an interactive shell that the
shim started behind its gate: exit status 0 lets the line run, anything else
stops all of it. It prints nothing when the line is allowed and one line,
"execgate: denied: REASON", when it is not. Lines that would turn the gate
off (trap - DEBUG, shopt -u extdebug …) are refused without asking.

Only the hub's approvers are asked, never the terminal: whoever types into
the gated shell is the agent, and a prompt on that terminal would let it
approve its own commands.

--alias passes the shell's aliases, which bash expands in the line as typed;
--each says LINE is one simple command ($BASH_COMMAND) because the line
itself did not reach the history.`,
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGate(cmd, g, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.aliases, "alias", nil, "an alias of the shell, `NAME=VALUE` (repeatable)")
	fl.BoolVar(&f.each, "each", false, "LINE is one simple command as bash shows it in $BASH_COMMAND")
	return cmd
}

func runGate(cmd *cobra.Command, g *globals, f gateFlags, line string) error {
	aliases := make(map[string]string, len(f.aliases))
	for _, a := range f.aliases {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return usagef("--alias %q: want NAME=VALUE", a)
		}
		aliases[name] = value
	}
	getenv := func(k string) string {
		if k == "EXECGATE_CONFIG" {
			return configPath(g) // --config reaches the shim's loader
		}
		return g.getenv(k)
	}
	// Asker nil: the hub's approvers only (see Long).
	j := shim.Gate(cmd.Context(), shim.GateOptions{
		JudgeOptions: shim.JudgeOptions{Command: line, Agent: g.agent, Source: "interactive", Getenv: getenv, Stderr: stderrFile(g)},
		Aliases:      aliases,
		Each:         f.each,
	})
	if j.Allow {
		return nil
	}
	fmt.Fprintln(g.stderr, j.Message)
	return exitCodeError{exitError}
}
