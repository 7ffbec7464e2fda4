// Package policy decides what happens to a shell command before it runs.
//
// It holds the three pieces every front end (the shim, the hooks, the hub,
// `execgate check`) shares: the configuration file and its locked, atomic
// writer; the analysis that parses a command with mvdan.cc/sh and reduces it to
// segments (one per simple command, wherever it appears); and the four safety
// layers (allowlist, shell syntax, safe binaries, dangerous patterns) whose
// verdicts combine into a Risk and, under the effective policy, a Decision.
//
// The package never runs anything and never asks anyone: it only explains.
package policy
