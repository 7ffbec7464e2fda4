package hub

import "encoding/json"

// ProtocolVersion is sent in the hello handshake; a hub refuses clients of
// another version with ErrCodeVersion. Version 2 added the hub's proof and
// sealed frames (see frameauth.go).
const ProtocolVersion = 2

// MaxLine bounds one JSON line in either direction, newline included.
const MaxLine = 256 << 10

// Role is what a connection may do, fixed at the hello handshake.
type Role string

// Roles.
const (
	// RoleRequester (a shim, a hook) may create approvals and wait on its
	// own, report exec events and read its agent's session override.
	RoleRequester Role = "requester"
	// RoleApprover may list, get, subscribe, resolve, read and write the
	// configuration and set session overrides. It must run as the hub's uid.
	RoleApprover Role = "approver"
	// RoleWatcher (execgate watch) may list, get and subscribe, and read
	// the status and the session overrides, but never answers: it is not
	// counted as someone who can approve, so a shim whose only watcher is
	// `watch` asks its terminal at once instead of waiting on nobody. It
	// must run as the hub's uid.
	RoleWatcher Role = "watcher"
)

// Approver kinds in HelloParams.Kind: which surface a person answers from.
const (
	KindTUI = "tui" // execgate approve
	KindWeb = "web" // execgate web
	KindCLI = "cli" // execgate resolve
	KindTTY = "tty" // the shim's own terminal prompt (not a hub client)
)

// approverKinds are the kinds a hello may name.
var approverKinds = []string{KindTUI, KindWeb, KindCLI}

// Method names.
const (
	MethodHello        = "hello"                 // HelloParams → HelloResult
	MethodRequest      = "exec.approval.request" // ApprovalRequest → ApprovalAnswer (blocks)
	MethodResolve      = "exec.approval.resolve" // ResolveParams → Approval
	MethodList         = "exec.approval.list"    // {} → ListResult
	MethodGet          = "exec.approval.get"     // IDParams → Approval
	MethodConfigGet    = "exec.approvals.get"    // {} → ConfigSnapshot
	MethodConfigSet    = "exec.approvals.set"    // ConfigSetParams → ConfigSnapshot
	MethodSubscribe    = "subscribe"             // {} → {} then Event frames
	MethodReport       = "exec.report"           // ExecReport → {} (requesters; fire and forget)
	MethodSessionGet   = "session.get"           // AgentParams → SessionOverride (zero when none)
	MethodSessionSet   = "session.set"           // SessionOverride → SessionOverride
	MethodSessionClear = "session.clear"         // AgentParams → {}
	MethodSessionList  = "session.list"          // {} → SessionListResult
	MethodStatus       = "hub.status"            // {} → Status
	// MethodWithdraw lets a requester give up on one of its own pending
	// approvals (the agent cancelled): approvers get EventWithdrawn and
	// the request is answered with OutcomeWithdrawn.
	MethodWithdraw = "exec.approval.withdraw" // IDParams (exact id) → Approval
)

// Event names pushed to subscribers.
const (
	EventRequested = "exec.approval.requested" // payload Approval
	EventResolved  = "exec.approval.resolved"  // payload Approval (Decision, ResolvedBy set)
	EventExpired   = "exec.approval.expired"   // payload Approval
	EventWithdrawn = "exec.approval.withdrawn" // payload Approval: its requester went away
	EventStarted   = "exec.started"            // payload ExecReport
	EventFinished  = "exec.finished"           // payload ExecReport
	EventDenied    = "exec.denied"             // payload ExecReport
	EventSession   = "session.changed"         // payload SessionOverride
)

// Decision values, as on the wire.
const (
	AllowOnce   = "allow-once"
	AllowAlways = "allow-always"
	Deny        = "deny"
)

