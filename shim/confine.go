package shim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/internal/gitconfig"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/sandbox"
)

// Confinement: every command the shim lets through runs inside the
// kernel's sandbox with what its judgement says it needs (package
// sandbox), where this machine can confine. A command whose only
// unproven effects lie inside the boundary — the workspace, a private
// TMPDIR, the build caches, no network — runs confined without asking
// (outcome "confined"); one that needs more asks as before, and runs with
// what the person was shown.

// unconfineVar is the variable a command sets to ask to run outside the
// sandbox: `EXECGATE_SANDBOX=off CMD` needs a person's approval, and
// once approved runs unconfined. The same variable in the shim's own
// environment turns confinement off altogether (sandbox.OffEnv).
const unconfineVar = sandbox.OffEnv

// sandboxStatus probes the kernel once per run.
func (s *session) sandboxStatus() sandbox.Status {
	if s.sandbox == nil {
		st := sandbox.Probe(s.getenv)
		s.sandbox = &st
	}
	return *s.sandbox
}

// needsOf is policy.NeedsOf, plus the request to run unconfined, plus,
// for a command that would otherwise run confined unasked, the work it
// would destroy that git does not hold (policy.WorkLoss): the sandbox
// lets it write the workspace, and cannot tell what comes back.
func (s *session) needsOf(ctx context.Context, req policy.Request, res policy.Result) policy.Needs {
	n := policy.NeedsOf(res, req.Cwd, req.Home)
	if len(n.Downloads) > 0 && len(s.extra.Hosts) > 0 && s.loopbackHere(req.Home) && len(policy.EnvironCredentials(s.o.Environ)) == 0 {
		// The proxy to the agent's hosts is served inside the private
		// network: where none can be made, a download could only fail.
		// An npm token under any npm_config_ name keeps it asking.
		n = n.WithHosts(s.extra.Hosts, s.getenv)
	}
	if asksUnconfined(res) {
		n.Beyond = append(n.Beyond, "asks to run outside the sandbox ("+unconfineVar+"=off)")
	}
	if n.Within() && res.Decision != policy.Allow && s.sandboxStatus().Supported() {
		w := policy.WorkLossOf(ctx, res, req.Cwd, req.Home, s.getenv, s.now())
		n.Destroys = w.Ask
		n.Beyond = append(n.Beyond, n.Destroys...)
		s.scratch = s.scratch[:0]
		for _, u := range w.Undoable {
			n.Undoable = append(n.Undoable, u.Reason)
			s.scratch = append(s.scratch, u.Path)
		}
	}
	return n
}

// loopbackHere says whether a confined command gets its private network
// here (sandbox.ProbeLoopback), or shares the one of the confined command
// this shim runs in; asked once per run.
func (s *session) loopbackHere(home string) bool {
	if s.loopbackOK == nil {
		ok := s.sandboxStatus().Supported() &&
			(s.enclosed(home) || sandbox.ProbeLoopback(sandbox.Options{Helper: s.o.SandboxHelper}) == nil)
		s.loopbackOK = &ok
	}
	return *s.loopbackOK
}

// asksUnconfined reports whether the program sets EXECGATE_SANDBOX.
func asksUnconfined(res policy.Result) bool {
	for _, seg := range res.Segments {
		if strings.Contains(seg.Text, unconfineVar+"=") {
			return true
		}
	}
	return false
}

