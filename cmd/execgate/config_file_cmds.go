package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/config"
)

// newConfigCmd is `execgate config check|edit`: the configuration file as a
// whole. The work is config.Check and config.Store.BeginEdit/Install.
func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config check|edit",
		Short: "Validate the configuration file, or edit it safely",
		Long: `config check validates the configuration file and explains each problem
on a line of its own; it exits 0 when the file is fine (or missing: the
built-in defaults apply) and 1 when it is not. A file that exists but cannot
be used makes every command refused until it is fixed.

config edit opens $EDITOR (else vi) on a copy of the file in the same
directory and, when the editor exits, installs the copy atomically only if
it parses. Otherwise it says why and leaves the copy, so that nothing typed
is lost.`,
		Args: noArgs("config (subcommands: check, edit)"),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Validate the configuration file; one line per problem, exit 1 if any",
		Args:  noArgs("config check"),
		RunE:  func(*cobra.Command, []string) error { return configCheck(g) },
	}, &cobra.Command{
		Use:   "edit",
		Short: "Edit a copy of the configuration file with $EDITOR; install it only if it parses",
		Args:  noArgs("config edit"),
		RunE:  func(cmd *cobra.Command, _ []string) error { return configEdit(cmd.Context(), g) },
	})
	return cmd
}

func configCheck(g *globals) error {
	r := config.Check(configPath(g))
	out := g.stdout
	if !r.OK() {
		out = g.stderr
	}
	for _, l := range r.Lines(g.getenv("HOME")) {
		fmt.Fprintln(out, l)
	}
	if !r.OK() {
		return exitCodeError{exitError}
	}
	return nil
}

func configEdit(ctx context.Context, g *globals) error {
	store := &config.Store{Path: configPath(g)}
	e, err := store.BeginEdit()
	if err != nil {
		return err
	}
	editor := g.getenv("EDITOR")
	if editor == "" {
		editor = "vi"
	}
	// As git does: $EDITOR may carry arguments ("code --wait").
	cmd := exec.CommandContext(ctx, "sh", "-c", editor+` "$@"`, editor, e.Copy)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = g.stdin, g.stdout, g.stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("config edit: %s failed (%v); nothing installed, your edit is kept in %s", editor, err, e.Copy)
	}
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	warnings, err := e.Install(ctx)
	var invalid *config.InvalidEditError
	switch {
	case errors.As(err, &invalid):
		return fmt.Errorf("config edit: not installed: %v; your edit is kept in %s (fix it there and copy it over %s, or run execgate config edit again)",
			invalid.Err, e.Copy, store.Path)
	case errors.Is(err, config.ErrStale):
		return fmt.Errorf("config edit: not installed: %s changed while you edited it; your edit is kept in %s", store.Path, e.Copy)
	case err != nil:
		return fmt.Errorf("config edit: not installed: %v; your edit is kept in %s", err, e.Copy)
	}
	for _, w := range warnings {
		fmt.Fprintf(g.stderr, "execgate: warning: %s: %s\n", store.Path, w)
	}
	fmt.Fprintf(g.stdout, "installed %s\n", store.Path)
	return nil
}
