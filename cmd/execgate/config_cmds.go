package main

import "github.com/spf13/cobra"

// configCommands returns the config-editing subcommands (allow, deny,
// allowlist, policy).
func configCommands(g *globals) []*cobra.Command { return nil }
