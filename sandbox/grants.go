package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// Grants are what a confined command may do beyond reading the system's
// files. The zero value lets it read the system and nothing else: no
// writes, no network, no signals or sockets reaching outside.
type Grants struct {
	// Workspace is the project directory: readable, and writable when
	// WriteWorkspace is set. "" for none.
	Workspace      string `json:"workspace,omitempty"`
	WriteWorkspace bool   `json:"writeWorkspace,omitempty"`
	// TempDir is the command's private temporary directory (TMPDIR is set
	// to it): readable and writable. "" for none.
	TempDir string `json:"tempDir,omitempty"`
	// RunCode lets the command execute files from the workspace, the
	// temporary directory and the writable caches (built test binaries,
	// scripts, node_modules/.bin); without it only the system's and the
	// toolchains' programs can be executed.
	RunCode bool `json:"runCode,omitempty"`
	// Read lists further files and directories it may read (and execute
	// from, for toolchains): caches, toolchains, path arguments outside the
	// workspace.
	Read []string `json:"read,omitempty"`
	// Write lists further files and directories it may write: scratch
	// files, and paths outside the workspace a person granted.
	Write []string `json:"write,omitempty"`
	// Caches lists the build caches it may write (Go's, npm's, pip's…).
	Caches []string `json:"caches,omitempty"`
	// Env sets variables for the command ("NAME=value"): where a cache
	// is the sandbox's own rather than the one unconfined programs use.
	Env []string `json:"env,omitempty"`
	// Network lets it open any TCP and UDP socket. The kernel cannot tell
	// hosts apart here: a grant of some hosts is a grant of the network.
	Network bool `json:"network,omitempty"`
	// Loopback runs it in a private network namespace whose only
	// interface, lo, is up: it may listen on and connect to loopback (TCP
	// and UDP), which reaches nothing outside, and nothing else. Without
	// Network only; where no namespace can be made it runs with no network
	// at all, as without Loopback (see PrepareWith).
	Loopback bool `json:"loopback,omitempty"`
	// Proxy, with Loopback, is the address (127.0.0.1:PORT) of a TCP
	// listener made inside the private network and handed to
	// Options.OnProxy: the shim's proxy to the agent's allowed hosts,
	// served from outside.
	Proxy string `json:"proxy,omitempty"`
	// Withheld names variables taken out of its environment: the
	// secrets (a registry's token, GITHUB_TOKEN, …) that code reaching
	// the allowed hosts could publish with or upload (see
	// shim.grantsFor).
	Withheld []string `json:"withheld,omitempty"`
	// UnixSockets lets it create Unix sockets by path (socket(2) with
	// AF_UNIX), which reach any socket file it can name: the hub's,
	// docker.sock, an SSH agent's.
	UnixSockets bool `json:"unixSockets,omitempty"`
}

// Summary says in a few words what the grants allow, for the audit log,
// the approvers and the one line a boundary hit prints.
func (g Grants) Summary() string {
	var parts []string
	switch {
	case g.Workspace != "" && g.WriteWorkspace:
		parts = append(parts, "writes the workspace")
	case g.Workspace != "":
		parts = append(parts, "reads the workspace")
	}
	if g.TempDir != "" {
		parts = append(parts, "a private TMPDIR")
	}
	if g.RunCode {
		parts = append(parts, "runs its code")
	}
	if len(g.Caches) > 0 {
		parts = append(parts, "the build caches")
	}
	if len(g.Write) > 0 {
		parts = append(parts, "writes "+strings.Join(shortPaths(g.Write), ", "))
	}
	switch {
	case g.Network:
		parts = append(parts, "network")
	case g.Loopback && g.Proxy != "":
		parts = append(parts, "a private loopback network; the allowed hosts through a proxy")
	case g.Loopback:
		parts = append(parts, "a private loopback network")
	default:
		parts = append(parts, "no network")
	}
	if g.UnixSockets {
		parts = append(parts, "Unix sockets")
	}
	if len(g.Withheld) > 0 {
		parts = append(parts, "without "+strings.Join(g.Withheld, ", ")+" in its environment")
	}
	return strings.Join(parts, "; ")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// shortPaths lists at most three paths, then how many more.
func shortPaths(ps []string) []string {
	if len(ps) <= 3 {
		return ps
	}
	return append(slices.Clip(ps[:3]), "and "+itoa(len(ps)-3)+" more")
}

// Normalize cleans every path, drops duplicates and the ones a broader
// entry already covers, and sorts the lists, so that equal grants compare
// and print alike.
func (g Grants) Normalize() Grants {
	g.Read = normalizePaths(g.Read)
	g.Write = normalizePaths(g.Write)
	g.Caches = normalizePaths(g.Caches)
	return g
}

func normalizePaths(ps []string) []string {
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p == "" || !filepath.IsAbs(p) {
			continue // a relative grant means nothing to the kernel
		}
		out = append(out, filepath.Clean(p))
	}
	slices.Sort(out)
	out = slices.Compact(out)
	// Drop paths under another entry: sorted, a parent comes first.
	kept := out[:0]
	for _, p := range out {
		if n := len(kept); n > 0 && within(p, kept[n-1]) {
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

// within reports whether p is dir or beneath it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// Environ returns env without the variables g withholds, with the
// temporary directory variables set to the private TMPDIR, when g has one (programs put their scratch files there
// instead of in /tmp, which a confined command cannot write), and with g's
// own variables set.
func (g Grants) Environ(env []string) []string {
	if len(g.Withheld) > 0 {
		env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
			name, _, _ := strings.Cut(kv, "=")
			return slices.Contains(g.Withheld, name)
		})
	}
	if g.TempDir != "" {
		env = setEnv(env, g.TempDir, "TMPDIR")
	}
	for _, kv := range g.Env {
		if name, value, ok := strings.Cut(kv, "="); ok && name != "" {
			env = setEnv(env, value, name)
		}
	}
	if g.Proxy != "" && g.Loopback {
		// The proxy is the only way out of the private network; local
		// servers (a test's) are reached directly.
		env = setEnv(env, "http://"+g.Proxy, "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")
		env = setEnv(env, "localhost,127.0.0.1,::1", "NO_PROXY", "no_proxy")
	}
	return env
}

// setEnv sets each name to value in env, in place of an existing entry or
// at the end.
func setEnv(env []string, value string, names ...string) []string {
	out := slices.Clone(env)
	for _, name := range names {
		found := false
		for i, kv := range out {
			if k, _, ok := strings.Cut(kv, "="); ok && k == name {
				if found {
					out = slices.Delete(out, i, i+1)
					continue
				}
				out[i], found = name+"="+value, true
			}
		}
		if !found {
			out = append(out, name+"="+value)
		}
	}
	return out
}
