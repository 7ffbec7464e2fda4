package main

import (
	"fmt"

	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/shim"
)

// runLogVerify is `execgate log --verify`: it checks the audit log's hash
// chain and prints each place it breaks, one line each, as FILE:LINE:
// what, then one line for the whole. A break exits 1; so does a log that
// cannot be read.
func runLogVerify(g *globals) error {
	path, err := shim.DefaultAuditPath(g.getenv)
	if err != nil {
		return err
	}
	audit := shim.AuditLog{Path: path}
	r, err := audit.Verify()
	if err != nil {
		return err
	}
	for _, p := range r.Problems {
		fmt.Fprintln(g.stdout, display.Escape(p.String()))
	}
	for _, p := range r.Notes {
		fmt.Fprintln(g.stdout, display.Escape("note: "+p.String()))
	}
	older := ""
	if r.Unchained > 0 {
		older = fmt.Sprintf("; %d older lines before the chain, which nothing vouches for", r.Unchained)
	}
	if !r.Intact() {
		fmt.Fprintf(g.stdout, "broken: the audit log %s was edited, truncated or reordered in %d places (above)%s\n",
			display.Escape(path), len(r.Problems), older)
		reportLost(g.stderr, &audit)
		return exitCodeError{exitError}
	}
	switch r.Chained {
	case 0:
		fmt.Fprintf(g.stdout, "intact: the audit log %s holds no chained line yet%s\n", display.Escape(path), older)
	default:
		fmt.Fprintf(g.stdout, "intact: %d lines (seq %d–%d) in %d files of %s, each chained to the one before%s\n",
			r.Chained, r.FirstSeq, r.LastSeq, r.Files, display.Escape(path), older)
	}
	reportLost(g.stderr, &audit)
	return nil
}
