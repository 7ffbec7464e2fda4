// Package hub is the approval meeting point: a per-user daemon on a Unix
// socket where shims ask whether a command may run and approvers answer.
//
// The wire protocol is JSON lines (see docs/protocol.md): requests and
// responses matched by id, and events the server pushes to subscribers.
// Server runs the daemon; Client speaks the protocol for shims and
// approvers. The package knows nothing of terminals: asking a person is
// the prompt package's job, showing pending approvals the approver's.
package hub
