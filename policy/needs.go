package policy

import (
	"path"
	"slices"
	"strings"

	"github.com/execgate/execgate/config"
)

// Needs are what a command needs to run, in the terms a kernel sandbox
// grants: derived from the effects the analysis found, failing closed. A
// command whose needs stay inside the boundary (the workspace, a private
// temporary directory, the build caches, no network, no credentials) can
// run confined without asking; anything else is Beyond, and a person
// decides.
type Needs struct {
	// WriteWorkspace: it may create, change or delete files in the
	// workspace.
	WriteWorkspace bool `json:"writeWorkspace,omitempty"`
	// RunCode: it runs code the analysis did not read whole (the
	// workspace's scripts and tests, a program's own plug-ins).
	RunCode bool `json:"runCode,omitempty"`
	// Read lists paths outside the workspace its words name, which a
	// read-only model proved harmless to read.
	Read []string `json:"read,omitempty"`
	// Write lists paths outside the workspace it writes: scratch files in
	// a temporary directory.
	Write []string `json:"write,omitempty"`
	// Network: it talks to other hosts.
	Network bool `json:"network,omitempty"`
	// Credentials: it reads or sends secrets.
	Credentials bool `json:"credentials,omitempty"`
	// Host: it needs a service or state of the host outside the
	// boundary (a daemon's Unix socket, the system journal): confined,
	// it could only fail.
	Host bool `json:"host,omitempty"`
	// Repository: it runs git, which writes the repository's own files
	// even when it only reads (git status refreshes the index).
	Repository bool `json:"repository,omitempty"`
	// Beyond lists why the command needs more than the boundary, one
	// reason each (the analysis' own words); empty when it fits.
	Beyond []string `json:"beyond,omitempty"`
	// Destroys lists the work it would destroy that nothing could bring
	// back (WorkLoss), one reason each; each is in Beyond too.
	Destroys []string `json:"destroys,omitempty"`
	// Undoable lists the scratch files it deletes or replaces, which the
	// checkpoint taken before it must keep (WorkLossOf), one reason each:
	// not in Beyond, but a command may run so only once that checkpoint
	// holds them.
	Undoable []string `json:"undoable,omitempty"`
	// Downloads lists its downloads from a public registry that could
	// run confined, reaching the registry through the shim's proxy
	// (confinedFetches); each reason is in Beyond too, until WithHosts
	// finds the agent allows the registry's hosts.
	Downloads []Download `json:"downloads,omitempty"`
	// Proxied: its downloads reach the agent's allowed hosts through the
	// shim's proxy, and nothing else outside (WithHosts).
	Proxied bool `json:"proxied,omitempty"`
}

// Download is one download a command makes from a public registry.
type Download struct {
	// Reason is its reason in Needs.Beyond.
	Reason string `json:"reason"`
	// Hosts are the registry's hosts it must reach.
	Hosts []string `json:"hosts"`
}

// WithHosts returns n for an agent whose confined commands may reach
// hosts through the shim's proxy (agents.NAME.sandbox.hosts): a command
// whose only needs beyond the boundary are downloads from registries
// whose every host is allowed fits it, as code that runs (what it
// installs may run: setup.py, an install script) with the proxy as its
// only way out. The proxy, not this, holds it to those hosts. Anything
// else beyond — another host, an upload, credentials, the host's
// services, work it destroys — leaves n as it is, and so does a
// registry's token in the environment getenv reads
// (RegistryCredentials): what it installs could publish with it.
func (n Needs) WithHosts(hosts []string, getenv func(string) string) Needs {
	if len(n.Downloads) == 0 || len(hosts) == 0 || n.Credentials || n.Host || len(n.Destroys) > 0 {
		return n
	}
	if len(RegistryCredentials(getenv)) > 0 {
		return n
	}
	rest := slices.Clone(n.Beyond)
	for _, d := range n.Downloads {
		for _, h := range d.Hosts {
			if !config.HostAllowed(hosts, h, 443) {
				return n
			}
		}
		i := slices.Index(rest, d.Reason)
		if i < 0 {
			return n
		}
		rest = slices.Delete(rest, i, i+1)
	}
	if len(rest) > 0 {
		return n
	}
	n.Beyond, n.Network, n.Proxied = nil, false, true
	n.RunCode, n.WriteWorkspace = true, true
	return n
}

