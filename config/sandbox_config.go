package config

import (
	"path"
	"slices"
	"strings"
)

// SandboxConfig is an agent's addition to the kernel sandbox's boundary
// ("agents": {"NAME": {"sandbox": {…}}}): paths a confined command may
// also read, or also write, beyond the workspace, its private TMPDIR and
// the known build caches — a toolchain or cache execgate does not know
// (~/.m2, ~/.gradle, /srv/data). Each is absolute or under the home
// (~/…). It only widens what a command that runs confined anyway may
// touch; it never makes a command run confined in place of asking.
type SandboxConfig struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Hosts are the hosts a confined command that runs code may reach
	// through the shim's proxy (sandbox_hosts.go): "name", "*.suffix",
	// an IP address, each optionally with ":port".
	Hosts []string `json:"hosts,omitempty"`
}

// sandboxKeys are SandboxConfig's fields.
var sandboxKeys = []string{"hosts", "read", "write"}

// protectedHomePaths are places under the home no configured grant may
// name or contain: secrets, the shell's and git's start-up files (code
// that runs later, unconfined), and execgate's own configuration and
// state. Sorted.
var protectedHomePaths = []string{
	".aws", ".azure", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc",
	".config/execgate", ".config/gcloud", ".config/gh", ".config/git", ".docker",
	".git-credentials", ".gitconfig", ".gnupg", ".kube", ".local/state/execgate",
	".netrc", ".npmrc", ".profile", ".pypirc", ".ssh", ".zlogin", ".zprofile", ".zshenv", ".zshrc",
}

// parseSandbox reads an agent's "sandbox" object. An entry that is not a
// clean absolute or ~/ path, or that names or contains the whole home, /
// or a protected place, is dropped with a warning: a mistake can only
// narrow what is granted.
func (p *parser) parseSandbox(where string, v any) SandboxConfig {
	var sb SandboxConfig
	if v == nil {
		return sb
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf(where, "want an object, got %s; granting nothing more", describe(v))
		return sb
	}
	sb.Read = p.sandboxPaths(where+".read", m["read"], false)
	sb.Write = p.sandboxPaths(where+".write", m["write"], true)
	sb.Hosts = p.sandboxHosts(where+".hosts", m["hosts"])
	p.unknownFields(where, m, sandboxKeys)
	return sb
}

func (p *parser) sandboxPaths(where string, v any, write bool) []string {
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		p.warnf(where, "want an array of paths, got %s; granting none of it", describe(v))
		return nil
	}
	var out []string
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			p.warnf(where, "[%d]: want a path, got %s; dropped", i, describe(it))
			continue
		}
		why := badSandboxPath(s)
		if why == "" && write && systemPath(s) {
			why = "the system's files are never writable confined"
		}
		if why != "" {
			p.warnf(where, "[%d] %q: %s; dropped", i, s, why)
			continue
		}
		out = append(out, s)
	}
	return out
}

// badSandboxPath says why p cannot be granted, or "".
func badSandboxPath(p string) string {
	home := strings.HasPrefix(p, "~/")
	switch {
	case !home && !strings.HasPrefix(p, "/"):
		return "want an absolute path or one under the home (~/…)"
	case strings.ContainsAny(p, "*?[{$`\\\n"):
		return "patterns and variables are not paths"
	}
	rest := strings.TrimPrefix(p, "/")
	if home {
		rest = p[2:]
	}
	if rest == "" || path.Clean("/"+rest) != "/"+strings.TrimSuffix(rest, "/") || strings.Contains(rest, "//") {
		return "want a clean path (no .., no //, not the home or / itself)"
	}
	if !home {
		switch clean := path.Clean(p); {
		case clean == "/" || clean == "/home" || clean == "/root" || clean == "/Users" || clean == "/tmp" || clean == "/var/tmp":
			return "too broad: it holds every user's or every program's files"
		}
		return ""
	}
	rel := path.Clean(rest)
	for _, q := range protectedHomePaths {
		if rel == q || strings.HasPrefix(rel, q+"/") || strings.HasPrefix(q, rel+"/") {
			return "it names or holds ~/" + q + ", which stays out of the sandbox"
		}
	}
	return ""
}

// systemPath reports whether p is one of the system's directories or
// beneath one.
func systemPath(p string) bool {
	clean := path.Clean(p)
	for _, d := range []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/sbin", "/sys", "/usr"} {
		if clean == d || strings.HasPrefix(clean, d+"/") {
			return true
		}
	}
	return false
}

// homeProtected reports whether the absolute p is the home, holds it, or
// names or holds one of its protected places.
func homeProtected(p, home string) bool {
	if !strings.HasPrefix(home, "/") {
		return false
	}
	home = path.Clean(home)
	if p == home || p == "/" || strings.HasPrefix(home, p+"/") {
		return true
	}
	rel, ok := strings.CutPrefix(p, home+"/")
	if !ok {
		return false
	}
	return badSandboxPath("~/"+rel) != ""
}

// SandboxFor returns what agent's confined commands may also read and
// write: agent "*"'s entries, then the agent's own, with ~ made home.
func (c *Config) SandboxFor(agent, home string) SandboxConfig {
	var sb SandboxConfig
	levels := []string{WildcardAgent}
	if agent != WildcardAgent {
		levels = append(levels, agent)
	}
	expand := func(p string) (string, bool) {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if !strings.HasPrefix(home, "/") || path.Clean(home) == "/" {
				return "", false
			}
			p = path.Join(home, rest)
		}
		p = path.Clean(p)
		// An absolute path may name the home's secrets too.
		return p, !homeProtected(p, home)
	}
	for _, name := range levels {
		a, ok := c.Agents[name]
		if !ok {
			continue
		}
		for _, p := range a.Sandbox.Read {
			if x, ok := expand(p); ok {
				sb.Read = append(sb.Read, x)
			}
		}
		for _, p := range a.Sandbox.Write {
			if x, ok := expand(p); ok {
				sb.Write = append(sb.Write, x)
			}
		}
	}
	for _, name := range levels {
		if a, ok := c.Agents[name]; ok {
			for _, h := range a.Sandbox.Hosts {
				if badSandboxHost(h) == "" {
					sb.Hosts = append(sb.Hosts, strings.ToLower(h))
				}
			}
		}
	}
	slices.Sort(sb.Read)
	slices.Sort(sb.Write)
	slices.Sort(sb.Hosts)
	sb.Read, sb.Write, sb.Hosts = slices.Compact(sb.Read), slices.Compact(sb.Write), slices.Compact(sb.Hosts)
	return sb
}

func (p *parser) sandboxHosts(where string, v any) []string {
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		p.warnf(where, "want an array of hosts, got %s; allowing none of them", describe(v))
		return nil
	}
	var out []string
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			p.warnf(where, "[%d]: want a host, got %s; dropped", i, describe(it))
			continue
		}
		if why := badSandboxHost(s); why != "" {
			p.warnf(where, "[%d] %q: %s; dropped", i, s, why)
			continue
		}
		out = append(out, s)
	}
	return out
}
