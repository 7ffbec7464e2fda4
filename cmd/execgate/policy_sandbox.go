package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/config"
)

// `execgate policy sandbox`: the paths an agent's confined commands may
// also read or write (agents.NAME.sandbox), listed, added and removed with
// the same locked, atomic edit and the same validation as the rest of the
// configuration. --agent names the agent; without it the edit is to "*".

func newPolicySandboxCmd(g *globals) *cobra.Command {
	var asJSON bool
	list := func(*cobra.Command, []string) error { return sandboxList(g, asJSON) }
	cmd := &cobra.Command{
		Use:   "sandbox [list|add|remove]",
		Short: "List, add or remove paths confined commands may also read or write",
		Long: `sandbox lists the paths an agent's confined commands may read or write
beyond the workspace, its private TMPDIR and the known build caches (the
agent's own and "*"'s), and adds or removes them: --agent names the agent,
without it the change is to "*". A path is absolute or under the home (~/…);
one that names the home, /, /tmp, a secret (~/.ssh, ~/.aws …), a shell's or
git's start-up file, or, for write, the system's files, is refused. The
grants only widen what a command that runs confined anyway may touch; they
never make a command run confined in place of asking. execgate check shows
them.

Hosts (host pypi.org, *.pythonhosted.org, proxy.golang.org:443) are what
a confined command that runs code may reach through the shim's HTTPS proxy
(HTTP_PROXY, HTTPS_PROXY): pip, npm or go fetching from their registries.
Everything else it asks for gets 403. A host allowed receives whatever the
command sends it, the environment's tokens included: allow registries, not
services that act on your behalf.`,
		Example: `  execgate policy sandbox add read ~/.m2 --agent claude-code
  execgate policy sandbox add write ~/.gradle/caches
  execgate policy sandbox remove write ~/.gradle/caches
  execgate policy sandbox add host pypi.org files.pythonhosted.org --agent claude-code
  execgate policy sandbox --json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown policy sandbox subcommand %q (want list, add or remove)", args[0])
			}
			return nil
		},
		RunE: list,
	}
	listCmd := &cobra.Command{
		Use:   "list",
		Short: "List the paths confined commands of --agent may also read or write",
		Args:  cobra.NoArgs,
		RunE:  list,
	}
	edit := func(add bool) *cobra.Command {
		verb := "remove"
		if add {
			verb = "add"
		}
		return &cobra.Command{
			Use:   verb + " read|write PATH... | host HOST...",
			Short: strings.ToUpper(verb[:1]) + verb[1:] + " paths confined commands of --agent (default \"*\") may also read or write",
			Args: func(_ *cobra.Command, args []string) error {
				if len(args) < 2 || args[0] != "read" && args[0] != "write" && args[0] != "host" {
					return usagef("policy sandbox %s needs read or write and at least one PATH, or host and at least one HOST, for example: execgate policy sandbox %s read ~/.m2", verb, verb)
				}
				return nil
			},
			RunE: func(cmd *cobra.Command, args []string) error {
				kind := args[0]
				if kind == "host" {
					kind = "hosts"
				}
				return sandboxEdit(cmd.Context(), g, add, kind, args[1:])
			},
		}
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the lists as JSON")
	listCmd.Flags().BoolVar(&asJSON, "json", false, "print the lists as JSON")
	cmd.AddCommand(listCmd, edit(true), edit(false))
	return cmd
}

// sandboxView is `execgate policy sandbox --json`.
type sandboxView struct {
	Agent  string `json:"agent"`
	Config string `json:"config"`
	// Configured are the lists as written at each level ("*" and the
	// agent), before ~ is made the home.
	Configured map[string]config.SandboxConfig `json:"configured"`
	// Effective is what confined commands of the agent get.
	Effective config.SandboxConfig `json:"effective"`
}

func sandboxList(g *globals, asJSON bool) error {
	cfg, path, bad := loadForRead(g)
	agent := config.DetectAgent(g.agent, g.getenv, os.Environ())
	view := sandboxView{Agent: agent, Config: path, Configured: map[string]config.SandboxConfig{},
		Effective: cfg.SandboxFor(agent, g.getenv("HOME"))}
	for _, name := range []string{config.WildcardAgent, agent} {
		if a, ok := cfg.Agents[name]; ok && (len(a.Sandbox.Read) > 0 || len(a.Sandbox.Write) > 0 || len(a.Sandbox.Hosts) > 0) {
			view.Configured[name] = a.Sandbox
		}
	}
	if asJSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(view); err != nil {
			return fmt.Errorf("print sandbox paths: %w", err)
		}
	} else {
		fmt.Fprintf(g.stdout, "sandbox paths for agent %s (%s)\n", agent, path)
		if len(view.Effective.Read) == 0 && len(view.Effective.Write) == 0 && len(view.Effective.Hosts) == 0 {
			fmt.Fprintln(g.stdout, "none: confined commands get the workspace, a private TMPDIR and the known build caches")
		}
		for _, p := range view.Effective.Read {
			fmt.Fprintf(g.stdout, "read   %s\n", p)
		}
		for _, p := range view.Effective.Write {
			fmt.Fprintf(g.stdout, "write  %s (for a command that writes)\n", p)
		}
		for _, h := range view.Effective.Hosts {
			fmt.Fprintf(g.stdout, "host   %s (through the proxy, for a command that runs code)\n", h)
		}
	}
	if bad {
		return exitCodeError{exitError}
	}
	return nil
}

// sandboxEdit adds or removes paths of one list, all or nothing: every
// path is checked before the file is touched.
func sandboxEdit(ctx context.Context, g *globals, add bool, kind string, paths []string) error {
	if add {
		for _, p := range paths {
			if err := config.CheckSandboxPath(kind, p); err != nil {
				return usagef("policy sandbox add %s: %v", kind, err)
			}
		}
	}
	label := kind
	if kind == "hosts" {
		label = "host"
	}
	where := `"*"`
	if g.agent != "" {
		where = "agent " + g.agent
	}
	var lines []string
	removed := 0
	err := update(ctx, g, func(d *config.Document) error {
		lines, removed = lines[:0], 0
		for _, p := range paths {
			var changed bool
			var err error
			if add {
				changed, err = d.AddSandboxPath(g.agent, kind, p)
			} else {
				changed, err = d.RemoveSandboxPath(g.agent, kind, p)
			}
			if err != nil {
				return err
			}
			switch {
			case add && changed:
				lines = append(lines, fmt.Sprintf("added %s %s for %s", label, p, where))
			case add:
				lines = append(lines, fmt.Sprintf("%s %s was there already for %s", label, p, where))
			case changed:
				removed++
				lines = append(lines, fmt.Sprintf("removed %s %s for %s", label, p, where))
			default:
				lines = append(lines, fmt.Sprintf("%s %s was not there for %s", label, p, where))
			}
		}
		if !add && removed == 0 {
			return errNoChange // leave the file as it is
		}
		return nil
	})
	if errors.Is(err, errNoChange) {
		return fmt.Errorf("no %s path %s for %s", label, strings.Join(paths, ", "), where)
	}
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(g.stdout, l)
	}
	return nil
}
