package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/approve"
)

func newApproveCmd(g *globals) *cobra.Command {
	var noBell bool
	cmd := &cobra.Command{
		Use:   "approve [--no-bell]",
		Short: "Approve or deny agents' commands from this terminal as they come",
		Long: `approve lists the requests waiting in the hub, live: the command (escaped
as in the terminal prompt), cwd, agent, risk, reasons and the time left.

Keys: o or y allows once, a allows always, d or n denies, up/down or j/k
move, q or Ctrl-C quits. Quitting answers nothing: pending requests stay
for other approvers or run into their timeout. A key arriving together
with others (a paste) or right after the selection changed by itself
decides nothing. While the hub is down approve keeps retrying.`,
		Args: noArgs("approve"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, inOK := g.stdin.(*os.File)
			out, outOK := g.stdout.(*os.File)
			if !inOK || !outOK {
				return errors.New("approve needs a terminal; in scripts use execgate pending, resolve and watch")
			}
			// Any way of ending restores the terminal.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			name := clientName(g, "approve")
			return approve.Run(ctx, in, out, approve.Options{
				Dial: func(ctx context.Context) (approve.Source, error) {
					c, _, err := dialApprover(ctx, g, name)
					if err != nil {
						return nil, err
					}
					return c, nil
				},
				Name:  name,
				Bell:  !noBell,
				Color: g.getenv("NO_COLOR") == "" && g.getenv("TERM") != "dumb",
			})
		},
	}
	cmd.Flags().BoolVar(&noBell, "no-bell", false, "do not ring the terminal bell when a request arrives")
	return cmd
}
