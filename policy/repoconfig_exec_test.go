package policy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// gitWorld is a throwaway machine for one git command: a home directory,
// a workspace holding a real repository, a canary program that records
// that it ran, and the environment git runs with (no system
// configuration, the world's HOME).
type gitWorld struct {
	root, home, repo string
	canary           string // logs, then copies its file or stdin to stdout
	failing          string // logs, then fails (for transports and editors)
	log              string
	env              map[string]string
}

// restat gives the clean tracked file name another modification time, so
// that git status must refresh its index entry and write the index (which
// runs post-index-change). Without it, whether status writes the index
// depends on timing: only entries as new as the index itself ("racily
// clean") are refreshed, and on a busy machine there were none.
func (w *gitWorld) restat(t *testing.T, name string) {
	t.Helper()
	past := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(w.repo, name), past, past))
}

func newGitWorld(t *testing.T) *gitWorld {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	w := &gitWorld{root: root, home: filepath.Join(root, "home"), repo: filepath.Join(root, "ws", "repo"), log: filepath.Join(root, "canary.log")}
	require.NoError(t, os.MkdirAll(w.home, 0o755))
	require.NoError(t, os.MkdirAll(w.repo, 0o755))
	w.env = map[string]string{
		"HOME": w.home, "PATH": os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C",
		"GIT_TERMINAL_PROMPT": "0", "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z",
	}
	w.canary = w.script(t, "canary", `echo "$0 $*" >> `+shellQuote(w.log)+`
if [ $# -gt 0 ] && [ -f "$1" ]; then cat "$1"; else cat; fi
exit 0`)
	w.failing = w.script(t, "failing", `echo "$0 $*" >> `+shellQuote(w.log)+`
exit 1`)
	w.git(t, w.repo, "init", "-q", "-b", "main")
	w.git(t, w.repo, "config", "user.name", "t")
	w.git(t, w.repo, "config", "user.email", "t@example.com")
	w.write(t, "a.txt", "one\n")
	w.write(t, "b.bin", "bin\n")
	w.write(t, "sub/c.txt", "c\n")
	w.git(t, w.repo, "add", ".")
	w.git(t, w.repo, "commit", "-q", "-m", "one")
	w.write(t, "a.txt", "one\ntwo\n")
	w.git(t, w.repo, "commit", "-q", "-am", "two")
	w.write(t, "a.txt", "one\ntwo\nthree\n")
	return w
}

