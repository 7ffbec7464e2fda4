// Package web is the web approver: a small HTTP server on loopback whose
// page shows the hub's pending approvals as cards and answers them, lists
// recent decisions from the audit log, and edits the policy and the hub's
// session overrides.
//
// It is an approver client of the hub protocol like `execgate approve`:
// every browser tab gets its own approver connection (hub.Dial with
// RoleApprover), bridged to the page over a WebSocket, so a tab is one
// more approver and the hub's first-answer-wins decides races between
// tabs, terminals and scripts. While no tab is open the web server holds
// no hub connection, so it never makes the hub wait on nobody.
//
// Access is by a one-time login token in the URL that `execgate web`
// prints; it is exchanged for an HttpOnly, SameSite=Strict session cookie.
// Every request's Host must name this server (DNS rebinding) and any Origin
// must be this server's (cross-site requests, WebSocket hijacking).
package web
