// Package shim is execgate's bash-compatible front end: the program an agent
// runs as its shell.
//
// It reads bash's command line ([ParseCommandLine]), checks the whole program
// with the policy before anything runs, asks a human when the policy says so,
// records "allow always" answers in the configuration, runs what is allowed
// with the real shell and the caller's own argv, and writes every decision to
// the audit log ([AuditLog]). It writes nothing into the command's output but
// a single line when a command is refused.
package shim
