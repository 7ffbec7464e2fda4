package config

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/execgate/execgate/internal/display"
)

// UnusableError says why a configuration file that exists cannot be used at
// all: it cannot be read (a directory, no permission, too large, a link to
// nothing) or it does not parse (empty, truncated, invalid JSON, a repeated
// key, an unknown version). Such a file means the strictest policy: every
// command is refused until it is fixed. A missing file is not an error (the
// built-in defaults apply), nor are the problems ParseConfig only warns about.
type UnusableError struct {
	Path string
	Err  error
	// Managed marks the managed policy (see LoadManaged), which only an
	// administrator can fix.
	Managed bool
}

func (e *UnusableError) Error() string {
	if e.Managed {
		return "managed policy " + e.Path + ": " + e.Err.Error()
	}
	return "config " + e.Path + ": " + e.Err.Error()
}
func (e *UnusableError) Unwrap() error { return e.Err }

// FixHint is what a refusal tells the user to do.
const FixHint = "fix it or run 'execgate config check'"

// ManagedFixHint is what a refusal under a managed policy that cannot be
// used tells the user: only an administrator can fix it.
const ManagedFixHint = "ask an administrator to fix it ('execgate config check' shows why)"

// Refusal is the one line that refuses a command because of e, with the
// path shortened to ~ under home:
//
//	execgate: config ~/.config/execgate/exec-approvals.json: line 3, column 5: invalid JSON: … — fix it or run 'execgate config check'
func (e *UnusableError) Refusal(home string) string {
	if e.Managed {
		return "execgate: managed policy " + displayPath(e.Path, home) + ": " + display.Flatten(e.Err.Error(), 0) + " — " + ManagedFixHint
	}
	return "execgate: config " + displayPath(e.Path, home) + ": " + display.Flatten(e.Err.Error(), 0) + " — " + FixHint
}

// AsUnusable reports whether err is (or wraps) an *UnusableError.
func AsUnusable(err error) (*UnusableError, bool) {
	var u *UnusableError
	ok := errors.As(err, &u)
	return u, ok
}

// displayPath shows path for a message: ~ for home, quoted when it holds
// characters that would break the line.
func displayPath(path, home string) string {
	if home != "" && filepath.IsAbs(home) {
		home = filepath.Clean(home)
		if rel, ok := strings.CutPrefix(path, home+string(filepath.Separator)); ok && home != string(filepath.Separator) {
			path = "~" + string(filepath.Separator) + rel
		}
	}
	if strings.ContainsFunc(path, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(path)
	}
	return path
}

// denyAllConfig is what an unusable file stands for, should a caller use the
// Config Load returns with its error: every level at its strictest.
func denyAllConfig() *Config {
	cfg := &Config{Version: 1, Defaults: strictestFields()}
	cfg.Agents = map[string]AgentConfig{WildcardAgent: {PolicyFields: strictestFields()}}
	return cfg
}
