package main

import (
	"context"
	"fmt"

	"github.com/execgate/execgate/setup"
)

// undoAll is `execgate setup --undo-all`: every recorded --apply undone,
// then whatever else still names this binary or its shims. It fails (exit
// 1) when anything is left pointing at execgate, so that install.sh
// --uninstall does not remove a binary that settings still run.
func undoAll(ctx context.Context, g *globals, shims string) error {
	o, err := setupOptions(g, "", false, "", shims)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	done, err := setup.UndoAll(ctx, o)
	if err != nil {
		return setupError(err)
	}
	left := printUndoneAll(g, o, done)
	leftovers, err := setup.Leftovers(o)
	if err != nil {
		return setupError(err)
	}
	left += printLeftovers(g, o, leftovers)
	if left > 0 {
		fmt.Fprintf(g.stderr, "execgate: %d %s at execgate; fix %s and run execgate setup --undo-all again\n",
			left, plural(left, "thing still points", "things still point"), plural(left, "it", "them"))
		return exitCodeError{exitError}
	}
	return nil
}

// printUndoneAll reports each undo and returns how many failed.
func printUndoneAll(g *globals, o setup.Options, done []setup.Undone) (failed int) {
	if len(done) == 0 {
		fmt.Fprintln(g.stdout, "execgate: no setup --apply is recorded; nothing to undo")
	}
	for _, d := range done {
		one := o
		one.Agent = d.Agent
		switch {
		case d.Err != nil && d.File == "":
			failed++
			fmt.Fprintf(g.stderr, "execgate: could not undo %s: %v\n", d.Agent, setupError(d.Err))
		case d.Err != nil:
			failed++
			fmt.Fprintf(g.stderr, "execgate: could not undo %s in %s: %v\n", d.Agent, homeRel(o, d.File), setupError(d.Err))
		default:
			printUndone(g, one, d.Outcome)
		}
	}
	return failed
}

// printLeftovers lists the lines that still name execgate, each with its
// fix, and returns how many there are.
func printLeftovers(g *globals, o setup.Options, list []setup.Leftover) int {
	if len(list) == 0 {
		return 0
	}
	fmt.Fprintln(g.stderr, "execgate: these still name execgate, and setup did not put them there (or they changed since), so it cannot take them out:")
	for _, l := range list {
		if l.Line > 0 {
			fmt.Fprintf(g.stderr, "  %s:%d: %s\n", homeRel(o, l.File), l.Line, l.Text)
		} else {
			fmt.Fprintf(g.stderr, "  %s\n", homeRel(o, l.File))
		}
		fmt.Fprintf(g.stderr, "      fix: %s\n", l.Fix)
	}
	return len(list)
}

// plural picks the word for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
