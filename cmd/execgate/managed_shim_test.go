package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hookproto"
	"github.com/execgate/execgate/hub"
)

// These tests run the real binaries, built with their managed policy file
// moved (at link time, the only way to move it) into a root-owned
// directory of the test's own, against a real git repository whose push
// would really reach a real (local, bare) remote.

var managedBuild struct {
	once          sync.Once
	dir, managed  string
	err           error
	out           []byte
	root, workdir string
}

// managedShimDir builds execgate and execgate-shell once with the managed
// policy at a path of the test's own, and returns the directory (laid out
// as shimDir's) and that path. The tests that use it must not run in
// parallel: they share the one managed file.
func managedShimDir(t *testing.T) (dir, managed string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: a managed policy must be owned by root")
	}
	b := &managedBuild
	b.once.Do(func() {
		if b.root, b.err = os.MkdirTemp("", "execgate-managed-"); b.err != nil {
			return
		}
		b.managed = filepath.Join(b.root, "etc", "execgate", "managed.json")
		if b.err = os.MkdirAll(filepath.Dir(b.managed), 0o755); b.err != nil {
			return
		}
		b.dir = filepath.Join(b.root, "bin")
		ldflags := "-X github.com/execgate/execgate/config.managedFileOverride=" + b.managed
		for bin, pkg := range map[string]string{"execgate": ".", "execgate-shell": "../execgate-shell"} {
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", filepath.Join(b.dir, bin), pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if b.out, b.err = cmd.CombinedOutput(); b.err != nil {
				return
			}
		}
		if b.err = os.Mkdir(filepath.Join(b.dir, "shims"), 0o755); b.err != nil {
			return
		}
		for _, name := range []string{"bash", "sh"} {
			if b.err = os.Symlink("../execgate-shell", filepath.Join(b.dir, "shims", name)); b.err != nil {
				return
			}
		}
	})
	require.NoError(t, b.err, "build execgate with a managed path: %s", b.out)
	return b.dir, b.managed
}

// managedWorld is a shimEnv running the managed build, a git repository
// with a bare remote in its work directory, and the managed file.
type managedWorld struct {
	*shimEnv
	managed, remote string
}

// teamUser is a user's policy that allows every git command.
const teamUser = `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny"},
  "agents": {"*": {"allowlist": [{"pattern": "git **"}]}}}`

// noPush is the administrator's: no git push, for anyone, and no agent
// may run unasked what is not allowed.
const noPush = `{"version": 1, "defaults": {"security": "allowlist", "askFallback": "deny"},
  "agents": {"*": {"denylist": [{"pattern": "git push **", "id": "no-push"}]}}}`

func newManagedWorld(t *testing.T, user string) *managedWorld {
	t.Helper()
	realBash(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, managed := managedShimDir(t)
	e := newShimEnv(t, user)
	e.dir = dir
	w := &managedWorld{shimEnv: e, managed: managed, remote: filepath.Join(t.TempDir(), "remote.git")}
	t.Cleanup(func() { os.Remove(managed) })
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, e.env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git(e.work, "init", "-q", "--bare", w.remote)
	git(e.work, "init", "-q", "-b", "main")
	git(e.work, "config", "user.email", "dev@example.com")
	git(e.work, "config", "user.name", "Dev")
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "README"), []byte("hello\n"), 0o644))
	git(e.work, "add", "README")
	git(e.work, "commit", "-q", "-m", "first")
	git(e.work, "remote", "add", "origin", w.remote)
	return w
}

// setManaged installs the managed file as an administrator would: root's,
// mode 0644.
func (w *managedWorld) setManaged(t *testing.T, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(w.managed, []byte(text), 0o644))
	require.NoError(t, os.Chmod(w.managed, 0o644))
	require.NoError(t, os.Chown(w.managed, 0, 0))
}

// pushed reports whether the remote has the branch: whether a push ran.
func (w *managedWorld) pushed(t *testing.T) bool {
	t.Helper()
	cmd := exec.Command("git", "--git-dir", w.remote, "rev-parse", "--verify", "-q", "refs/heads/main")
	cmd.Env = w.env
	return cmd.Run() == nil
}

func (w *managedWorld) shimRun(t *testing.T, src string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	return runOutcome(t, w.command(ctx, w.shim("bash"), "bash", "-c", src), "")
}

func (w *managedWorld) cli(t *testing.T, stdin string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	return runOutcome(t, w.command(ctx, filepath.Join(w.dir, "execgate"), append([]string{"execgate"}, args...)...), stdin)
}

const push = "git push -q origin main"

