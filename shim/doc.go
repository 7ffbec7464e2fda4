// Package shim is execgate's bash-compatible front end: the program an agent
// runs as its shell.
//
// It reads bash's command line ([ParseCommandLine]), checks the whole program
// with the policy before anything runs, asks a human when the policy says so,
// records "allow always" answers in the configuration, runs what is allowed
// with the real shell and the caller's own argv, and writes every decision to
// the audit log ([AuditLog]). It writes nothing into the command's output but
// a single line when a command is refused.
//
// An agent's envelope around the model's command (Claude Code's, Gemini
// CLI's, Codex's) is recognised by policy.Trust.Unwrap: the payload is what
// is judged, shown and learnt, and the whole envelope runs unchanged. An
// interactive shell runs the real bash with a gate (gate.bash) that has
// [Gate] judge each typed line before it runs. [Judge] decides one command
// without running it, for agents' pre-tool hooks.
package shim