// Within reports whether the needs fit inside the sandbox's boundary.
func (n Needs) Within() bool { return len(n.Beyond) == 0 }

// needKind is what one reason means for the sandbox.
type needKind int

const (
	needBeyond     needKind = iota // more than the boundary: a person decides
	needNothing                    // nothing the sandbox grants
	needRun                        // runs code that is not read whole, and may write the workspace
	needWrite                      // writes files it names (inside the workspace, or scratch)
	needNetwork                    // talks to other hosts
	needCredential                 // reads or sends secrets
)

// ruleNeeds says what the analyzer's own rules need; a rule not listed
// falls back to its effect (effectNeed). Sorted by rule id.
var ruleNeeds = table[needKind]{
	{"alias", needRun},                    // the alias runs inside the sandbox too
	{"builtin-callback", needRun},         // trap, PROMPT_COMMAND … run confined with the rest
	{"dynamic-arguments", needRun},        // whatever the words turn out to be, they run confined
	{"dynamic-command", needRun},          // likewise: $(which python) x.py
	{"dynamic-name", needRun},             // a command name built at run time
	{"dynamic-options", needRun},          // options only known at run time
	{"dynamic-payload", needRun},          // python3 - <<EOF with $VARS, bash -c "$CMD": code only known at run time, run confined
	{"dynamic-redirect", needWrite},       // > "$out": the kernel holds it to the workspace; what it may replace, WorkLoss weighs
	{"function-shadows-command", needRun}, // the function runs confined
	{"git-network", needNetwork},          // git fetch/pull/push/clone: confined, it could only fail on the network
	{"git-signs", needCredential},         // commit.gpgSign: the key and its agent are outside
	{"go-flags", needRun},                 // GOFLAGS=-count=1 go test: the build it changes runs confined
	{"inline-code", needRun},              // python3 -c '…'
	{"local-program", needRun},            // ./run.sh
	{"make-variable", needRun},            // make CFLAGS=…: more commands in recipes make already runs confined
	{"missing-payload", needRun},          // a wrapper without its command
	{"module-path", needRun},              // PYTHONPATH=src pytest: the workspace's modules, run confined
	{"nameref", needNothing},              // a shell variable of this run
	{"not-read-only", needRun},            // a program nobody modelled: confined, whatever it does
	{"output-command", needRun},           // the output of a command run as code, confined
	{"path-prepend", needRun},             // PATH=$PWD/bin:… runs the workspace's programs
	{"pipe-to-shell", needRun},            // cat x.sh | sh
	{"process-file", needRun},             // awk -f prog.awk
	{"pytest-module-code", needRun},       // pytest --pyargs pkg, --pdbcls=mod:Cls: an installed module, imported confined
	{"python-module-code", needRun},       // python -m doctest x.py, timeit '…': the code runs confined
	{"python-module-pip", needRun},        // python -m pip, as pip itself: what it installs lands where the kernel lets it, and runs confined
	{"recursive-function", needRun},       // bounded by the sandbox, not by the analysis
	{"repo-config-program", needRun},      // git runs a program the repository names: confined
	{"repo-config-unproven", needRun},     // likewise
	{"script-file", needRun},              // python3 repro.py
	{"sed-exec", needRun},                 // sed's e command
	{"set-option", needNothing},           // set -e, shopt: this shell only
	{"source-file", needRun},              // . ./env.sh, confined
	{"subscript-substitution", needRun},   // a value computed at run time
	{"unknown-variable", needRun},         // FOO=1 make: the environment of a confined command
	{"writes-file", needWrite},            // inside the workspace, or scratch
}