// grantsFor is what the allowed command runs with: nil for unconfined
// (no sandbox here, or needs the sandbox cannot bound: a person or the
// user's own policy allowed those, as before confinement existed).
func (s *session) grantsFor(req policy.Request, n policy.Needs) *sandbox.Grants {
	if !s.sandboxStatus().Supported() {
		return nil
	}
	if s.envelope != nil && s.envelope.Shell != "" && isExecgate(s.envelope.Shell) {
		// The envelope execs this shim again with the payload: that shim
		// judges the payload and confines it; the envelope itself is the
		// agent's plumbing, recognised by its exact shape.
		return nil
	}
	if !n.Within() {
		// More than the boundary, allowed by a person or the user's own
		// policy: it runs as before confinement existed. A network grant
		// alone would not do: what talks to a host authenticates with
		// what the sandbox keeps out (~/.ssh, an agent's socket, a
		// credential helper), and git push to a path reaches outside.
		return nil
	}
	ws := s.sandboxWorkspace(req.Cwd)
	g := sandbox.Grants{
		Workspace: ws, WriteWorkspace: n.WriteWorkspace, RunCode: n.RunCode,
		Network: n.Network, Read: n.Read,
		// Code that runs may listen on loopback (a test's server): in a
		// private network namespace, that reaches nothing outside.
		Loopback: n.RunCode && !n.Network,
	}
	if g.Loopback && len(s.extra.Hosts) > 0 && !policy.RegistryTokenFiles(req.Cwd, req.Home, s.getenv) {
		// And reach the agent's allowed hosts through the proxy
		// (hostproxy.go): pip, npm or go fetching from their registries.
		// Not where it could read a registry's token from a file (a
		// workspace's .npmrc, a pip.conf): the registry would take a
		// publish with it.
		g.Proxy = proxyAddr
		// Without a registry's token, nor any other secret of the
		// environment: an allowed registry takes publishes on the host
		// it serves installs from (npm's), an upload carries whatever
		// it is given, and code that runs confined is no one's to act
		// as the user with. (A download that needs a token asks:
		// WithHosts.)
		g.Withheld = policy.SecretVariables(s.o.Environ)
	}
	dirs := gitDirs(ws)
	if len(dirs) > 0 {
		// A worktree's or submodule's repository lives elsewhere (a .git
		// file says where): it is the workspace's own.
		g.Read = append(g.Read, dirs...)
		if n.WriteWorkspace {
			g.Write = append(g.Write, dirs...)
		}
	}
	if n.Repository && !n.WriteWorkspace && ws != "" {
		// git writes its repository even to read it (status refreshes
		// the index, and takes index.lock): the repository, not the
		// work tree, is writable. What it may change there that runs
		// code later (hooks, config) is checked after the run.
		g.Write = append(g.Write, dirs...)
		if fi, err := os.Lstat(filepath.Join(ws, ".git")); err == nil && fi.IsDir() {
			g.Write = append(g.Write, filepath.Join(ws, ".git"))
		}
	}
	// execgate's own program and configuration (req.Protected): a shell
	// the command starts may be this shim again (the agent's PATH leads to
	// it), which must run, read its policy and judge what it is given. It
	// cannot write either.
	g.Read = append(g.Read, req.Protected...)
	g.Read = append(g.Read, s.ownStartupFiles(req.Home)...)
	// npm's and pip's caches of the workspace's own only for a download
	// the policy judged (n.Proxied: its registry allowed, no token in
	// its environment): with them, any code that runs confined could
	// install and run what it likes (npx PKG, npm inst PKG, a make
	// target's npm install), which npm could not with the user's cache
	// read only.
	caches := toolchains(s.getenv, req.Home, ws, g.Proxy != "" && n.Proxied)
	// What the environment names inside the workspace is the workspace's
	// (an activated .venv/bin on PATH, npm_config_cache=$PWD/.npm): no
	// grant of its own, which a link put there by an earlier confined
	// command would have turned into a grant of what it names.
	g.Read = append(g.Read, outsideWorkspace(ws, caches.read)...)
	g.Read = append(g.Read, outsideWorkspace(ws, pathDirs(s.getenv("PATH"), req.Home))...)
	// The agent's configuration adds to the boundary (config.SandboxConfig):
	// reading always, writing for a command that writes.
	g.Read = append(g.Read, s.extra.Read...)
	if n.WriteWorkspace || n.RunCode {
		g.Write = append(g.Write, s.extra.Write...)
		// A command that runs code builds, caches and keeps scratch
		// files; a read-only one needs none of that.
		g.Caches = outsideWorkspace(ws, caches.write)
		g.Env = caches.env
		if dir, err := privateTemp(ws, req.Home); err == nil {
			g.TempDir = dir
		} else {
			s.warnf("private TMPDIR: %v", err)
		}
	}
	for _, w := range n.Write {
		if scratchFile(w) == nil {
			g.Write = append(g.Write, w)
		}
	}
	if s.envelope != nil {
		// The agent's own plumbing: its snapshots are read by the
		// envelope, and written by its start-up command.
		dirs := s.trust.PlumbingDirs(s.envelope.Agent)
		g.Read = append(g.Read, dirs...)
		if s.envelope.Harness != "" {
			g.Write = append(g.Write, dirs...)
		}
		g.Read = append(g.Read, envelopePaths(s.program, s.envelope.Payload, true)...)
		g.Write = append(g.Write, envelopePaths(s.program, s.envelope.Payload, false)...)
	}
	g = g.Normalize()
	return &g
}

