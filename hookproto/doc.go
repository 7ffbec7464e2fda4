// Package hookproto speaks the coding agents' pre-tool hook protocols: it
// reads the request an agent sends its hook (which command, run where),
// writes a verdict back the way that agent reads it, and reads such an
// answer back into a verdict.
//
// It holds one row per agent (Claude Code, Codex, Gemini CLI), each citing
// the agent's source for what it does. It judges nothing: `execgate hook`
// puts a judge between [Protocol.Decode] and [Protocol.Encode], and `execgate
// doctor` builds a request with [Protocol.Input], runs the hook command the
// agent is configured with, and reads its answer with [Protocol.Parse].
//
// Every agent runs the tool when its hook fails, times out or exits with a
// status it does not know, so everything here fails closed: input that is
// not a well-formed request is an error (to be refused), never a request.
package hookproto
