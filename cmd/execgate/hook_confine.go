package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/hookproto"
	"github.com/execgate/execgate/internal/denial"
)

// Confinement on the hook route: an agent whose hook may rewrite the
// command (Claude Code's PreToolUse updatedInput) is told to run it
// through the shim instead — `'/abs/execgate' sh -c 'COMMAND'` — and the
// shim decides again and runs it confined, in the one place a command
// leaves execgate's hands (shim/plan.go). A command that fits the sandbox
// is then allowed rather than asked about; a safe one runs confined to
// what its model needs.
//
// Only a command that runs the same in the shim's fresh shell as in the
// agent's is rewritten: the agent's shell has sourced its snapshot (the
// user's functions and aliases) and keeps its directory for the next call,
// neither of which a child shell carries back. A command that changes
// directory, sources a file, evaluates text, or names a program that is not
// a builtin or found on PATH (a function or alias of the user's, perhaps)
// is answered as before: asked about when it needs confinement.

// throughShim is the command line that runs command through the shim exe:
// the agent's bash hands the shim command's exact bytes (one single-quoted
// word), with the agent and configuration the hook judged under.
func throughShim(exe, command, agent, config string) string {
	var b strings.Builder
	b.WriteString("EXECGATE_AGENT=" + singleQuote(agent) + " ")
	if config != "" {
		b.WriteString("EXECGATE_CONFIG=" + singleQuote(config) + " ")
	}
	b.WriteString(singleQuote(exe) + " sh -c " + singleQuote(command))
	return b.String()
}

// singleQuote quotes s as one bash word: inside single quotes every byte
// stands for itself but the quote, which closes, is escaped, and reopens.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// rewritable reports whether command runs the same through the shim as in
// the agent's own shell (see above); path is the agent's PATH.
func rewritable(command, path string) bool {
	if command == "" || strings.ContainsRune(command, 0) {
		return false // bash cannot be handed a NUL
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return false
	}
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *syntax.FuncDecl:
			ok = false // defines what the agent's later calls would not see either way, but may shadow a program
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true // assignments alone: the child's own
			}
			name := n.Args[0].Lit()
			ok = name != "" && sameInChild(name, path)
		}
		return ok
	})
	return ok
}

// sameInChild reports whether the command name runs the same program in a
// fresh shell as in the agent's: not one that changes the agent's shell
// (its directory) or runs text as shell code there, and not one only the
// agent's shell may define (a function or alias from its snapshot).
func sameInChild(name, path string) bool {
	switch name {
	case "cd", "pushd", "popd", "source", ".", "eval", "alias", "unalias", "builtin", "command", "enable", "hash", "type":
		return false
	case ":", "[", "[[", "echo", "exit", "export", "false", "local", "printf", "pwd", "read", "return",
		"set", "shift", "test", "true", "unset", "wait", "declare", "typeset", "readonly", "let", "shopt",
		"trap", "umask", "ulimit", "exec", "kill", "getopts", "mapfile", "readarray", "time", "times":
		return true
	}
	if strings.Contains(name, "/") {
		return true // a path: bash looks up no alias by it
	}
	return onPath(name, path)
}

// onPath reports whether name is an executable file in one of path's
// absolute directories.
func onPath(name, path string) bool {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// shimProgram is this program's absolute path, resolved, for the
// rewritten command; "" when it cannot be known.
func shimProgram() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if _, err := exec.LookPath(exe); err != nil {
		return ""
	}
	return exe
}

// hookRewrite is how a confined allowance is rewritten for one hook call;
// nil when it cannot be (the agent cannot rewrite, the command would not
// run the same through the shim, this program's path is unknown).
type hookRewrite struct {
	exe, agent, config string
}

// newHookRewrite prepares the rewrite of req for protocol p, under the
// policy of agent in the configuration file config.
func newHookRewrite(p hookproto.Protocol, req hookproto.Request, getenv func(string) string, agent, config string) *hookRewrite {
	if !p.CanRewrite || !rewritable(req.Command, getenv("PATH")) {
		return nil
	}
	exe := shimProgram()
	if exe == "" {
		return nil
	}
	return &hookRewrite{exe: exe, agent: agent, config: config}
}

// verdict allows req on the condition that it runs through the shim.
func (rw *hookRewrite) verdict(req hookproto.Request) hookproto.Verdict {
	in, err := req.WithCommand(throughShim(rw.exe, req.Command, rw.agent, rw.config))
	if err != nil {
		// Not "ask": in the modes without a prompt the agent runs what a
		// hook asked about, here unconfined.
		return hookproto.Verdict{Decision: hookproto.Deny, Reason: denial.Errorf("cannot run it confined: %v", err).Error()}
	}
	return hookproto.Verdict{Decision: hookproto.Allow, Reason: "execgate: runs confined, through execgate's shim", Input: in}
}
