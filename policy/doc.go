// Package policy decides what happens to a shell command before it runs.
//
// It only judges. The analysis parses a command with mvdan.cc/sh, through
// package shparse, and reduces it to segments (one per simple command,
// wherever it appears), recognising the envelopes agents wrap commands in;
// the rule tables (rules.json) and the four safety layers (allowlist, shell
// syntax, safe binaries, dangerous patterns) grade them into a Risk; and
// the facade (Engine.Evaluate, Engine.Analyze, Decide) turns that Risk,
// under a config.Policy, into a Decision, with the reasons and an "allow
// always" suggestion.
//
// The packages beneath it each hold one concern that needs nothing of the
// judging: shparse parses as the shell reads, or refuses (a text too deep
// to parse safely, one bash reads otherwise than the parser); pathres says
// where a path leads, as bash spells it and on disk as the kernel resolves
// it. The configuration file it judges under is package config's; the
// allowlist and denylist patterns are package pattern's. The package never
// runs anything and never asks anyone: it only explains.
package policy