func (w *gitWorld) script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(w.root, "bin", name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

func (w *gitWorld) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(w.repo, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func (w *gitWorld) environ() []string {
	var out []string
	for k, v := range w.env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func (w *gitWorld) getenv(k string) string { return w.env[k] }

// git runs the real git and fails the test when it fails.
func (w *gitWorld) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, w.environ()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// config sets a variable in the repository's own configuration.
func (w *gitWorld) config(t *testing.T, key, value string) {
	t.Helper()
	w.git(t, w.repo, "config", key, value)
}

// ran runs the real git (on a terminal when tty is set, where git
// starts its pager) and reports whether the canary ran.
func (w *gitWorld) ran(t *testing.T, tty bool, args ...string) bool {
	t.Helper()
	require.NoError(t, os.WriteFile(w.log, nil, 0o644))
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = w.repo, w.environ()
	if tty {
		// A screen big enough that the default pager (less -FRX) quits
		// at once; a pager that waits anyway is stopped.
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 60, Cols: 200})
		require.NoError(t, err)
		go func() { _, _ = io.Copy(io.Discard, f) }()
		stop := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
		_ = cmd.Wait()
		stop.Stop()
		_ = f.Close()
	} else {
		cmd.Stdin = strings.NewReader("")
		_ = cmd.Run() // the canary may make git fail
	}
	b, err := os.ReadFile(w.log)
	require.NoError(t, err)
	return len(b) > 0
}

// judge analyzes command as the shim would in the repository.
func (w *gitWorld) judge(command string) Result {
	e, _ := NewEngine()
	return e.Analyze(Request{Command: command, Cwd: w.repo, Workspace: filepath.Dir(w.repo), Home: w.home, Getenv: w.getenv})
}

// covered reports whether `git **` lets command run.
func (w *gitWorld) covered(command string) bool {
	e, _ := NewEngine()
	res := e.Evaluate(Request{Command: command, Cwd: w.repo, Workspace: filepath.Dir(w.repo), Home: w.home, Getenv: w.getenv,
		Policy: config.BuiltinPolicy(), Allow: pattern.NewMatcher([]pattern.Entry{{Pattern: "git **"}}, nil)})
	return res.Decision == Allow
}

// execCase is one way a repository's configuration makes a git command
// run a program.
type execCase struct {
	name  string
	setup func(t *testing.T, w *gitWorld)
	run   []string // what the real git runs (and execgate judges)
	tty   bool     // git runs it on a terminal (its pager needs one)
	key   string   // what the reason must name
}

// signedCommit makes HEAD a commit with a (fake) PGP signature, so that
// verifying it runs gpg.program.
func signedCommit(t *testing.T, w *gitWorld) {
	tree := strings.TrimSpace(w.git(t, w.repo, "rev-parse", "HEAD^{tree}"))
	body := "tree " + tree + "\nauthor t <t@example.com> 1577836800 +0000\ncommitter t <t@example.com> 1577836800 +0000\n" +
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n"
	f := filepath.Join(w.root, "commit")
	require.NoError(t, os.WriteFile(f, []byte(body), 0o644))
	id := strings.TrimSpace(w.git(t, w.repo, "hash-object", "-t", "commit", "-w", f))
	w.git(t, w.repo, "update-ref", "HEAD", id)
}

// authServer is an HTTP server that asks for a password, so that git
// asks its credential helpers and askpass program.
func authServer(t *testing.T) string {
	s := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		rw.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(s.Close)
	return s.URL + "/r.git"
}

func execCases() []execCase {
	attr := func(t *testing.T, w *gitWorld, line string) {
		w.write(t, ".gitattributes", line+"\n")
	}
	return []execCase{
		{"fsmonitor status", func(t *testing.T, w *gitWorld) { w.config(t, "core.fsmonitor", w.canary) }, []string{"status"}, false, "core.fsmonitor"},
		{"fsmonitor diff", func(t *testing.T, w *gitWorld) { w.config(t, "core.fsmonitor", w.canary) }, []string{"diff"}, false, "core.fsmonitor"},
		{"fsmonitor ls-files", func(t *testing.T, w *gitWorld) { w.config(t, "core.fsmonitor", w.canary) }, []string{"ls-files"}, false, "core.fsmonitor"},
		{"fsmonitor grep", func(t *testing.T, w *gitWorld) { w.config(t, "core.fsmonitor", w.canary) }, []string{"grep", "one"}, false, "core.fsmonitor"},
		{"pager log", func(t *testing.T, w *gitWorld) { w.config(t, "core.pager", w.canary) }, []string{"log", "-1"}, true, "core.pager"},
		{"pager.status", func(t *testing.T, w *gitWorld) { w.config(t, "pager.status", w.canary) }, []string{"status"}, true, "pager.status"},
		{"pager.branch true with core.pager", func(t *testing.T, w *gitWorld) {
			w.config(t, "pager.branch", "true")
			w.config(t, "core.pager", w.canary)
		}, []string{"branch"}, true, "core.pager"},
		{"GIT_PAGER", func(t *testing.T, w *gitWorld) { w.env["GIT_PAGER"] = w.canary }, []string{"show"}, true, "GIT_PAGER"},
		{"diff.external", func(t *testing.T, w *gitWorld) { w.config(t, "diff.external", w.canary) }, []string{"diff"}, false, "diff.external"},
		{"textconv diff", func(t *testing.T, w *gitWorld) {
			w.config(t, "diff.tc.textconv", w.canary)
			attr(t, w, "*.txt diff=tc")
		}, []string{"diff"}, false, "diff.tc.textconv"},
		{"textconv log -p", func(t *testing.T, w *gitWorld) {
			w.config(t, "diff.tc.textconv", w.canary)
			attr(t, w, "*.txt diff=tc")
		}, []string{"log", "-p", "-1"}, false, "diff.tc.textconv"},
		{"textconv show", func(t *testing.T, w *gitWorld) {
			w.config(t, "diff.tc.textconv", w.canary)
			attr(t, w, "*.txt diff=tc")
		}, []string{"show"}, false, "diff.tc.textconv"},
		{"textconv blame", func(t *testing.T, w *gitWorld) {
			w.config(t, "diff.tc.textconv", w.canary)
			attr(t, w, "*.txt diff=tc")
		}, []string{"blame", "a.txt"}, false, "diff.tc.textconv"},
		{"textconv through a macro in a subdirectory", func(t *testing.T, w *gitWorld) {
			w.config(t, "diff.tc.textconv", w.canary)
			w.write(t, ".gitattributes", "[attr]conv diff=tc\n")
			w.write(t, "sub/.gitattributes", "*.txt conv\n")
			w.write(t, "sub/c.txt", "c\nd\n")
		}, []string{"diff"}, false, "diff.tc.textconv"},
		{"textconv through info/attributes", func(t *testing.T, w *gitWorld) {
			w.config(t, "diff.tc.textconv", w.canary)
			require.NoError(t, os.WriteFile(filepath.Join(w.repo, ".git", "info", "attributes"), []byte("*.txt diff=tc\n"), 0o644))
		}, []string{"diff"}, false, "diff.tc.textconv"},
		{"textconv through core.attributesFile", func(t *testing.T, w *gitWorld) {
			w.config(t, "diff.tc.textconv", w.canary)
			f := filepath.Join(w.home, "attrs")
			require.NoError(t, os.WriteFile(f, []byte("*.txt diff=tc\n"), 0o644))
			w.config(t, "core.attributesFile", f)
		}, []string{"diff"}, false, "diff.tc.textconv"},
		{"diff driver command", func(t *testing.T, w *gitWorld) {
			w.config(t, "diff.ext.command", w.canary)
			attr(t, w, "*.txt diff=ext")
		}, []string{"diff"}, false, "diff.ext.command"},
		{"clean filter", func(t *testing.T, w *gitWorld) {
			w.config(t, "filter.fl.clean", w.canary)
			attr(t, w, "*.txt filter=fl")
		}, []string{"diff"}, false, "filter.fl.clean"},
		{"filter process", func(t *testing.T, w *gitWorld) {
			w.config(t, "filter.fl.process", w.failing)
			attr(t, w, "*.txt filter=fl")
		}, []string{"blame", "a.txt"}, false, "filter.fl.process"},
		{"alias", func(t *testing.T, w *gitWorld) { w.config(t, "alias.st", "!"+w.canary) }, []string{"st"}, false, "alias.st"},
		{"gpg.program show-signature", func(t *testing.T, w *gitWorld) {
			signedCommit(t, w)
			w.config(t, "gpg.program", w.failing)
		}, []string{"log", "--show-signature", "-1"}, false, "gpg.program"},
		{"gpg.program log.showSignature", func(t *testing.T, w *gitWorld) {
			signedCommit(t, w)
			w.config(t, "gpg.program", w.failing)
			w.config(t, "log.showSignature", "true")
		}, []string{"log", "-1"}, false, "gpg.program"},
		{"gpg.program %G?", func(t *testing.T, w *gitWorld) {
			signedCommit(t, w)
			w.config(t, "gpg.program", w.failing)
		}, []string{"log", "--format=%G?", "-1"}, false, "gpg.program"},
		{"core.sshCommand", func(t *testing.T, w *gitWorld) { w.config(t, "core.sshCommand", w.failing) }, []string{"ls-remote", "ssh://example.invalid/r.git"}, false, "core.sshcommand"},
		{"GIT_SSH_COMMAND", func(t *testing.T, w *gitWorld) { w.env["GIT_SSH_COMMAND"] = w.failing }, []string{"ls-remote", "ssh://example.invalid/r.git"}, false, "GIT_SSH_COMMAND"},
		{"core.gitProxy", func(t *testing.T, w *gitWorld) { w.config(t, "core.gitProxy", w.failing) }, []string{"ls-remote", "git://example.invalid/r.git"}, false, "core.gitproxy"},
		{"uploadpack of a local remote", func(t *testing.T, w *gitWorld) {
			w.config(t, "remote.origin.url", w.repo)
			w.config(t, "remote.origin.uploadpack", w.failing)
		}, []string{"fetch", "origin"}, false, "remote.origin.uploadpack"},
		{"credential.helper", func(t *testing.T, w *gitWorld) {
			w.config(t, "credential.helper", "!"+w.failing)
			w.config(t, "remote.origin.url", authServer(t))
		}, []string{"fetch", "origin"}, false, "credential.helper"},
		{"credential helper for the remote's site", func(t *testing.T, w *gitWorld) {
			u := authServer(t)
			w.config(t, "credential."+strings.TrimSuffix(u, "/r.git")+".helper", "!"+w.failing)
			w.config(t, "remote.origin.url", u)
		}, []string{"fetch", "origin"}, false, ".helper"},
		{"core.askPass", func(t *testing.T, w *gitWorld) {
			w.config(t, "core.askPass", w.failing)
			w.config(t, "remote.origin.url", authServer(t))
			w.env["GIT_TERMINAL_PROMPT"] = "1"
		}, []string{"fetch", "origin"}, false, "core.askpass"},
		{"ext:: transport allowed", func(t *testing.T, w *gitWorld) {
			w.config(t, "protocol.ext.allow", "always")
			w.config(t, "remote.origin.url", "ext::"+w.failing)
		}, []string{"fetch", "origin"}, false, "protocol.ext.allow"},
		{"remote helper", func(t *testing.T, w *gitWorld) {
			w.script(t, "git-remote-canary", "echo helper >> "+shellQuote(w.log)+"\nexit 1")
			w.env["PATH"] = filepath.Join(w.root, "bin") + ":" + w.env["PATH"]
			w.config(t, "remote.origin.url", "canary::x")
		}, []string{"fetch", "origin"}, false, "remote.origin.url"},
		{"submodule update command", func(t *testing.T, w *gitWorld) {
			w.git(t, w.repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", w.repo, "sm")
			w.git(t, w.repo, "commit", "-q", "-m", "sm")
			w.git(t, filepath.Join(w.repo, "sm"), "checkout", "-q", "HEAD~1") // out of date: update runs
			w.config(t, "submodule.sm.update", "!"+w.canary)
		}, []string{"submodule", "update"}, false, "submodule.sm.update"},
		{"core.editor", func(t *testing.T, w *gitWorld) { w.config(t, "core.editor", w.failing) }, []string{"commit", "-a"}, false, "core.editor"},
		{"EDITOR", func(t *testing.T, w *gitWorld) { w.env["EDITOR"] = w.failing }, []string{"commit", "-a"}, false, "EDITOR"},
		{"trailer command", func(t *testing.T, w *gitWorld) { w.config(t, "trailer.see.command", w.failing) }, []string{"interpret-trailers", "--trailer", "see=x"}, false, "trailer.see.command"},
		{"merge driver", func(t *testing.T, w *gitWorld) {
			w.git(t, w.repo, "checkout", "-q", "--", "a.txt")
			w.git(t, w.repo, "checkout", "-q", "-b", "side", "HEAD~1")
			w.write(t, "a.txt", "one\nside\n")
			w.git(t, w.repo, "commit", "-q", "-am", "side")
			w.git(t, w.repo, "checkout", "-q", "main")
			w.config(t, "merge.md.driver", w.failing+" %O %A %B")
			attr(t, w, "*.txt merge=md")
		}, []string{"merge", "--no-edit", "side"}, false, "merge.md.driver"},
		{"man viewer", func(t *testing.T, w *gitWorld) {
			w.config(t, "man.viewer", "cv")
			w.config(t, "man.cv.cmd", w.failing)
		}, []string{"help", "log"}, false, "man.cv.cmd"},
		{"man.man.path on --help", func(t *testing.T, w *gitWorld) { w.config(t, "man.man.path", w.failing) }, []string{"log", "--help"}, false, "man.man.path"},
		{"hook post-index-change", func(t *testing.T, w *gitWorld) {
			w.script(t, "../ws/repo/.git/hooks/post-index-change", "echo hook >> "+shellQuote(w.log))
			w.restat(t, "b.bin")
		}, []string{"status"}, false, "post-index-change"},
		{"hook pre-commit", func(t *testing.T, w *gitWorld) {
			w.script(t, "../ws/repo/.git/hooks/pre-commit", "echo hook >> "+shellQuote(w.log))
		}, []string{"commit", "-qam", "x"}, false, "pre-commit"},
		{"hooks elsewhere", func(t *testing.T, w *gitWorld) {
			w.script(t, "hooks/post-index-change", "echo hook >> "+shellQuote(w.log))
			w.config(t, "core.hooksPath", filepath.Join(w.root, "bin", "hooks"))
			w.restat(t, "b.bin")
		}, []string{"status"}, false, "post-index-change"},
		{"include.path", func(t *testing.T, w *gitWorld) {
			f := filepath.Join(w.root, "inc.cfg")
			require.NoError(t, os.WriteFile(f, []byte("[core]\n\tfsmonitor = "+w.canary+"\n"), 0o644))
			w.config(t, "include.path", f)
		}, []string{"status"}, false, "inc.cfg:2"},
		{"includeIf relative", func(t *testing.T, w *gitWorld) {
			require.NoError(t, os.WriteFile(filepath.Join(w.repo, ".git", "more.cfg"), []byte("[core]\n\tfsmonitor = "+w.canary+"\n"), 0o644))
			w.config(t, "includeIf.gitdir:"+w.root+"/.path", "more.cfg")
		}, []string{"status"}, false, "more.cfg:2"},
		{"config.worktree", func(t *testing.T, w *gitWorld) {
			w.config(t, "extensions.worktreeConfig", "true")
			w.git(t, w.repo, "config", "--worktree", "core.fsmonitor", w.canary)
		}, []string{"status"}, false, "config.worktree"},
		{"global config", func(t *testing.T, w *gitWorld) {
			require.NoError(t, os.WriteFile(filepath.Join(w.home, ".gitconfig"), []byte("[core]\n\tfsmonitor = "+w.canary+"\n"), 0o644))
		}, []string{"status"}, false, ".gitconfig:2"},
		{"XDG config", func(t *testing.T, w *gitWorld) {
			x := filepath.Join(w.root, "xdg")
			require.NoError(t, os.MkdirAll(filepath.Join(x, "git"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(x, "git", "config"), []byte("[core]\n\tfsmonitor = "+w.canary+"\n"), 0o644))
			w.env["XDG_CONFIG_HOME"] = x
		}, []string{"status"}, false, "xdg/git/config"},
		{"GIT_CONFIG_GLOBAL", func(t *testing.T, w *gitWorld) {
			f := filepath.Join(w.root, "g.cfg")
			require.NoError(t, os.WriteFile(f, []byte("[core]\n\tfsmonitor = "+w.canary+"\n"), 0o644))
			w.env["GIT_CONFIG_GLOBAL"] = f
		}, []string{"status"}, false, "g.cfg"},
		{"GIT_CONFIG_COUNT", func(t *testing.T, w *gitWorld) {
			w.env["GIT_CONFIG_COUNT"], w.env["GIT_CONFIG_KEY_0"], w.env["GIT_CONFIG_VALUE_0"] = "1", "core.fsmonitor", w.canary
		}, []string{"status"}, false, "GIT_CONFIG_KEY_0"},
		{"GIT_CONFIG_PARAMETERS", func(t *testing.T, w *gitWorld) {
			w.env["GIT_CONFIG_PARAMETERS"] = "'core.fsmonitor'='" + w.canary + "'"
		}, []string{"status"}, false, "GIT_CONFIG_PARAMETERS"},
		{"GIT_DIR", func(t *testing.T, w *gitWorld) {
			other := filepath.Join(w.root, "other.git")
			w.git(t, w.root, "clone", "-q", "--bare", w.repo, other)
			w.git(t, other, "config", "core.fsmonitor", w.canary)
			w.git(t, other, "config", "core.bare", "false")
			w.git(t, w.repo, "--git-dir="+other, "--work-tree=.", "read-tree", "HEAD")
			w.env["GIT_DIR"] = other
		}, []string{"status"}, false, "other.git/config"},
		{"a .git file elsewhere", func(t *testing.T, w *gitWorld) {
			elsewhere := filepath.Join(w.root, "elsewhere.git")
			require.NoError(t, os.Rename(filepath.Join(w.repo, ".git"), elsewhere))
			require.NoError(t, os.WriteFile(filepath.Join(w.repo, ".git"), []byte("gitdir: "+elsewhere+"\n"), 0o644))
			w.git(t, w.repo, "config", "core.fsmonitor", w.canary)
		}, []string{"status"}, false, "elsewhere.git/config"},
		{"separate git dir", func(t *testing.T, w *gitWorld) {
			sep := filepath.Join(w.root, "sep.git")
			fresh := filepath.Join(w.root, "ws", "fresh")
			w.git(t, w.root, "init", "-q", "--separate-git-dir", sep, fresh)
			w.git(t, fresh, "config", "core.fsmonitor", w.canary)
			w.repo = fresh
		}, []string{"status"}, false, "sep.git/config"},
		{"linked worktree reads the common config", func(t *testing.T, w *gitWorld) {
			wt := filepath.Join(w.root, "ws", "wt")
			w.git(t, w.repo, "worktree", "add", "-q", wt)
			w.config(t, "core.fsmonitor", w.canary)
			w.repo = wt
		}, []string{"status"}, false, "core.fsmonitor"},
		{"submodule's own config", func(t *testing.T, w *gitWorld) {
			w.git(t, w.repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", w.repo, "sm")
			w.git(t, w.repo, "commit", "-q", "-m", "sm")
			w.git(t, filepath.Join(w.repo, "sm"), "config", "core.fsmonitor", w.canary)
			w.write(t, "sm/a.txt", "changed\n")
		}, []string{"status"}, false, "modules/sm/config"},
		{"from a subdirectory", func(t *testing.T, w *gitWorld) {
			w.config(t, "core.fsmonitor", w.canary)
			w.repo = filepath.Join(w.repo, "sub")
		}, []string{"status"}, false, "core.fsmonitor"},
		{"difftool", func(t *testing.T, w *gitWorld) { w.config(t, "difftool.dt.cmd", w.failing) }, []string{"difftool", "-y", "--tool=dt"}, false, "difftool"},
	}
}

// TestRepoConfigRunsPrograms is the execution test of issue 22 item 4:
// for each way a repository's configuration (or git's environment) makes
// a git command run a program, a real repository where the real git runs
// a canary, proving the key does run it; and execgate does not call the
// command safe, names the key, and no `git **` covers it. A clean
// repository is the control: the same command is safe there (for a
// read-only one) or covered by `git **`.
func TestRepoConfigRunsPrograms(t *testing.T) {
	for _, tc := range execCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case is a world of its own
			command := "git " + strings.Join(quoteAll(tc.run), " ")
			clean := newGitWorld(t)
			require.False(t, clean.ran(t, tc.tty, tc.run...), "the canary ran without the configuration")
			cleanRes := clean.judge(command)

			w := newGitWorld(t)
			tc.setup(t, w)
			require.True(t, w.ran(t, tc.tty, tc.run...), "the real git did not run the canary: the key table may be wrong")
			res := w.judge(command)
			assert.NotEqual(t, Safe, res.Risk, "%s judged safe", command)
			assert.Contains(t, strings.ToLower(strings.Join(res.Reasons, " | ")), strings.ToLower(tc.key))
			assert.False(t, w.covered(command), "git ** covers %s", command)
			for _, s := range res.Segments {
				for _, r := range s.Reasons {
					if r.Rule == "repo-config-program" || r.Rule == "repo-config-unproven" {
						assert.False(t, r.Coverable)
					}
				}
			}
			for _, s := range cleanRes.Segments {
				for _, r := range s.Reasons {
					assert.NotContains(t, r.Rule, "repo-config", "%s in a clean repository: %s", command, r.Text)
				}
			}
		})
	}
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return out
}

// TestRepoConfigCleanCommandsSafe: in a clean repository, the read-only
// commands an agent runs most stay safe with the lookup on, from the top
// and from a subdirectory, and the lookup does not slow them noticeably
// (see BenchmarkRepoConfig).
func TestRepoConfigCleanCommandsSafe(t *testing.T) {
	w := newGitWorld(t)
	w.script(t, "../ws/repo/.git/hooks/pre-commit", "exit 0")     // hooks status does not run
	w.script(t, "../ws/repo/.git/hooks/post-checkout", "exit 0")  // nor branch listing
	w.script(t, "../ws/repo/.git/hooks/pre-push", "exit 0")       // nor log
	w.config(t, "core.pager", "less -FRX")                        // git's own default pager, with display options
	w.config(t, "credential.https://example.com.helper", "!nope") // another site's helper
	w.env["PAGER"] = "less"
	for _, c := range []string{"git status", "git status --short", "git diff", "git diff --cached", "git log --oneline -5", "git log -p -1",
		"git show HEAD", "git branch -a", "git tag -l", "git stash list", "git remote -v", "git blame a.txt", "git ls-files",
		"git rev-parse HEAD", "git grep one", "cd sub && git status", "git -C sub log -1", "git --no-pager log"} {
		res := w.judge(c)
		assert.Equal(t, Safe, res.Risk, "%s: %v", c, res.Reasons)
	}
	start := time.Now()
	for range 20 {
		w.judge("git status")
	}
	t.Logf("git status judged in %s each", time.Since(start)/20)
}

// TestRepoConfigReasons pins the verdicts where the configuration cannot
// be proven, and where a configured command is judged as a command.
func TestRepoConfigReasons(t *testing.T) {
	t.Run("dangerous pager", func(t *testing.T) {
		w := newGitWorld(t)
		w.config(t, "core.pager", "rm -rf ~")
		res := w.judge("git log")
		assert.Equal(t, Dangerous, res.Risk, "%v", res.Reasons)
	})
	t.Run("unparsable config", func(t *testing.T) {
		w := newGitWorld(t)
		f, err := os.OpenFile(filepath.Join(w.repo, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, _ = f.WriteString("[core\n")
		f.Close()
		res := w.judge("git status")
		assert.Equal(t, NeedsReview, res.Risk)
		assert.Contains(t, strings.Join(res.Reasons, " "), "cannot prove")
	})
	t.Run("include cycle", func(t *testing.T) {
		w := newGitWorld(t)
		w.config(t, "include.path", "config")
		res := w.judge("git status")
		assert.Equal(t, NeedsReview, res.Risk)
		assert.Contains(t, strings.Join(res.Reasons, " "), "deeper than")
	})
	t.Run("unreadable include", func(t *testing.T) {
		if os.Getuid() == 0 {
			t.Skip("root reads every file")
		}
		w := newGitWorld(t)
		f := filepath.Join(w.root, "secret.cfg")
		require.NoError(t, os.WriteFile(f, nil, 0o000))
		w.config(t, "include.path", f)
		assert.Equal(t, NeedsReview, w.judge("git status").Risk)
	})
	t.Run("missing include is skipped as git skips it", func(t *testing.T) {
		w := newGitWorld(t)
		w.config(t, "include.path", filepath.Join(w.root, "absent.cfg"))
		assert.Equal(t, Safe, w.judge("git status").Risk)
	})
	t.Run("a .git file naming nothing", func(t *testing.T) {
		w := newGitWorld(t)
		require.NoError(t, os.RemoveAll(filepath.Join(w.repo, ".git")))
		require.NoError(t, os.WriteFile(filepath.Join(w.repo, ".git"), []byte("gitdir: /nonexistent\n"), 0o644))
		assert.Equal(t, NeedsReview, w.judge("git status").Risk)
	})
	t.Run("directory unknown", func(t *testing.T) {
		w := newGitWorld(t)
		res := w.judge(`cd "$X" && git status`)
		assert.NotEqual(t, Safe, res.Risk)
	})
	t.Run("environment changed first", func(t *testing.T) {
		w := newGitWorld(t)
		res := w.judge("export GIT_CONFIG_GLOBAL=/tmp/x; git status")
		assert.Contains(t, strings.Join(res.Reasons, " "), "GIT_CONFIG_GLOBAL")
	})
	t.Run("cd into another repository", func(t *testing.T) {
		w := newGitWorld(t)
		other := filepath.Join(filepath.Dir(w.repo), "other")
		w.git(t, filepath.Dir(w.repo), "init", "-q", other)
		w.git(t, other, "config", "core.fsmonitor", w.canary)
		assert.Equal(t, Safe, w.judge("git status").Risk)
		assert.NotEqual(t, Safe, w.judge("cd ../other && git status").Risk)
		assert.NotEqual(t, Safe, w.judge("git -C ../other status").Risk)
		assert.NotEqual(t, Safe, w.judge("env -C ../other git status").Risk, "env -C moves git")
		assert.Equal(t, Safe, w.judge("env -C ../other true; git status").Risk, "the move ends with env's command")
	})
	t.Run("wrapped", func(t *testing.T) {
		w := newGitWorld(t)
		w.config(t, "core.fsmonitor", w.canary)
		for _, c := range []string{"timeout 5 git status", "env git status", "nice git diff", "command git status"} {
			assert.NotEqual(t, Safe, w.judge(c).Risk, c)
		}
	})
	t.Run("alias of a builtin is ignored by git", func(t *testing.T) {
		w := newGitWorld(t)
		w.config(t, "alias.status", "!"+w.canary)
		require.False(t, w.ran(t, false, "status"))
		assert.Equal(t, Safe, w.judge("git status").Risk)
	})
	t.Run("boolean fsmonitor is git's own daemon", func(t *testing.T) {
		w := newGitWorld(t)
		w.config(t, "core.fsmonitor", "false")
		assert.Equal(t, Safe, w.judge("git status").Risk)
	})
	t.Run("attribute naming another driver", func(t *testing.T) {
		w := newGitWorld(t)
		w.config(t, "diff.tc.textconv", w.canary)
		w.write(t, ".gitattributes", "*.txt diff=other\n")
		require.False(t, w.ran(t, false, "diff"))
		assert.Equal(t, Safe, w.judge("git diff").Risk)
	})
	t.Run("attributes staged but deleted", func(t *testing.T) {
		w := newGitWorld(t)
		w.write(t, ".gitattributes", "*.txt diff=tc\n")
		w.git(t, w.repo, "add", ".gitattributes")
		require.NoError(t, os.Remove(filepath.Join(w.repo, ".gitattributes")))
		w.config(t, "diff.tc.textconv", w.canary)
		require.True(t, w.ran(t, false, "diff"), "git reads the staged .gitattributes")
		assert.NotEqual(t, Safe, w.judge("git diff").Risk)
	})

}
