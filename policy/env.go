package policy

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The environment is an allowlist. A variable that reaches the
// environment of the programs a command runs is harmless only when its name
// is on harmlessEnv: what every other variable changes is not known, and
// "read-only" programs load configuration, plugins and hooks named by the
// environment (HOME=. git status reads ./.gitconfig, whose core.pager runs
// code). The names in rules.json's assignments stay dangerous.

// harmlessEnv are variables that only change how programs format, log or
// time their work, or who commits are recorded as by — never what code they
// load, where they read configuration or where they connect.
var harmlessEnv = nameSet{
	"CARGO_TERM_COLOR",
	"CGO_ENABLED",
	"CI",
	"CLICOLOR",
	"CLICOLOR_FORCE",
	"COLORTERM",
	"COLUMNS",
	"DEBIAN_FRONTEND",
	"DEBUG",
	"FORCE_COLOR",
	"GIT_AUTHOR_DATE",
	"GIT_AUTHOR_EMAIL",
	"GIT_AUTHOR_NAME",
	"GIT_COMMITTER_DATE",
	"GIT_COMMITTER_EMAIL",
	"GIT_COMMITTER_NAME",
	"GIT_TERMINAL_PROMPT",
	"GOARCH",
	"GOGC",
	"GOMAXPROCS",
	"GOMEMLIMIT",
	"GOOS",
	"GOTRACEBACK",
	"HUSKY",
	"LANG",
	"LANGUAGE",
	"LINES",
	"LOG_LEVEL",
	"NODE_ENV",
	"NODE_NO_WARNINGS",
	"NO_COLOR",
	"OMP_NUM_THREADS",
	"PYTHONDONTWRITEBYTECODE",
	"PYTHONHASHSEED",
	"PYTHONIOENCODING",
	"PYTHONUNBUFFERED",
	"QUIET",
	"RUST_BACKTRACE",
	"RUST_LOG",
	"SOURCE_DATE_EPOCH",
	"TERM",
	"TZ",
	"VERBOSE",
}

// harmlessEnvPrefixes are families of harmless variables (the locale).
var harmlessEnvPrefixes = []string{"LC_"}

// isEnvName reports whether a lone assignment to name may change the
// environment: environment variables are upper case by convention, and
// the lower-case ones programs read (proxies) are listed.
func isEnvName(name string) bool {
	switch name {
	case "http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy":
		return true
	}
	return strings.ToUpper(name) == name
}

// harmlessVar reports whether name is on the environment allowlist.
func harmlessVar(name string) bool {
	if harmlessEnv.has(name) {
		return true
	}
	for _, p := range harmlessEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// envVar classifies a variable that reaches the environment of the programs
// the command runs, given the word assigned (nil when none or unknown).
func (a *analyzer) envVar(seg *Segment, name string, value *syntax.Word) {
	switch {
	case harmlessVar(name):
	case a.dangerousVar(name):
		// assignment and checkVar, called for every assignment, have
		// the reason (PATH=tool-dir:$PATH is needs-review there).
	default:
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("sets %s in the environment, and execgate does not know what it changes", name), Rule: "unknown-variable"})
	}
}

// exported classifies a declaration's operand when it reaches the
// environment (export, declare -x).
func (a *analyzer) exported(seg *Segment, name, variant, flags string) {
	if variant == "export" || strings.Contains(flags, "x") {
		a.envVar(seg, a.nameref(name), nil)
	}
}

// dangerousVar reports whether name is one of the variables that change
// what programs load or run.
func (a *analyzer) dangerousVar(name string) bool {
	if a.r.dangerVars.has(name) {
		return true
	}
	for _, p := range a.r.Assignments.Prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// conventionalPath matches the directories people put first on PATH all
// day: the workspace's own tool directories and the per-user install
// directories of language toolchains.
var conventionalPath = &lazyRegexp{expr: `^(` +
	`(\$HOME|\$\{HOME\}|~)/(\.cargo/bin|\.local/bin|go/bin|\.go/bin|bin|\.npm-global/bin|\.bun/bin|\.deno/bin|\.yarn/bin|\.volta/bin|\.poetry/bin|\.pyenv/(bin|shims)|\.rbenv/(bin|shims)|\.dotnet/tools|\.foundry/bin|\.nimble/bin)` +
	`|(\$PWD|\$\{PWD\}|\.)(/[A-Za-z0-9._/-]*)?` +
	`|node_modules/\.bin|\.venv/bin|venv/bin|bin` +
	`|\$\(go env GOPATH\)/bin|\$\(go env GOBIN\)|\$\(npm (bin|prefix)( -g)?\)(/bin)?|\$\(pwd\)(/[A-Za-z0-9._/-]*)?` +
	`|/usr/local/(go/)?bin|/opt/homebrew/bin|/usr/local/cargo/bin` +
	`)$`}

// conventionalPrepend reports whether value is DIR:$PATH with DIR a
// conventional tool directory, and returns DIR.
func (a *analyzer) conventionalPrepend(value *syntax.Word) (string, bool) {
	var sb strings.Builder
	if err := syntax.NewPrinter().Print(&sb, value); err != nil {
		return "", false
	}
	text := strings.Trim(sb.String(), `"`)
	for _, tail := range []string{":$PATH", ":${PATH}"} {
		if dir, ok := strings.CutSuffix(text, tail); ok && !strings.ContainsAny(dir, `:'"`) {
			if conventionalPath.get().MatchString(dir) {
				return dir, true
			}
		}
	}
	return "", false
}

// homeChanged follows HOME=…: ~ means the new value from here on, or an
// unknown directory when the value is not known.
func (a *analyzer) homeChanged(value *syntax.Word) {
	home := ""
	if value != nil {
		if ev := evalWord(value); ev.known && ev.text != "" {
			home = a.resolve(ev.text)
		}
	}
	a.tildeHome = &home
}