// Error codes in ErrorBody.Code.
const (
	ErrCodeBadRequest = "BAD_REQUEST"  // malformed line, unknown method, invalid params
	ErrCodeTooLarge   = "TOO_LARGE"    // line over MaxLine (the connection is closed after); with an id: the answer would be over it
	ErrCodeAuth       = "UNAUTHORIZED" // hello missing or failed, bad HMAC, replay, stale time
	ErrCodeForbidden  = "FORBIDDEN"    // the role may not call this method
	ErrCodeNotFound   = "NOT_FOUND"    // unknown, expired or already resolved approval id
	ErrCodeConflict   = "CONFLICT"     // explicit id already pending; stale config hash
	ErrCodeRateLimit  = "RATE_LIMITED" // too many frames on this connection
	ErrCodeBusy       = "BUSY"         // connection refused: the uid's share of connections (or the hub's) is used up; closed
	ErrCodeQuota      = "QUOTA"        // approval refused: the uid's share of pending approvals (or the hub's) is used up
	ErrCodeIdle       = "IDLE"         // nothing sent for the idle timeout and nothing outstanding; closed
	ErrCodeVersion    = "VERSION"      // unsupported protocol version
	ErrCodeInternal   = "INTERNAL"
)

// Frame is one line on the wire. A client sends {id, method, params}; the
// hub answers {id, ok, result | error} and pushes {event, payload} to
// subscribers. IDs are chosen by the client and only echoed.
type Frame struct {
	ID      string          `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	OK      *bool           `json:"ok,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *ErrorBody      `json:"error,omitempty"`
	Event   string          `json:"event,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	// Seq and MAC seal the frame (see docs/protocol.md): the hub's frames
	// from the hello's answer on, and a checking client's after its hello.
	// They are always the frame's last two members.
	Seq uint64 `json:"seq,omitempty"`
	MAC string `json:"mac,omitempty"`
}

// ErrorBody is a failed response's error. It implements error so that
// Client methods return it as is: errors.As finds the code.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *ErrorBody) Error() string { return "hub: " + e.Code + ": " + e.Message }

// HelloParams is the first frame of every connection. MAC is
// hex(HMAC-SHA256(token, Nonce + ":" + strconv.FormatInt(TimestampMs, 10) +
// ":" + payload)) where payload is "execgate-hub/2 " + Role. Nonce is also
// the client's challenge to the hub (see HelloResult.HubNonce). Nonce is at
// least 16 random bytes, hex; the hub remembers nonces for the ±10 s window
// and refuses a timestamp outside it.
type HelloParams struct {
	Version     int    `json:"version"`
	Role        Role   `json:"role"`
	Nonce       string `json:"nonce"`
	TimestampMs int64  `json:"timestampMs"`
	MAC         string `json:"mac"`
	// Name labels the client in resolvedBy and logs ("approve@tty3",
	// "shim"); free text, shown escaped.
	Name string `json:"name,omitempty"`
	// Kind says which surface an approver answers from (KindTUI, KindWeb,
	// KindCLI); optional, recorded in ApproverInfo.
	Kind string `json:"kind,omitempty"`
	// Host is where the person is, when it is not the hub's machine (the
	// web approver names the browser's address); optional, free text.
	Host string `json:"host,omitempty"`
}

// ApproverInfo says who answered an approval. Uid and User come from the
// connection's peer credentials, never from the client; Kind and Host
// from its hello (Host defaults to the hub's host name).
type ApproverInfo struct {
	Uid  int    `json:"uid"`
	User string `json:"user,omitempty"`
	Kind string `json:"kind,omitempty"`
	Host string `json:"host,omitempty"`
	Name string `json:"name,omitempty"`
}

// HelloResult answers a successful hello.
type HelloResult struct {
	Version int  `json:"version"`
	Role    Role `json:"role"`
	// Approvers is how many approver connections are subscribed now
	// (watchers are not counted).
	Approvers int `json:"approvers"`
	// HubNonce is the hub's half of the connection key: with the token,
	// the role and the hello's nonce it keys the seal on this answer and
	// every frame after it, which is how the hub proves it knows the
	// token. Empty when the hub has no token to seal with.
	HubNonce string `json:"hubNonce,omitempty"`
}

// ApprovalRequest asks for one command. It is also the body of an Approval.
type ApprovalRequest struct {
	// ID is optional; the hub assigns one when empty. An ID already
	// pending is a CONFLICT.
	ID         string   `json:"id,omitempty"`
	Command    string   `json:"command"`
	Via        string   `json:"via,omitempty"` // "Claude Code" when the command came in an agent's envelope
	Cwd        string   `json:"cwd"`
	AgentID    string   `json:"agentId"`
	SessionKey string   `json:"sessionKey,omitempty"`
	Risk       string   `json:"risk"` // safe, needs-review, dangerous
	Reasons    []string `json:"reasons"`
	Segments   []string `json:"segments,omitempty"`
	// Proposals describe, per segment the approver is being asked about,
	// its reasons and the allowlist pattern(s) "allow always" would save
	// (the first is the one saved today). Optional: older requesters send
	// none, and approvers then cannot show what "always" grants.
	Proposals []SegmentProposal `json:"proposals,omitempty"`
	// TimeoutMs is how long the request stays pending; the hub clamps it
	// to [1 s, 1 h].
	TimeoutMs int `json:"timeoutMs"`
}

// SegmentProposal is one segment of a request as approvers see it.
type SegmentProposal struct {
	// Text is the segment as written.
	Text string `json:"text"`
	// Reasons are this segment's reasons for asking.
	Reasons []string `json:"reasons,omitempty"`
	// Patterns are the allowlist patterns proposed for "allow always",
	// narrowest first; empty when no pattern can describe the segment
	// (it will be asked again).
	Patterns []string `json:"patterns,omitempty"`
}

// MaxDenyMessage bounds ResolveParams.Message in bytes.
const MaxDenyMessage = 500

// Approval is one pending or settled request as the hub holds it.
type Approval struct {
	ApprovalRequest
	CreatedAtMs int64 `json:"createdAtMs"`
	ExpiresAtMs int64 `json:"expiresAtMs"`
	// Decision is empty while pending and after expiry or withdrawal.
	Decision   string `json:"decision,omitempty"`
	ResolvedBy string `json:"resolvedBy,omitempty"`
	// Message is the approver's note with a deny, for the agent.
	Message string `json:"message,omitempty"`
	// Patterns are the scopes chosen with allow-always, one per proposal
	// ("" saves nothing for that segment); empty when none was chosen.
	Patterns []string `json:"patterns,omitempty"`
	// Approver is who decided, once decided.
	Approver *ApproverInfo `json:"approver,omitempty"`
	// RequesterPid and RequesterUid come from the peer credentials.
	RequesterPid int `json:"requesterPid"`
	RequesterUid int `json:"requesterUid"`
	// Truncated says the hub shortened the texts of this copy to fit a
	// line (only in an event about a settled approval: a pending one
	// always arrives whole); each shortened text ends in a marker.
	Truncated bool `json:"truncated,omitempty"`
}

// Outcome says why an ApprovalAnswer has no decision.
const (
	OutcomeDecided    = "decided"
	OutcomeExpired    = "expired"     // nobody answered in time: apply askFallback
	OutcomeNoApprover = "no-approver" // answered at once: ask the next channel
	OutcomeWithdrawn  = "withdrawn"   // the requester withdrew it (MethodWithdraw)
)

// ApprovalAnswer is the response to MethodRequest.
type ApprovalAnswer struct {
	ID          string  `json:"id"`
	Decision    *string `json:"decision"` // null unless Outcome is decided
	Outcome     string  `json:"outcome"`
	CreatedAtMs int64   `json:"createdAtMs"`
	ExpiresAtMs int64   `json:"expiresAtMs"`
	ResolvedBy  string  `json:"resolvedBy,omitempty"`
	// Message is the approver's note with a deny (ResolveParams.Message).
	Message string `json:"message,omitempty"`
	// Patterns are the allow-always scopes the approver chose (see
	// Approval.Patterns); the requester saves exactly these.
	Patterns []string `json:"patterns,omitempty"`
	// Approver is who decided.
	Approver *ApproverInfo `json:"approver,omitempty"`
}

// ResolveParams answers one approval. ID may be a unique prefix of at
// least 4 characters.
type ResolveParams struct {
	ID       string `json:"id"`
	Decision string `json:"decision"`
	// Message is an optional note to the agent, only with a deny (at most
	// MaxDenyMessage bytes); the requester shows it in its refusal line.
	Message string `json:"message,omitempty"`
	// Patterns chooses, with allow-always, the scope to save for each of
	// the request's proposals, in order: one of that proposal's Patterns,
	// or "" to save nothing for it. The hub refuses any pattern that was
	// not proposed, so an approver can never grant more than the engine
	// offered. Omitted: the requester saves each proposal's first
	// (narrowest) pattern.
	Patterns []string `json:"patterns,omitempty"`
}

// IDParams names one approval (a unique prefix of at least 4 characters).
type IDParams struct {
	ID string `json:"id"`
}

// ListParams asks for one page of MethodList or MethodSessionList.
type ListParams struct {
	// Cursor is the previous page's Next; "" for the first page.
	Cursor string `json:"cursor,omitempty"`
}

// ListResult is the response to MethodList: one page of the pending
// approvals, oldest first. Next, when set, is the Cursor of the next page:
// an answer never exceeds the line limit, so a long list comes in pages.
type ListResult struct {
	Approvals []Approval `json:"approvals"`
	Next      string     `json:"next,omitempty"`
}

// ConfigSnapshot is the configuration file with socket.token redacted, and
// the hash of the file as stored (the base for MethodConfigSet).
type ConfigSnapshot struct {
	Path string          `json:"path"`
	Hash string          `json:"hash"`
	File json.RawMessage `json:"file"`
}

// ConfigSetParams replaces the configuration file. BaseHash must be the
// hash of the file now stored (else CONFLICT); socket path and token are
// kept whatever File says.
type ConfigSetParams struct {
	File     json.RawMessage `json:"file"`
	BaseHash string          `json:"baseHash"`
}

// ExecReport is a shim's note that a command started, finished or was
// denied. It never blocks the command: the shim does not wait for a reply.
type ExecReport struct {
	Event      string   `json:"event"` // EventStarted, EventFinished, EventDenied
	ID         string   `json:"id"`    // the shim's run id (the audit log's)
	ApprovalID string   `json:"approvalId,omitempty"`
	Command    string   `json:"command"`
	Cwd        string   `json:"cwd"`
	AgentID    string   `json:"agentId"`
	Risk       string   `json:"risk,omitempty"`
	Reasons    []string `json:"reasons,omitempty"`
	DecidedBy  string   `json:"decidedBy,omitempty"`
	// Approver is the person who decided, when one did (the terminal
	// prompt's included); Scope is "once" or "always" for their allow,
	// and Allowlisted what "always" saved.
	Approver    *ApproverInfo `json:"approver,omitempty"`
	Scope       string        `json:"scope,omitempty"`
	Allowlisted []string      `json:"allowlisted,omitempty"`
	ExitStatus  *int          `json:"exitStatus,omitempty"`
	DurationMs  *int64        `json:"durationMs,omitempty"`
	Pid         int           `json:"pid"`
	TimeMs      int64         `json:"timeMs"`
	// Truncated says the hub shortened the texts to fit a line.
	Truncated bool `json:"truncated,omitempty"`
}

// AgentParams names an agent.
type AgentParams struct {
	AgentID string `json:"agentId"`
}

// SessionOverride is a temporary policy for one agent held by the hub
// (not written to the configuration). Empty fields leave the configured
// value. Set only by approvers, so it may loosen the policy; what an agent
// sets in its own environment can only tighten it (the shim applies that).
type SessionOverride struct {
	AgentID     string `json:"agentId"`
	Security    string `json:"security,omitempty"`
	Ask         string `json:"ask,omitempty"`
	AskFallback string `json:"askFallback,omitempty"`
	// Elevated: security=full, ask=off until ExpiresAtMs.
	Elevated bool `json:"elevated,omitempty"`
	// ExpiresAtMs of zero never expires (until the hub stops or clear).
	ExpiresAtMs int64  `json:"expiresAtMs,omitempty"`
	SetBy       string `json:"setBy,omitempty"`
}

// SessionListResult lists the live overrides, one page of them (see
// ListResult).
type SessionListResult struct {
	Sessions []SessionOverride `json:"sessions"`
	Next     string            `json:"next,omitempty"`
}

// Status describes a running hub.
type Status struct {
	Pid         int    `json:"pid"`
	Socket      string `json:"socket"`
	StartedAtMs int64  `json:"startedAtMs"`
	Pending     int    `json:"pending"`
	Approvers   int    `json:"approvers"`
	Watchers    int    `json:"watchers"`
	Connections int    `json:"connections"`
}

// Event is a pushed frame decoded by Client.Subscribe.
type Event struct {
	Name    string
	Payload json.RawMessage
}