// hostServices are programs whose work is done by something of the host
// outside the boundary: a daemon reached over a Unix socket (the sandbox
// refuses socket(AF_UNIX)), or the system's own state they read or
// update. Confined, they could only fail, so they need more than the
// boundary. Sorted; the value says what they need, completing "needs …".
var hostServices = table[string]{
	{"busctl", "D-Bus's socket"},                     // https://www.freedesktop.org/software/systemd/man/latest/busctl.html
	{"crictl", "the container runtime's socket"},     // https://github.com/kubernetes-sigs/cri-tools: /run/containerd/containerd.sock
	{"ctr", "containerd's socket"},                   // https://github.com/containerd/containerd: /run/containerd/containerd.sock
	{"docker", "the Docker daemon's socket"},         // https://docs.docker.com/engine/daemon/: /var/run/docker.sock
	{"docker-compose", "the Docker daemon's socket"}, // the same socket
	{"gpg-connect-agent", "gpg-agent's socket"},
	{"helm", "its cluster, over the network (~/.kube/config)"},        // https://www.gnupg.org/documentation/manuals/gnupg/gpg_002dconnect_002dagent.html
	{"hostnamectl", "systemd's D-Bus socket"},                         // systemd's tools ask their daemons over D-Bus
	{"incus", "Incus's socket"},                                       // /var/lib/incus/unix.socket
	{"journalctl", "the system journal (/var/log/journal, /run/log)"}, // https://www.freedesktop.org/software/systemd/man/latest/journalctl.html
	{"kubectl", "its cluster, over the network (~/.kube/config)"},
	{"localectl", "systemd's D-Bus socket"},                    //
	{"loginctl", "systemd's D-Bus socket"},                     //
	{"lxc", "LXD's socket"},                                    // /var/snap/lxd/common/lxd/unix.socket
	{"man", "the system's manual page cache (/var/cache/man)"}, // man-db formats into and reads from its cache
	{"nerdctl", "containerd's socket"},                         // https://github.com/containerd/nerdctl
	{"podman", "Podman's socket and storage"},                  // rootless: $XDG_RUNTIME_DIR/podman, ~/.local/share/containers
	{"snap", "snapd's socket"},                                 // /run/snapd.socket
	{"ssh-add", "ssh-agent's socket"},                          // $SSH_AUTH_SOCK
	{"supervisorctl", "supervisord's socket"},                  // unix:///tmp/supervisor.sock by default
	{"systemctl", "systemd's D-Bus socket"},                    // https://www.freedesktop.org/software/systemd/man/latest/systemctl.html
	{"timedatectl", "systemd's D-Bus socket"},                  //
	{"tmux", "the tmux server's socket"},                       // /tmp/tmux-UID/default
	{"virsh", "libvirt's socket"},                              // /var/run/libvirt/libvirt-sock
}

// startupFiles are the files in home a shell that argv starts reads
// before its command: zsh's .zshenv always, a login shell's profile, an
// interactive one's rc file. Granted for reading, so that `bash -lc ls`
// confined runs as it would unconfined.
func startupFiles(argv []string, home string) []string {
	shell := path.Base(argv[0])
	if home == "" || (shell != "bash" && shell != "sh" && shell != "zsh") {
		return nil
	}
	var login, interactive bool
	for _, a := range argv[1:] {
		switch {
		case a == "--login":
			login = true
		case a == "-c" || a == "--" || !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--"):
		default:
			login = login || strings.ContainsRune(a, 'l')
			interactive = interactive || strings.ContainsRune(a, 'i')
		}
		if a == "-c" || (!strings.HasPrefix(a, "-") && a != "") {
			break
		}
	}
	var names []string
	switch shell {
	case "zsh":
		names = append(names, ".zshenv")
		if login {
			names = append(names, ".zprofile", ".zlogin", ".zlogout")
		}
		if interactive {
			names = append(names, ".zshrc")
		}
	case "bash":
		if login {
			names = append(names, ".bash_profile", ".bash_login", ".profile", ".bash_logout")
		}
		if interactive {
			names = append(names, ".bashrc")
		}
	case "sh":
		if login {
			names = append(names, ".profile")
		}
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, path.Join(home, n))
	}
	return out
}

// treeMakers are programs whose write target may be a directory, a link
// or a tree rather than a plain file: a scratch target of theirs outside
// the workspace cannot be granted as the file the shim makes first.
var treeMakers = nameSet{"cp", "git", "install", "ln", "mkdir", "mkfifo", "mknod", "mv", "rsync", "tar", "unzip", "wget"}

// unmodelled reports whether seg runs a program nobody modelled (its
// effects on the paths it names are unknown).
func unmodelled(seg *Segment) bool {
	for _, r := range seg.Reasons {
		if r.Rule == "not-read-only" {
			return len(seg.Argv) > 0
		}
	}
	return false
}

