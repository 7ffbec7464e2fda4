// Package config reads, validates and atomically writes execgate's
// configuration file (exec-approvals.json): its typed view (Config, the
// per-agent Policy it resolves to, the allowlist and denylist entries, the
// socket, shell, output, audit and envelope sections), the lenient parser that
// warns about and drops what it cannot use, and the Store that edits the
// file under a lock, writing it atomically without losing unknown fields.
//
// It also holds what chooses and adjusts a policy without judging any
// command: which agent is running (DetectAgent) and the session and
// environment overrides (Override). Judging commands is package policy's
// job, and config never imports it.
package config
