package policy

import (
	"os"
	"os/exec"
	"path/filepath"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// MaxInput is the longest command, in bytes, that the analysis reads; a
// longer one needs review unread.
const MaxInput = maxInput

// LookPath resolves a bare program name on PATH to an absolute path; it
// returns "" when the program is not found.
func LookPath(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// OwnFiles lists execgate's own files, writing which is dangerous: the
// configuration at configPath, the managed policy and the running binary.
func OwnFiles(configPath string) []string {
	own := []string{configPath, config.ManagedPath()}
	if self, err := os.Executable(); err == nil {
		own = append(own, self)
	}
	return own
}

// NewRequest builds the evaluation context for agent under cfg: its
// resolved policy and its allowlist and denylist matchers. protected lists
// execgate's own files (config, socket, binary); the managed policy's
// protected paths are added to them.
func NewRequest(cfg *config.Config, agent, cwd, home string, protected []string) Request {
	eff := cfg.Resolve(agent)
	return Request{
		ManagedProtected: cfg.ProtectedPaths(home),
		Getenv:           os.Getenv,
		Cwd:              cwd,
		Home:             home,
		Agent:            agent,
		Policy:           eff.Policy,
		Allow:            pattern.NewMatcher(eff.Allowlist, LookPath),
		Deny:             pattern.NewMatcher(eff.Denylist, LookPath),
		Protected:        protected,
	}
}
