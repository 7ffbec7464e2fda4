package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/doctor"
	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/shim"
)

func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Prove the gate fires for each agent, and check the install",
		Long: `doctor runs, for each agent (Claude Code, Codex, Gemini CLI), the hook
command and the shell its settings file names, with a probe in that agent's
exact protocol: the harmless command true, judged under EXECGATE_SECURITY=deny,
which execgate must refuse. An agent is "live" when every execgate route it has
refused the probe, "registered but not firing" when one ran it or did not
answer within 2 s, "absent" when it has no execgate route. It also checks the
binary and its shims, the configuration, the hub and Codex's hook trust.

Exit status 1 when anything configured is not working, 0 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := setupOptions(g, "", false, "", "")
			if err != nil {
				return err
			}
			auditPath, _ := shim.DefaultAuditPath(g.getenv) // none: no check
			checks := doctor.Run(cmd.Context(), doctor.Options{
				Setup:      o,
				ConfigPath: configPath(g),
				AuditPath:  auditPath,
				// This binary serves the helper, as the shims' does.
				SandboxHelper: shim.SelfHelper,
				Hub: func(ctx context.Context) (int, error) {
					socket, token, err := hubTarget(g)
					if err != nil {
						return 0, err
					}
					c, err := hub.Dial(ctx, hub.DialOptions{Socket: socket, Token: token, Role: hub.RoleRequester, Name: "doctor"})
					if err != nil {
						return 0, err
					}
					defer c.Close()
					return c.Hello().Approvers, nil
				},
			})
			for _, c := range checks {
				fmt.Fprintf(g.stdout, "%-4s  %-7s %s\n", c.Status, c.Area, display.Escape(c.Text))
				if c.Fix != "" && c.Status != doctor.OK {
					fmt.Fprintf(g.stdout, "%-4s  %-7s fix: %s\n", "", "", display.Escape(c.Fix))
				}
			}
			if doctor.Failed(checks) {
				return exitCodeError{exitError}
			}
			return nil
		},
	}
}
