// Package e2e holds the end-to-end tests that drive the real agent CLIs
// (Claude Code, Codex, Gemini CLI, as pinned in agents.json) against mock
// model servers on 127.0.0.1, with execgate wired in as `execgate setup`
// and the README say. They are off by default, being slow and needing npm:
//
//	EXECGATE_E2E=1 go test ./e2e
//
// Without npm, or when an install fails (offline), each agent's tests skip
// with one line saying why.
package e2e