// ownStartupFiles are the files the real shell this shim runs reads
// before the command, as it would unconfined: zsh's .zshenv, a login
// shell's profile, and bash's ~/.bashrc even without
// -i, which bash reads when its input is a socket at the top level
// (Node-based agents hand their shells socket pairs). A confined command
// that could not read them would print "Permission denied" into its
// output. What they set is in the command's environment anyway. ($BASH_ENV
// is not granted: it may name any file.)
func (s *session) ownStartupFiles(home string) []string {
	var names []string
	if s.dialect == policy.DialectZsh {
		names = append(names, ".zshenv")
		if s.cl.Login {
			names = append(names, ".zprofile", ".zlogin", ".zlogout")
		}
	} else {
		if s.bashReadsRC() {
			names = append(names, ".bashrc")
		}
		if s.cl.Login {
			names = append(names, ".bash_profile", ".bash_login", ".profile", ".bash_logout")
		}
	}
	var out []string
	if home != "" {
		for _, n := range names {
			out = append(out, filepath.Join(home, n))
		}
	}
	return out
}

// bashReadsRC reports whether a non-interactive bash started with this
// shim's input reads ~/.bashrc: bash's rule for a shell run by a remote
// shell daemon, which takes any socket on stdin for one, at the top
// level (SHLVL below 1 before bash adds its own).
func (s *session) bashReadsRC() bool {
	if s.o.Stdin == nil {
		return false
	}
	fi, err := s.o.Stdin.Stat()
	if err != nil || fi.Mode()&os.ModeSocket == 0 {
		return false
	}
	lvl, err := strconv.Atoi(strings.TrimSpace(s.getenv("SHLVL")))
	return err != nil || lvl < 1
}

// sandboxWorkspace is the directory a confined command may write: the
// top of the repository holding cwd, or cwd itself; "" when that is no
// workspace (/, a home directory or what holds it, /tmp: see
// noWorkspace).
//
// Judging asks it several times for one cwd; the answer is kept until the
// command starts (see forgetWorkspace), since what the command does may
// change it.
func (s *session) sandboxWorkspace(cwd string) string {
	m := &s.wsMemo
	if m.ok && m.cwd == cwd {
		return m.ws
	}
	ws := s.findSandboxWorkspace(cwd)
	if !m.running {
		*m = workspaceMemo{cwd: cwd, ws: ws, ok: true}
	}
	return ws
}

// workspaceMemo is sandboxWorkspace's last answer, kept only until the
// command starts.
type workspaceMemo struct {
	cwd, ws string
	ok      bool
	running bool
}

// forgetWorkspace drops sandboxWorkspace's kept answer and the
// configuration kept while judging, and keeps neither from here on:
// called as the command starts.
func (s *session) forgetWorkspace() {
	s.wsMemo = workspaceMemo{running: true}
	s.gitConfigs.Stop()
}

// findSandboxWorkspace is sandboxWorkspace without the memo.
func (s *session) findSandboxWorkspace(cwd string) string {
	if cwd == "" || cwd == "/" || cwd == s.getenv("HOME") {
		return ""
	}
	for d := cwd; ; {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			if d == "/" || d == s.getenv("HOME") {
				return s.usableWorkspace(cwd)
			}
			return s.usableWorkspace(d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return s.usableWorkspace(cwd)
		}
		d = parent
	}
}