// systemPlace reports whether p is among the system's files, which a
// confined command reads and never writes: naming one asks nothing.
func systemPlace(p string) bool {
	for _, d := range []string{"/bin", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/nix", "/opt", "/proc", "/sbin", "/snap", "/sys", "/usr"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// printsOnly reports whether argv only asks a program its version or
// help, which it prints without reaching its service.
func printsOnly(argv []string) bool {
	return len(argv) == 2 && (argv[1] == "--version" || argv[1] == "--help")
}

// effectNeed is the need behind an effect that no rule above names.
func effectNeed(effect string) needKind {
	switch effect {
	case EffectRuns:
		return needRun
	case EffectNetwork, EffectSend:
		return needNetwork
	case EffectCredentials:
		return needCredential
	}
	// Writes elsewhere, code-loading files, the environment of later
	// commands, privilege, destruction, and whatever the analysis could
	// not read: more than the boundary.
	return needBeyond
}

// NeedsOf derives what res needs. cwd is where the command starts, home
// the user's home directory: path words outside the workspace are listed
// as reads (a safe command's model proved them harmless).
func NeedsOf(res Result, cwd, home string) Needs {
	var n Needs
	var named []string // path words outside the workspace
	if res.ParseError != "" {
		n.Beyond = append(n.Beyond, "it does not parse: "+res.ParseError)
	}
	for _, seg := range res.Segments {
		if seg.Denylist != "" {
			n.Beyond = append(n.Beyond, "your denylist names it: "+seg.Denylist)
		}
		if len(seg.Argv) > 0 {
			name := path.Base(seg.Argv[0])
			if what, ok := hostServices.lookup(name); ok {
				n.Host = true
				n.Beyond = append(n.Beyond, name+" needs "+what+", outside the sandbox")
			}
			if name == "git" {
				n.Repository = true
			}
			if what, ok := fetches(seg.Argv); ok {
				n.Network = true
				n.Beyond = append(n.Beyond, what+", over the network")
				if hosts, ok := confinedFetch(seg.Argv); ok && !setsCredential(res) && !registryToken(res) {
					n.Downloads = append(n.Downloads, Download{Reason: what + ", over the network", Hosts: hosts})
				}
			}
			n.Read = append(n.Read, startupFiles(seg.Argv, home)...)
			for _, w := range seg.Wrappers {
				// A nested shell (bash -lc '…') reads its own.
				n.Read = append(n.Read, startupFiles(strings.Fields(w), home)...)
			}
			if seg.networkQuery && !printsOnly(seg.Argv) {
				// A read-only query of the program's own service (gh
				// pr list, kubectl get): safe, and over the network.
				n.Network = true
				n.Beyond = append(n.Beyond, name+" queries its service over the network")
			}
		}
		for _, r := range seg.Reasons {
			kind := needBeyond
			if k, ok := ruleNeeds.lookup(r.Rule); ok {
				kind = k
			} else {
				kind = effectNeed(r.Effect)
			}
			if r.Risk == Dangerous {
				kind = needBeyond
			}
			switch kind {
			case needNothing:
			case needRun:
				n.RunCode, n.WriteWorkspace = true, true
			case needWrite:
				n.WriteWorkspace = true
			case needNetwork:
				n.Network = true
				n.Beyond = append(n.Beyond, r.Text)
			case needCredential:
				n.Credentials = true
				n.Beyond = append(n.Beyond, r.Text)
			default:
				n.Beyond = append(n.Beyond, r.Text)
			}
		}
		redirected := slices.Clone(seg.Redirected)
		for _, w := range seg.Writes {
			if inside(w, cwd) {
				continue
			}
			if i := slices.Index(redirected, w); i >= 0 {
				// The shell opens a redirection's file itself: a plain
				// file, whatever the program makes of its own words.
				redirected = slices.Delete(redirected, i, i+1)
				n.Write = append(n.Write, w)
				continue
			}
			if len(seg.Argv) > 0 && treeMakers.has(path.Base(seg.Argv[0])) {
				// The sandbox grants a path outside the workspace as a
				// file made in advance; this program may make a
				// directory, a link or a tree there instead.
				n.Beyond = append(n.Beyond, path.Base(seg.Argv[0])+" writes "+w+" outside the workspace, which the sandbox can grant only as a plain file")
				continue
			}
			n.Write = append(n.Write, w)
		}
		words := pathWords(seg, cwd, home)
		if unmodelled(seg) {
			// A program nobody modelled may write what it names: the
			// sandbox would let it only read a path outside the
			// workspace, so it would fail there. It asks instead.
			for _, w := range words {
				if !systemPlace(w) {
					n.Beyond = append(n.Beyond, path.Base(seg.Argv[0])+" names "+w+", outside the workspace, which it may write: the sandbox would let it only read it")
				}
			}
		}
		named = append(named, words...)
	}
	n.Read = append(n.Read, n.namedReads(named)...)
	n.Read, n.Write = sortedSet(n.Read), sortedSet(n.Write)
	return n
}

// CanConfine reports whether res may run confined instead of asking:
// its needs fit the boundary, the sandbox works here, and the policy
// lets a command run without a person at all (not security=deny, not
// ask=always, nothing denylisted).
func CanConfine(p config.Policy, res Result, n Needs, sandboxOK bool) bool {
	if !sandboxOK || !n.Within() || res.Decision == Allow {
		return false
	}
	if p.Security == config.SecurityDeny || p.Ask == config.AskAlways {
		return false
	}
	return !res.Opaque || n.RunCode
}

// inside reports whether p is dir or beneath it.
func inside(p, dir string) bool {
	return dir != "" && (p == dir || dir == "/" || strings.HasPrefix(p, dir+"/"))
}

// pathWords lists the absolute paths outside cwd that seg's words name:
// a word with a slash or a leading ~, made absolute, up to its first
// pattern character.
func pathWords(seg *Segment, cwd, home string) []string {
	if len(seg.Argv) < 2 {
		return nil
	}
	var out []string
	for _, w := range seg.Argv[1:] {
		if _, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
			w = v // --file=/etc/x
		}
		switch {
		case w == "~" || strings.HasPrefix(w, "~/"):
			if home == "" {
				continue
			}
			w = home + w[1:]
		case strings.HasPrefix(w, "/"):
		case strings.Contains(w, "/") && cwd != "":
			w = path.Join(cwd, w)
		default:
			continue
		}
		if i := strings.IndexAny(w, "*?[$`"); i >= 0 {
			w = path.Dir(w[:i] + "x")
		}
		w = path.Clean(w)
		if !inside(w, cwd) {
			out = append(out, w)
		}
	}
	return out
}

func sortedSet(ps []string) []string {
	if len(ps) == 0 {
		return nil
	}
	slices.Sort(ps)
	return slices.Compact(ps)
}

// Summary says in a few words what the command needs, for check and the
// approvers.
func (n Needs) Summary() string {
	var parts []string
	if n.WriteWorkspace {
		parts = append(parts, "writes the workspace")
	} else {
		parts = append(parts, "reads the workspace")
	}
	if n.RunCode {
		parts = append(parts, "runs code")
	}
	if len(n.Write) > 0 {
		parts = append(parts, "writes "+strings.Join(n.Write, ", "))
	}
	if len(n.Read) > 0 {
		parts = append(parts, "reads "+strings.Join(n.Read, ", "))
	}
	if n.Network {
		parts = append(parts, "network")
	}
	if n.Proxied {
		parts = append(parts, "downloads through the proxy")
	}
	if n.Credentials {
		parts = append(parts, "credentials")
	}
	if n.Host {
		parts = append(parts, "the host's services")
	}
	return strings.Join(parts, "; ")
}

// PlumbingDirs are the directories where agent keeps the shell snapshots
// its envelope sources: a confined payload must still be able to read them
// (and the agent's own start-up command to write them), or the agent's
// plumbing breaks before the payload runs. Each is the fixed part of a
// trusted source glob; a glob without one grants nothing.
func (t Trust) PlumbingDirs(agent string) []string {
	var out []string
	for _, pattern := range t.sources[agent] {
		fixed := pattern
		if i := strings.IndexAny(pattern, "*?[{\\"); i >= 0 {
			fixed = pattern[:i]
		}
		dir := path.Dir(fixed + "x")
		if !path.IsAbs(dir) || dir == "/" || dir == t.home || dir == path.Dir(t.home) {
			continue // too broad to be the agent's own
		}
		out = append(out, dir)
	}
	return sortedSet(out)
}