// TestManagedDenyBeatsUserAllowlistShim: the user's `git **` lets git push
// run, until the managed file denies it; then the shim refuses it with one
// line naming the entry, and the remote never gets the branch. Other git
// commands still run.
func TestManagedDenyBeatsUserAllowlistShim(t *testing.T) {
	w := newManagedWorld(t, teamUser)
	w.setManaged(t, noPush)
	o := w.shimRun(t, push)
	denyLine(t, o, "execgate: denied: ")
	assert.Contains(t, o.stderr, `"git push **"`)
	assert.False(t, w.pushed(t), "the push ran")
	o = w.shimRun(t, "git status --short && git log --oneline | wc -l")
	assert.Equal(t, 0, o.status, "stderr %q", o.stderr)
	assert.Equal(t, "1\n", o.stdout)

	// policy get names the managed file; check refuses as the shim does.
	o = w.cli(t, "", "check", "--", push)
	assert.True(t, strings.HasPrefix(o.stdout, "deny: "), o.stdout)
	o = w.cli(t, "", "policy", "get")
	assert.Contains(t, o.stdout, "a managed policy applies ("+w.managed+")")

	// Without it, the same user policy pushes: the test can tell.
	require.NoError(t, os.Remove(w.managed))
	o = w.shimRun(t, push)
	assert.Equal(t, 0, o.status, "stderr %q", o.stderr)
	assert.True(t, w.pushed(t), "the push did not run without the managed file")
}

// TestManagedDenyBeatsUserAllowlistHooks: each agent's hook refuses the
// push in its own protocol.
func TestManagedDenyBeatsUserAllowlistHooks(t *testing.T) {
	w := newManagedWorld(t, teamUser)
	w.env = append(w.env, "XDG_RUNTIME_DIR="+shortTemp(t)) // no hub of the machine's
	for _, a := range hookproto.All() {
		t.Run(a.Name, func(t *testing.T) {
			w.env = withoutAgent(w.env)
			w.setManaged(t, noPush)
			o := w.cli(t, string(withCommand(t, a.Name, w.work, push)), "hook", a.Name)
			assert.Equal(t, "deny", answerOf(t, a.Name, o))
			assert.Contains(t, o.stdout, `git push **`)
			require.NoError(t, os.Remove(w.managed))
			o = w.cli(t, string(withCommand(t, a.Name, w.work, push)), "hook", a.Name)
			assert.Contains(t, []string{"allow", "silent"}, answerOf(t, a.Name, o), "without the managed file the user's git ** allows it")
		})
	}
}

func withoutAgent(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "EXECGATE_AGENT=") {
			out = append(out, kv)
		}
	}
	return out
}

func shortTemp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "eg")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startHub starts `execgate hub` for w and waits until it answers.
func (w *managedWorld) startHub(t *testing.T) *hubWorld {
	t.Helper()
	runtime := shortTemp(t)
	w.env = append(w.env, "XDG_RUNTIME_DIR="+runtime)
	hw := &hubWorld{shimEnv: w.shimEnv, socket: filepath.Join(runtime, "execgate", "hub.sock")}
	hw.start(t)
	return hw
}