// privateTemp returns the workspace's own temporary directory, made if
// need be: $TMPDIR/execgate-UID/HASH, mode 0700, refusing a directory
// another user made or a link put in its place.
func privateTemp(ws, home string) (string, error) {
	base := os.TempDir()
	uid := os.Getuid()
	top := filepath.Join(base, "execgate-"+strconv.Itoa(uid))
	key := ws
	if key == "" {
		key = home
	}
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(top, hex.EncodeToString(sum[:8]))
	for _, d := range []string{top, dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", err
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return "", err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !fi.IsDir() || !ok || int(st.Uid) != uid || fi.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("%s is not a private directory of this user", d)
		}
	}
	return dir, nil
}

// scratchFile makes sure a scratch file the command writes exists, so
// that the sandbox can grant that file alone rather than its directory
// (/tmp): bash would create it on opening it anyway.
func scratchFile(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// cacheSet is what the toolchains need: caches to write, toolchains and
// their configuration to read.
type cacheSet struct {
	read, write []string
	// env points the tools at the sandbox's own caches.
	env []string
}

// toolchains lists the caches and toolchains of Go, Python, Node, Rust
// and git under home, by their variables or their default places, and
// the confined Go build cache of the workspace ws; with fetching (the
// command reaches the agent's allowed hosts), npm's and pip's caches of
// the workspace's own too. Only what exists is granted (sandbox.Prepare
// skips the rest).
func toolchains(getenv func(string) string, home, ws string, fetching bool) cacheSet {
	var c cacheSet
	if home == "" {
		return c
	}
	h := func(p string) string { return filepath.Join(home, p) }
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = h(".cache")
	}
	gopath := h("go")
	if v := getenv("GOPATH"); v != "" {
		gopath = filepath.SplitList(v)[0]
	}
	or := func(v, def string) string {
		if x := getenv(v); x != "" && filepath.IsAbs(x) {
			return x
		}
		return def
	}
	npmCache := or("npm_config_cache", h(".npm"))
	key := workspaceCacheKey(ws)
	if gc := confinedGoCache(getenv, cache, key); gc != "" {
		c.write = append(c.write, gc)
		c.env = append(c.env, "GOCACHE="+gc)
	}
	// Not npm's _cacache nor Poetry's HTTP cache and artifacts: their
	// entries are checked against hashes the cached metadata itself gives
	// (a registry's packument, PyPI's JSON), so a planted answer names the
	// planted file; installing needs the network, which asks, and what
	// runs confined only reads them.
	uv, lint := confinedUVCache(cache, key), confinedLintCache(cache, key)
	c.env = append(c.env, "UV_CACHE_DIR="+uv, "GOLANGCI_LINT_CACHE="+lint)
	c.write = append(c.write, filepath.Join(npmCache, "_logs"), uv, lint)
	if fetching {
		npm, pip := confinedFetchCaches(cache, key)
		c.write = append(c.write, npm, pip)
		c.env = append(c.env, "npm_config_cache="+npm, "PIP_CACHE_DIR="+pip)
	}
	// Readable only: stores of code that later runs outside the sandbox,
	// unchecked (see codeStores).
	c.read = append(c.read, codeStores(getenv, home, cache)...)
	// npm's logs are logs; the rest of its cache is read only: _npx is
	// code npx runs again unchecked, _cacache answers installs (above).
	c.read = append(c.read, npmCache)
	c.read = append(c.read, gitXDGFiles(getenv, home)...)
	// What the user's git configuration includes (dotfiles, includeIf
	// for work): git stops on an include it cannot read. An error leaves
	// the rest as it is: git will say what is wrong, as it would outside.
	userGit, _ := gitconfig.UserFiles(getenv, home)
	c.read = append(c.read, userGit...)
	c.read = append(c.read,
		h(".gitconfig"),
		filepath.Join(gopath, "bin"), h("sdk"), or("GOROOT", h(".go")),
		h(".cargo/bin"), h(".rustup"),
		h(".pyenv"), h(".local/bin"), h(".local/lib"), h(".local/share/virtualenvs"),
		h(".nvm"), h(".volta"), h(".bun"), h(".deno"),
	)
	return c
}

