// Package gitconfig finds what a git command would run besides git: the
// programs its effective configuration names (core.fsmonitor, pagers,
// textconv and filter drivers, aliases, credential helpers …), the hooks
// the subcommand runs and the attributes that route files through a
// driver.
//
// It reads what git reads, from the real disk at decision time: the
// system, global, local and worktree configuration files, their includes,
// the GIT_CONFIG_* variables and -c options, wherever discovery finds the
// repository (upward from the starting directory, through a .git file,
// commondir, GIT_DIR, GIT_COMMON_DIR), submodules' configuration, the
// hooks directory and the attribute files.
//
// It proves absence, never presence: anything it cannot read or parse the
// way git does (a syntax error, an unreadable file, an include it cannot
// follow, a cycle, nesting deeper than git allows, an index it cannot
// read) is an error, which the caller must treat as "cannot prove" — git
// might run something. Where git's rules are too intricate to follow
// exactly (includeIf conditions, last-one-wins values, discovery across
// file systems), it reads more than git would: a finding git would not
// act on is a false alarm, never a miss.
//
// The key table (keys.go) cites git's documentation for every entry; the
// execution tests in this package's tests build real repositories where
// each key runs a canary with the real git, so a key git stopped honouring
// or a new subcommand that runs one is noticed.
package gitconfig
