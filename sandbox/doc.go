// Package sandbox confines the commands execgate lets through with the
// kernel's own means, so that what the analysis decided a command needs is
// what it can do, even when the analysis was wrong.
//
// On Linux a confinement is three things applied to one OS thread just
// before it forks or execs the command, and inherited by every process
// started from there (children, daemons, setsid'd jobs alike):
//
//   - Landlock (file system): the system's files read-only, the workspace,
//     a private temporary directory and the build caches writable, the rest
//     of the home directory, other users' files and /tmp not at all;
//     Landlock's TCP rules (no bind, no connect) and its scopes (no signals
//     to processes outside the sandbox, no abstract Unix sockets outside).
//   - seccomp-bpf (what Landlock of this ABI cannot say): no UDP, raw,
//     packet or pathname Unix sockets created with socket(2), no io_uring,
//     which would create sockets behind seccomp's back.
//   - no_new_privs, which both need and which keeps set-uid programs from
//     gaining rights.
//
// The ruleset and the filter are built in the calling process
// ([Prepare]); [Prepared.OnThread] applies them to a fresh OS thread and
// runs the fork or exec there. The thread is never given back to the Go
// runtime: it dies with its goroutine, so the rest of the process (the
// audit log, the hub) keeps its own rights. No second program is
// executed to confine the command.
//
// Where the kernel lacks what this needs, [Probe] says why, and callers
// must not run anything as "confined".
package sandbox