// envelopePaths lists the absolute paths named by literal words in an
// agent's envelope: the files its plumbing reads (a shell snapshot) when
// read is set, else the files it writes, made to exist (the file that
// receives the working directory afterwards). Nothing inside the payload
// counts.
func envelopePaths(program, payload string, read bool) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(program), "")
	if err != nil {
		return nil
	}
	// The payload's own words are the model's, never the plumbing's.
	from, to := -1, -1
	if i := strings.Index(program, payload); payload != "" && i >= 0 {
		from, to = i, i+len(payload)
	}
	var out []string
	if read {
		// Paths inside a quoted string the envelope hands a shell
		// (Codex's `bash -lc '. SNAPSHOT && …'`) are words of that
		// string, not of this program: look at every token outside the
		// payload.
		rest := program
		if from >= 0 {
			rest = program[:from] + " " + program[to:]
		}
		for _, tok := range strings.FieldsFunc(rest, func(r rune) bool { return strings.ContainsRune(" \t\n'\";&|()<>", r) }) {
			if filepath.IsAbs(tok) {
				if fi, err := os.Stat(tok); err == nil && fi.Mode().IsRegular() {
					out = append(out, tok)
				}
			}
		}
	}
	// The plumbing's own variables set to literal paths (Gemini CLI's
	// _bgpids_file=/tmp/gemini-shell-ID/bgpids.tmp, written by its EXIT
	// trap): a redirection to "$NAME" writes that path. Only the value the
	// envelope gives is granted; a payload that sets NAME again is held
	// by the sandbox.
	literal := map[string]string{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			return true
		}
		if off := int(n.Pos().Offset()); from >= 0 && off >= from && off < to {
			return false
		}
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil && n.Value != nil && !n.Append && n.Index == nil {
				if p, ok := policy.LiteralWord(n.Value); ok && filepath.IsAbs(p) {
					literal[n.Name.Value] = p
				}
			}
		case *syntax.Redirect:
			if read || n.Word == nil || (n.Op != syntax.RdrOut && n.Op != syntax.ClbOut && n.Op != syntax.AppOut) {
				return true
			}
			if p, ok := redirectTarget(n.Word, literal); ok && scratchFile(p) == nil {
				out = append(out, p)
			}
		case *syntax.CallExpr:
			// An EXIT trap of the plumbing writes when the shell ends:
			// trap 'jobs -p > "$_bgpids_file"' EXIT.
			if read || len(n.Args) < 3 || n.Args[0].Lit() != "trap" {
				return true
			}
			action, ok := policy.LiteralWord(n.Args[1])
			if !ok {
				return true
			}
			tf, err := syntax.NewParser().Parse(strings.NewReader(action), "")
			if err != nil {
				return true
			}
			syntax.Walk(tf, func(m syntax.Node) bool {
				if r, ok := m.(*syntax.Redirect); ok && r.Word != nil && (r.Op == syntax.RdrOut || r.Op == syntax.ClbOut || r.Op == syntax.AppOut) {
					if p, ok := redirectTarget(r.Word, literal); ok && scratchFile(p) == nil {
						out = append(out, p)
					}
				}
				return true
			})
		case *syntax.Word:
			if !read {
				return true
			}
			if p, ok := policy.LiteralWord(n); ok && filepath.IsAbs(p) {
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
					out = append(out, p)
				}
			}
		}
		return true
	})
	return out
}

// redirectTarget is the absolute path a redirection of the plumbing
// writes: a literal word, or "$NAME" for a variable it set to one.
func redirectTarget(w *syntax.Word, literal map[string]string) (string, bool) {
	p, ok := policy.LiteralWord(w)
	if !ok {
		p, ok = literal[plainParam(w)]
	}
	return p, ok && filepath.IsAbs(p)
}

