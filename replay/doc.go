// Package replay reads the transcripts coding agents keep of the shell
// commands they ran — Claude Code's session logs, Codex's rollouts, Gemini
// CLI's chats, mini-swe-agent's and SWE-agent's trajectories — and judges
// every command as the shim would under the user's policy, to say what
// execgate would have done with that history: how many commands would have
// run unasked, asked or been refused, how often each session would have
// been interrupted and why, what it would have stopped, and which
// allowlist entries would have spared the most questions.
//
// It reads files and nothing else: it never writes to a transcript and
// never runs a command from one. Every reader streams, one record at a
// time, so a history of any size is read in flat memory; a record that
// cannot be read is reported as one line (file:line: what) and skipped,
// and the rest of the file is still read.
package replay
