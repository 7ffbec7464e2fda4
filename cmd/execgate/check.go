package main

import "github.com/spf13/cobra"

func newCheckCmd(g *globals) *cobra.Command { return &cobra.Command{Use: "check"} }