// plainParam returns NAME for a word that is exactly $NAME, ${NAME} or
// "$NAME", else "".
func plainParam(w *syntax.Word) string {
	parts := w.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = dq.Parts
		}
	}
	if len(parts) != 1 {
		return ""
	}
	pe, ok := parts[0].(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Exp != nil || pe.Index != nil || pe.Slice != nil || pe.Repl != nil ||
		pe.Length || pe.Width || pe.Excl || pe.Names != 0 {
		return ""
	}
	return pe.Param.Value
}

// confinementLine is the reason that says how the command runs if it
// runs: what approvers, check and the audit log show.
func confinementLine(res policy.Result, g *sandbox.Grants, confined bool, st sandbox.Status) string {
	switch {
	case confined:
		return "runs confined, unasked: its only unproven effects are inside the sandbox (" + g.Summary() + ")"
	case g != nil:
		return "runs confined (" + g.Summary() + ")"
	case !st.Supported():
		return "runs unconfined: " + st.Reason
	}
	return "runs unconfined if allowed: it needs more than the sandbox can grant"
}

// boundaryHint adds, after a confined command failed with output that
// says a permission was refused, one line on stderr saying it ran
// confined and how to ask for more. Only captured output can be read;
// the audit log records the confinement either way.
func (s *session) boundaryHint(pl plan, status int) int {
	if pl.grants == nil || status == 0 || !s.sawRefusal {
		return status
	}
	fmt.Fprintf(s.o.Stderr, "execgate: this command ran confined (%s); if the sandbox refused what it needs, run it as `%s=off COMMAND` to ask a person to let it run unconfined\n",
		pl.grants.Summary(), unconfineVar)
	return status
}

// refusalIn reports whether output tells of a permission the kernel
// refused, as programs print EACCES and EPERM.
func refusalIn(output []byte) bool {
	for _, msg := range []string{"Permission denied", "Operation not permitted", "EACCES", "EPERM", "PermissionError"} {
		if bytes.Contains(output, []byte(msg)) {
			return true
		}
	}
	return false
}

// pathDirs are the directories of PATH a confined command may execute
// programs from: the absolute ones, but never the home directory itself,
// a temporary directory's root or / (each would open everything beneath).
func pathDirs(path, home string) []string {
	var out []string
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if filepath.Base(d) == "shims" {
			// pyenv's, rbenv's, asdf's shims run the tool's own
			// scripts beside them.
			d = filepath.Dir(d)
		}
		switch {
		case d == "/", d == home, d == filepath.Dir(home), d == os.TempDir(), d == "/tmp", d == "/var/tmp":
			continue
		}
		out = append(out, d)
	}
	return out
}

// outsideWorkspace returns the paths not inside ws: the kernel's rule for
// a path is made on what it names, following links, and in the workspace
// a confined command may replace any directory with a link (to the home).
// The workspace's own rule covers what really is there.
func outsideWorkspace(ws string, paths []string) []string {
	if ws == "" {
		return paths
	}
	var out []string
	for _, p := range paths {
		if p != ws && !strings.HasPrefix(p, ws+string(filepath.Separator)) {
			out = append(out, p)
		}
	}
	return out
}

// gitDirs returns the repository directories of ws that lie outside it:
// the one its .git file names (gitdir: …) and that one's common
// directory (commondir), for a worktree or a submodule.
func gitDirs(ws string) []string {
	if ws == "" {
		return nil
	}
	dotgit := filepath.Join(ws, ".git")
	if fi, err := os.Stat(dotgit); err != nil || fi.IsDir() {
		return nil // a directory (or none): inside the workspace
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return nil
	}
	line, _, _ := strings.Cut(string(b), "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir: ")
	if !ok {
		return nil
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(ws, dir)
	}
	dir = filepath.Clean(dir)
	if !ownGitDir(ws, dir) {
		return nil // a .git file naming what is not ws's repository (see ownGitDir)
	}
	out := []string{dir}
	if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		if common = filepath.Clean(common); ownCommonDir(ws, dir, common) {
			out = append(out, common)
		}
	}
	return out
}
