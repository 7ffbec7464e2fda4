// Package prompt asks a human whether a command may run.
//
// A request goes to an [Asker]: today the controlling terminal ([TTY]),
// later a hub daemon placed before it in a [Chain]. An Asker only reports
// what the human said (or that nobody answered in time); applying the
// policy's askFallback stays with the caller, because only the caller holds
// the allowlist it needs. Everything shown to the human goes through
// [display.Escape], so a command cannot hide text from, or forge lines in, the
// prompt that approves it.
package prompt
