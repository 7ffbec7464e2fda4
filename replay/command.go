package replay

import (
	"fmt"
	"time"

	"github.com/execgate/execgate/policy"
)

// Command is one shell command an agent ran, as its transcript recorded
// it.
type Command struct {
	// Text is the program the shell ran: for an argv such as
	// ["bash", "-lc", "…"] the "…", for a plain argv its words quoted as
	// bash would need them.
	Text string
	// Dialect is the shell that read Text: bash unless the transcript says
	// zsh ran it.
	Dialect policy.Dialect
	// Cwd is the absolute directory the command started in; "" when the
	// transcript does not say.
	Cwd string
	// Root is the session's project directory, when the transcript names
	// one: a command run outside it is judged against it, as the agents'
	// hooks judge it.
	Root string
	// Session names the agent session the command belongs to; commands of
	// one session may span files (a resumed session) and a file may hold
	// several.
	Session string
	// Agent is the policy's id for the agent that ran it (claude-code,
	// codex, gemini-cli), or "" when the format does not belong to one.
	Agent string
	// Time is when the agent issued it; zero when the transcript does not
	// say.
	Time time.Time
	// File and Line say where the command was read: the line of a JSON
	// Lines file, or the line a JSON document's record starts on.
	File string
	Line int
}

// Where is the command's place in its transcript, file:line.
func (c Command) Where() string { return fmt.Sprintf("%s:%d", c.File, c.Line) }

// Problem is a record that could not be read, or a file that could not
// be: it was skipped, and everything else was read.
type Problem struct {
	File string
	// Line is 0 when the problem is with the file as a whole.
	Line int
	What string
}

func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.File, p.What)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.What)
}

// Sink receives what a reader finds, in transcript order.
type Sink interface {
	// Command is called for each command; an error stops the reading.
	Command(Command) error
	// Problem is called for each record that was skipped.
	Problem(Problem)
	// Skipped is called for a shell call that is not a command run by a
	// shell (Codex's apply_patch, which Codex applies itself), with why.
	Skipped(c Command, why string)
}
