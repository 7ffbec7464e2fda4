package shim

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/interp"
)

// Capping exists because an agent's context is small: a command that prints
// megabytes would otherwise flood it. It must touch nothing else. Whatever
// bash would have written to a file, a device or a terminal, or to a pipe
// that leads into make, npm, git or a CI script, has to arrive byte for byte,
// or `sh -c 'cat rand.bin' > copy.bin` corrupts the copy.
//
// So the output is capped only when both hold:
//
//   - an agent is the caller: the command came in an agent's envelope (the
//     agent ran the shim itself), or the environment names an agent
//     (config.DetectAgent: $EXECGATE_AGENT, CLAUDECODE=1, GEMINI_CLI=1,
//     CODEX_*) and shows no program in between (intermediaries);
//   - stdout is a pipe or a socket: something reads it as a stream. Sockets
//     count because Node, which runs Claude Code and Gemini CLI, hands its
//     children a socketpair, not a pipe, for each "pipe" stream. A socket
//     is never a file that a cap could corrupt.
//
// Otherwise (stdout a regular file, a device such as /dev/null, or a
// terminal; no agent; a nested shim) the shell gets the shim's own file
// descriptors and the shim is not in the data path at all.

// cappedEnv is set in the environment of a command whose output a shim
// caps. A shim started inside it (sh -c … in a pipeline, npm's script-shell)
// writes into that command's pipes, not to the agent: the outer shim caps
// what the agent finally reads, so the inner one must not cut anything.
const cappedEnv = "EXECGATE_CAPPED"

// intermediaries are variables that programs set for the commands they run.
// With one of them set, the shim's output goes to that program (make, an
// npm script, a git alias or hook, a capping shim) and on to its caller's
// redirections, not straight to the agent, even when the agent's variables
// were inherited.
var intermediaries = []string{
	cappedEnv,
	"MAKELEVEL",           // GNU make, for its recipes
	"npm_lifecycle_event", // npm, yarn and pnpm run scripts
	"GIT_EXEC_PATH",       // git, for aliases and hooks
}

// agentCaller reports whether an agent runs this command and will read its
// output: an envelope says so outright (unless an outer shim already caps);
// an agent recognised from the environment counts only when no
// intermediary stands between it and the shim.
func (s *session) agentCaller(agent string) bool {
	if s.getenv(cappedEnv) != "" {
		return false
	}
	if s.envelope != nil {
		return true
	}
	if agent == "" || agent == config.DefaultAgent {
		return false
	}
	for _, name := range intermediaries {
		if s.getenv(name) != "" {
			return false
		}
	}
	return true
}

// streamReader reports whether f is a pipe or a socket: a stream another
// process reads, as opposed to a regular file, a device or a terminal.
func streamReader(f *os.File) bool {
	if f == nil {
		return false
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFSOCK:
		return true
	}
	return false
}

// capOutput decides whether run's output is capped, and sets run up
// accordingly: MaxBytes 0 when it is not (the shell then writes straight
// to the shim's stdout and stderr); when it is, a stderr that is not a
// stream is handed over as it is, and the command's environment marks it
// as capped for any shim it starts.
func (s *session) capOutput(run *interp.Options, agent string) bool {
	if run.MaxBytes == 0 || !streamReader(s.o.Stdout) || !s.agentCaller(agent) {
		run.MaxBytes = 0
		return false
	}
	run.Direct[1] = !streamReader(s.o.Stderr)
	run.Env = withCapped(s.o.Environ)
	return true
}

// withCapped returns environ with cappedEnv set.
func withCapped(environ []string) []string {
	out := make([]string, 0, len(environ)+1)
	out = append(out, environ...)
	return append(out, cappedEnv+"=1")
}
