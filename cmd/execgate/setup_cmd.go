package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/internal/state"
	"github.com/execgate/execgate/interp"
	"github.com/execgate/execgate/setup"
)

func newSetupCmd(g *globals) *cobra.Command {
	var f struct {
		hook, apply, undo, undoAll bool
		settings, shims            string
	}
	agents := setup.Agents()
	cmd := &cobra.Command{
		Use:   "setup " + strings.Join(agents, "|") + " | setup --undo-all",
		Short: "Show how to run an agent's commands through execgate, or apply or undo it",
		Long: `Show how to run an agent's commands through execgate: the entries for its
settings file and the shell recipes, ready to copy. --apply merges the entries
into the settings file (keeping everything else in it, with a backup beside
it); --undo takes them out again, restoring the file exactly when nobody has
edited it since. For claude, --undo and --hook --undo each take out only
their own integration: undoing one leaves the other in place.

  claude   env.CLAUDE_CODE_SHELL = the shim; --hook: a PreToolUse hook instead
  codex    a PreToolUse hook in ~/.codex/hooks.json (Codex ignores $SHELL)
  gemini   a BeforeTool hook in ~/.gemini/settings.json, and the PATH recipe
  aider    the SHELL recipe (no settings file)
  shell    recipes for make, npm, pnpm and tools that use $SHELL

--undo-all (no agent) undoes every --apply recorded in execgate's state
directory, newest first, then looks for lines that still name this binary
or its shims where people wire execgate in by hand (~/.npmrc script-shell,
shell start-up files, the hub's service unit, the agents' settings files)
and says how to fix each. It exits 0 when nothing it knows of points at
execgate any more, 1 otherwise: install.sh --uninstall runs it and stops
before removing the binary unless it exits 0.`,
		ValidArgs: agents,
		Args: func(_ *cobra.Command, args []string) error {
			if f.undoAll {
				if len(args) > 0 {
					return usagef("setup --undo-all takes no agent: it undoes every integration setup applied")
				}
				return nil
			}
			if len(args) != 1 || !slices.Contains(agents, args[0]) {
				return usagef("setup needs one agent: %s", strings.Join(agents, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.apply && f.undo {
				return usagef("setup: --apply and --undo cannot be used together")
			}
			if f.undoAll {
				if f.apply || f.undo || f.hook || f.settings != "" {
					return usagef("setup --undo-all goes with no other flag but --shims: each record names its agent and file")
				}
				return undoAll(cmd.Context(), g, f.shims)
			}
			o, err := setupOptions(g, args[0], f.hook, f.settings, f.shims)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), lockWait)
			defer cancel()
			switch {
			case f.apply:
				out, err := setup.Apply(ctx, o)
				if err != nil {
					return setupError(err)
				}
				printApplied(g, o, out)
			case f.undo:
				out, err := setup.Undo(ctx, o)
				if err != nil {
					return setupError(err)
				}
				printUndone(g, o, out)
			default:
				notes, err := setup.Show(g.stdout, o)
				if err != nil {
					return setupError(err)
				}
				for _, n := range notes {
					fmt.Fprintf(g.stderr, "execgate: note: %s\n", n)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&f.hook, "hook", false, "claude: a PreToolUse hook instead of the shim as its shell")
	cmd.Flags().BoolVar(&f.apply, "apply", false, "merge the integration into the agent's settings file")
	cmd.Flags().BoolVar(&f.undo, "undo", false, "take out what --apply merged")
	cmd.Flags().BoolVar(&f.undoAll, "undo-all", false, "undo every integration --apply made (no agent), and list what else still names execgate")
	cmd.Flags().StringVar(&f.settings, "settings", "", "the agent's settings `FILE` (default: where the agent keeps it)")
	cmd.Flags().StringVar(&f.shims, "shims", "", "the shim `DIR` (default: lib/execgate/shims beside this binary's bin directory)")
	return cmd
}

// setupOptions finds this binary, the home directory and the state
// directory.
func setupOptions(g *globals, agent string, hook bool, settings, shims string) (setup.Options, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return setup.Options{}, fmt.Errorf("find the execgate binary: %w", err)
	}
	home := g.getenv("HOME")
	if home == "" {
		if home, err = os.UserHomeDir(); err != nil {
			return setup.Options{}, fmt.Errorf("find the home directory: %w", err)
		}
	}
	if settings != "" {
		if settings, err = filepath.Abs(settings); err != nil {
			return setup.Options{}, fmt.Errorf("--settings: %w", err)
		}
	}
	// No state directory leaves StateDir empty, which setup refuses
	// with its own line when it needs one.
	stateDir, _ := state.Dir(g.getenv)
	// No zsh leaves Zsh empty: the bash shim, whatever the login shell.
	zsh, _ := interp.FindZsh()
	return setup.Options{Agent: agent, Hook: hook, Settings: settings, Exe: exe, Shims: shims,
		Home: home, StateDir: stateDir, Getenv: g.getenv,
		LoginShell: setup.LoginShell(g.getenv, "/etc/passwd", os.Getuid()), Zsh: zsh}, nil
}

func setupError(err error) error {
	if errors.Is(err, setup.ErrUsage) {
		return usageError{errors.New(strings.TrimPrefix(err.Error(), setup.ErrUsage.Error()+": "))}
	}
	return err
}

// homeRel shows a path with the home directory as ~.
func homeRel(o setup.Options, path string) string {
	if rel, err := filepath.Rel(o.Home, path); err == nil && o.Home != "" && filepath.IsLocal(rel) {
		return filepath.Join("~", rel)
	}
	return path
}

func printApplied(g *globals, o setup.Options, out *setup.Outcome) {
	switch {
	case out.File == "":
	case out.Created:
		fmt.Fprintf(g.stdout, "execgate: created %s\n", homeRel(o, out.File))
	case out.Changed:
		fmt.Fprintf(g.stdout, "execgate: updated %s (backup: %s)\n", homeRel(o, out.File), homeRel(o, out.Backup))
	default:
		fmt.Fprintf(g.stdout, "execgate: %s is already set up for %s\n", homeRel(o, out.File), o.Agent)
	}
	for _, w := range out.Warnings {
		fmt.Fprintf(g.stderr, "execgate: warning: %s\n", w)
	}
	for _, n := range out.Notes {
		if out.File == "" {
			fmt.Fprintf(g.stdout, "execgate: %s\n", n)
		} else {
			fmt.Fprintf(g.stdout, "execgate: note: %s\n", n)
		}
	}
}

func printUndone(g *globals, o setup.Options, out *setup.Outcome) {
	file := homeRel(o, out.File)
	switch {
	case out.File == "":
		for _, n := range out.Notes {
			fmt.Fprintf(g.stdout, "execgate: %s\n", n)
		}
	case !out.Changed:
		why := ""
		if len(out.Notes) > 0 {
			why = " (" + strings.Join(out.Notes, "; ") + ")"
		}
		fmt.Fprintf(g.stdout, "execgate: nothing to undo for %s in %s%s\n", o.Agent, file, why)
	case out.Restored && out.Created:
		fmt.Fprintf(g.stdout, "execgate: removed %s (setup had created it)\n", file)
	case out.Restored:
		fmt.Fprintf(g.stdout, "execgate: restored %s as it was before setup\n", file)
	default:
		fmt.Fprintf(g.stdout, "execgate: took execgate's entries out of %s and kept your later edits (backup: %s)\n",
			file, homeRel(o, out.Backup))
	}
	for _, k := range out.Kept {
		fmt.Fprintf(g.stdout, "execgate: left %s in %s: it was changed since setup\n", k, file)
	}
	if out.File != "" && out.Changed {
		for _, n := range out.Notes {
			fmt.Fprintf(g.stdout, "execgate: note: %s\n", n)
		}
	}
}