// TestManagedDenyBeatsHub: through the hub, an approver can neither
// elevate the agent past the managed floor (the hub says why) nor make the
// push run by writing a looser user policy; the push is refused without
// anyone being asked.
func TestManagedDenyBeatsHub(t *testing.T) {
	w := newManagedWorld(t, teamUser)
	w.setManaged(t, noPush)
	hw := w.startHub(t)
	a := hw.approver(t)

	_, err := a.c.SetSession(t.Context(), hub.SessionOverride{AgentID: "test-agent", Elevated: true,
		ExpiresAtMs: time.Now().Add(time.Minute).UnixMilli()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the managed policy "+w.managed+" does not let a session override loosen agent test-agent past its floor: security=full (floor allowlist)")
	o := w.cli(t, "", "session", "elevate", "test-agent", "--for", "10m")
	assert.NotEqual(t, 0, o.status)
	assert.Contains(t, o.stderr, "past its floor")

	// A looser policy written through the hub (as the web's policy editor
	// does) is saved, and still does not let the push run.
	snap, err := a.c.ConfigGet(t.Context())
	require.NoError(t, err)
	_, err = a.c.ConfigSet(t.Context(), []byte(`{"version": 1, "defaults": {"security": "full", "ask": "off"},
	  "agents": {"*": {"allowlist": [{"pattern": "git push **"}]}}}`), snap.Hash)
	require.NoError(t, err)
	_, done := hw.runShim(t, push)
	denyLine(t, wait(t, done), "execgate: denied: ")
	assert.False(t, w.pushed(t))
	select {
	case ev := <-a.events:
		assert.NotEqual(t, hub.EventRequested, ev.Name, "nobody is asked about a managed denial")
	default:
	}
	o = w.cli(t, "", "policy", "get")
	assert.Regexp(t, `security +allowlist +\(managed; configured full from defaults\)`, o.stdout)
	assert.Contains(t, o.stdout, `overruled: defaults.security "full" is looser than the managed policy allows; "allowlist" applies`)

	// A session override that stays within the floor is still fine.
	_, err = a.c.SetSession(t.Context(), hub.SessionOverride{AgentID: "test-agent", Ask: "always"})
	require.NoError(t, err)
}

// TestManagedDenyBeatsWeb: the web approver (`execgate web`, a real
// process) relays the managed refusal of an elevation to the page, and
// the push stays refused.
func TestManagedDenyBeatsWeb(t *testing.T) {
	w := newManagedWorld(t, teamUser)
	w.setManaged(t, noPush)
	hw := w.startHub(t)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	web := w.command(ctx, filepath.Join(w.dir, "execgate"), "execgate", "web", "--port", "0", "--no-open")
	stdout, err := web.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, web.Start())
	t.Cleanup(func() {
		web.Process.Signal(syscall.SIGTERM)
		web.Wait()
	})
	var login string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "execgate web: open "); ok {
			login = u
			break
		}
	}
	require.NotEmpty(t, login, "no login link printed")
	go func() {
		for sc.Scan() {
		}
	}()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(login)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	base := strings.SplitN(login, "/login", 2)[0]
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws",
		&websocket.DialOptions{HTTPClient: c, HTTPHeader: http.Header{"Origin": {base}}})
	require.NoError(t, err)
	defer ws.CloseNow()

	type reply struct {
		Type  string `json:"type"`
		Ref   int    `json:"ref"`
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		Hub   *struct {
			Connected bool `json:"connected"`
		} `json:"hub"`
	}
	// The tab reaches the hub on its own; wait until it says it has.
	hctx, hcancel := context.WithTimeout(ctx, 10*time.Second)
	defer hcancel()
	for {
		var r reply
		require.NoError(t, wsjson.Read(hctx, ws, &r), "the page never reached the hub")
		if r.Hub != nil && r.Hub.Connected {
			break
		}
	}
	call := func(op map[string]any) reply {
		t.Helper()
		require.NoError(t, wsjson.Write(ctx, ws, op))
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		defer rcancel()
		for {
			var r reply
			require.NoError(t, wsjson.Read(rctx, ws, &r))
			if r.Type == "reply" && r.Ref == op["ref"] {
				return r
			}
		}
	}
	r := call(map[string]any{"op": "session.elevate", "ref": 1, "agent": "test-agent", "minutes": 10})
	assert.False(t, r.OK)
	assert.Contains(t, r.Error, "does not let a session override loosen agent test-agent past its floor")
	r = call(map[string]any{"op": "session.set", "ref": 2, "agent": "test-agent", "askFallback": "full"})
	assert.False(t, r.OK)
	assert.Contains(t, r.Error, "askFallback=full (floor deny)")

	_, done := hw.runShim(t, push)
	denyLine(t, wait(t, done), "execgate: denied: ")
	assert.False(t, w.pushed(t))
}

// TestManagedUnusableRefusesEverything: a managed file that does not parse,
// or that someone other than root could have written, refuses every
// command, the harmless ones too, with one line naming the file and who
// can fix it.
func TestManagedUnusableRefusesEverything(t *testing.T) {
	w := newManagedWorld(t, teamUser)
	for _, tt := range []struct {
		name, text string
		owner      int
		mode       os.FileMode
		want       string
	}{
		{"corrupt", `{"version": 1, "agents": {"*": {"denylist": [`, 0, 0o644, "unexpected end of input"},
		{"not root's", noPush, 65534, 0o644, "is owned by uid 65534, not root"},
		{"others may write", noPush, 0, 0o646, "others may write it (mode 0646)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w.setManaged(t, tt.text)
			require.NoError(t, os.Chmod(w.managed, tt.mode))
			require.NoError(t, os.Chown(w.managed, tt.owner, tt.owner))
			o := w.shimRun(t, "echo hello")
			denyLine(t, o, "execgate: managed policy "+w.managed+": ")
			assert.Contains(t, o.stderr, tt.want)
			assert.True(t, strings.HasSuffix(o.stderr, "ask an administrator to fix it ('execgate config check' shows why)\n"), o.stderr)
			o = w.cli(t, string(withCommand(t, "claude", w.work, "echo hello")), "hook", "claude")
			assert.Equal(t, "deny", answerOf(t, "claude", o))
			o = w.cli(t, "", "config", "check")
			assert.Equal(t, 1, o.status)
			assert.Contains(t, o.stderr, "every command is refused until an administrator fixes it")
		})
	}
}

// TestManagedPolicySetReportsOverruled: setting a value the managed floor
// does not let apply is saved (the file is the user's) and said at once.
func TestManagedPolicySetReportsOverruled(t *testing.T) {
	w := newManagedWorld(t, teamUser)
	w.setManaged(t, noPush)
	o := w.cli(t, "", "policy", "set", "security=full")
	require.Equal(t, 0, o.status, o.stderr)
	assert.Equal(t, "defaults: security = full (was allowlist)\n"+
		`overruled: defaults.security "full" is looser than the managed policy allows; "allowlist" applies (`+w.managed+")\n", o.stdout)
	var view struct {
		Policy  struct{ Security string }
		Sources map[string]string
		Managed string
	}
	o = w.cli(t, "", "policy", "get", "--json")
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &view), o.stdout)
	assert.Equal(t, "allowlist", view.Policy.Security)
	assert.Equal(t, "managed; configured full from defaults", view.Sources["security"])
	assert.Equal(t, w.managed, view.Managed)
}
