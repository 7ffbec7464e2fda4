package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hub"
)

// hubCLIEnv is one isolated world for the hub commands: a configuration
// file and a short runtime directory of its own (socket paths are limited
// to about 100 bytes), set in the environment the CLI reads.
type hubCLIEnv struct {
	config  string
	runtime string
	socket  string
	state   string
}

func newHubCLIEnv(t *testing.T) *hubCLIEnv {
	t.Helper()
	runtime, err := os.MkdirTemp("", "eg")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(runtime) })
	require.NoError(t, os.Chmod(runtime, 0o700))
	root := t.TempDir()
	e := &hubCLIEnv{
		config:  filepath.Join(root, "exec-approvals.json"),
		runtime: runtime,
		socket:  filepath.Join(runtime, "execgate", "hub.sock"),
		state:   filepath.Join(root, "state"),
	}
	for _, k := range []string{"EXECGATE_AGENT", "EXECGATE_DEBUG", "CLAUDECODE", "GEMINI_CLI", "NO_COLOR"} {
		t.Setenv(k, "")
	}
	t.Setenv("EXECGATE_CONFIG", e.config)
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	t.Setenv("XDG_STATE_HOME", e.state)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "xdg-config"))
	return e
}

// startHub runs a hub in this process until the test ends (or stop).
func (e *hubCLIEnv) startHub(t *testing.T) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := hub.Listen(ctx, hub.ServerOptions{ConfigPath: e.config, Socket: e.socket})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				assert.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Error("hub did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// dial connects to the test's hub in role.
func (e *hubCLIEnv) dial(t *testing.T, role hub.Role, name string) *hub.Client {
	t.Helper()
	cfg, _, _, err := config.Load(e.config)
	require.NoError(t, err)
	require.NotEmpty(t, cfg.Socket.Token, "the hub created the token")
	c, err := hub.Dial(context.Background(), hub.DialOptions{Socket: e.socket, Token: cfg.Socket.Token, Role: role, Name: name})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// waitApprovers waits until n approvers are subscribed.
func (e *hubCLIEnv) waitApprovers(t *testing.T, n int) {
	t.Helper()
	c := e.dial(t, hub.RoleApprover, "probe")
	require.Eventually(t, func() bool {
		st, err := c.Status(context.Background())
		return err == nil && st.Approvers == n
	}, 10*time.Second, 10*time.Millisecond, "waiting for %d approvers", n)
}

// waitWatchers waits until n watchers are subscribed.
func (e *hubCLIEnv) waitWatchers(t *testing.T, n int) {
	t.Helper()
	c := e.dial(t, hub.RoleApprover, "probe")
	require.Eventually(t, func() bool {
		st, err := c.Status(context.Background())
		return err == nil && st.Watchers == n
	}, 10*time.Second, 10*time.Millisecond, "waiting for %d watchers", n)
}

// asked is an approval request in flight and, once answered, its answer.
type asked struct {
	done chan struct{}
	ans  hub.ApprovalAnswer
	err  error
}

// request asks the hub about command as a shim would, without waiting.
func (e *hubCLIEnv) request(t *testing.T, id, command string, proposals ...hub.SegmentProposal) *asked {
	t.Helper()
	c := e.dial(t, hub.RoleRequester, "shim")
	a := &asked{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.ans, a.err = c.Request(context.Background(), hub.ApprovalRequest{
			ID: id, Command: command, Cwd: "/work", AgentID: "claude-code", Risk: "dangerous",
			Reasons: []string{"deletes files"}, TimeoutMs: 30000, Proposals: proposals,
		})
	}()
	return a
}

func (a *asked) wait(t *testing.T) hub.ApprovalAnswer {
	t.Helper()
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the request was not answered")
	}
	require.NoError(t, a.err)
	return a.ans
}

// waitPending waits until the hub lists id.
func (e *hubCLIEnv) waitPending(t *testing.T, id string) {
	t.Helper()
	c := e.dial(t, hub.RoleApprover, "probe")
	require.Eventually(t, func() bool {
		list, err := c.List(context.Background())
		return err == nil && len(list) == 1 && list[0].ID == id
	}, 10*time.Second, 10*time.Millisecond)
}

// hubCLI runs execgate in this process with the hub commands present,
// whether or not the root command has them yet.
func hubCLI(t *testing.T, stdout io.Writer, args ...string) (code int, stderr string) {
	t.Helper()
	var errb bytes.Buffer
	g := &globals{stdin: strings.NewReader(""), stdout: stdout, stderr: &errb, getenv: os.Getenv}
	root := newRootCmd(g)
	if !hasCommand(root.Commands(), "approve") {
		root.AddCommand(hubCommands(g)...)
	}
	root.SetArgs(args)
	root.SetIn(g.stdin)
	root.SetOut(stdout)
	root.SetErr(&errb)
	err := root.Execute()
	var ec exitCodeError
	var ue usageError
	switch {
	case err == nil:
		return exitOK, errb.String()
	case errors.As(err, &ec):
		return ec.code, errb.String()
	case errors.As(err, &ue):
		fmt.Fprintf(&errb, "execgate: %v\n", err)
		return exitUsage, errb.String()
	}
	fmt.Fprintf(&errb, "execgate: %v\n", err)
	return exitError, errb.String()
}

func hasCommand(cmds []*cobra.Command, name string) bool {
	return slices.ContainsFunc(cmds, func(c *cobra.Command) bool { return c.Name() == name })
}

func hubRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out bytes.Buffer
	code, stderr = hubCLI(t, &out, args...)
	return code, out.String(), stderr
}

// oneLine asserts s is exactly one line.
func oneLine(t *testing.T, s string) {
	t.Helper()
	assert.Equal(t, 1, strings.Count(s, "\n"), "want one line: %q", s)
	assert.True(t, strings.HasSuffix(s, "\n"), "want one line: %q", s)
}

func TestHubCLINoHub(t *testing.T) {
	newHubCLIEnv(t)
	for _, args := range [][]string{
		{"pending"}, {"pending", "--json"}, {"resolve", "abcd", "deny"}, {"watch"}, {"watch", "--json"},
		{"session", "list"}, {"session", "clear", "x"}, {"session", "elevate", "x"},
	} {
		code, stdout, stderr := hubRun(t, args...)
		assert.Equal(t, exitNoHub, code, "%v", args)
		assert.Empty(t, stdout, "%v", args)
		oneLine(t, stderr)
		assert.Contains(t, stderr, "execgate: hub not running (socket ", "%v", args)
	}
	code, stdout, stderr := hubRun(t, "hub", "status")
	assert.Equal(t, exitNoHub, code)
	assert.Empty(t, stderr)
	oneLine(t, stdout)
	assert.Contains(t, stdout, "hub not running")
}

func TestHubCLIUsageErrors(t *testing.T) {
	newHubCLIEnv(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"resolve", "abcd"}, "resolve needs an ID and a decision"},
		{[]string{"resolve", "abcd", "allow"}, `resolve: decision "allow": want allow-once, allow-always or deny`},
		{[]string{"resolve", "abc", "deny"}, `resolve: ID "abc" is too short`},
		{[]string{"session"}, "session needs a subcommand"},
		{[]string{"session", "frob"}, `unknown session subcommand "frob"`},
		{[]string{"session", "set", "claude"}, "session set needs an AGENT and KEY=VALUE settings"},
		{[]string{"session", "set", "claude", "security=loose"}, `session set: security="loose": want deny, allowlist or full`},
		{[]string{"session", "set", "claude", "ask=never"}, `session set: ask="never": want off, on-miss or always`},
		{[]string{"session", "set", "claude", "askFallback=ask"}, `session set: askFallback="ask": want deny, allowlist or full`},
		{[]string{"session", "set", "claude", "timeout=3"}, `session set: "timeout=3" is not a setting`},
		{[]string{"session", "set", "claude", "ask=off", "ask=always"}, "session set: ask given twice"},
		{[]string{"session", "set", "claude", "ask=off", "--for", "-1m"}, "want a positive duration"},
		{[]string{"session", "set", "", "ask=off"}, `AGENT "": want a non-empty agent ID`},
		{[]string{"session", "elevate", "claude", "--for", "0s"}, "session elevate: --for 0s: want a positive duration"},
		{[]string{"session", "elevate", "a\x1bb"}, `AGENT "a\x1bb"`},
		{[]string{"session", "clear"}, "session clear needs one AGENT"},
		{[]string{"hub", "unit", "upstart"}, "hub unit needs one of: systemd, launchd"},
		{[]string{"hub", "frob"}, `hub (subcommands: status, stop, unit) takes no arguments, got "frob"`},
		{[]string{"pending", "x"}, "pending takes no arguments"},
	}
	for _, tt := range tests {
		code, stdout, stderr := hubRun(t, tt.args...)
		assert.Equal(t, exitUsage, code, "%q: %s", tt.args, stderr)
		assert.Empty(t, stdout)
		oneLine(t, stderr)
		assert.Contains(t, stderr, tt.want, "%q", tt.args)
	}
}

// TestHubCLIResolvePattern: resolve --pattern saves the chosen scope per
// segment, refuses one that was not proposed with the list of those that
// were, and records the CLI as the approver's kind.
func TestHubCLIResolvePattern(t *testing.T) {
	e := newHubCLIEnv(t)
	e.startHub(t)
	approver := e.dial(t, hub.RoleApprover, "approver")
	_, err := approver.Subscribe(context.Background())
	require.NoError(t, err)
	req := e.request(t, "beef00000001", "npm run test && rm -rf dist",
		hub.SegmentProposal{Text: "npm run test", Patterns: []string{"npm run test $", "npm run test **"}},
		hub.SegmentProposal{Text: "rm -rf dist", Patterns: []string{"rm -rf dist $"}})
	e.waitPending(t, "beef00000001")

	code, stdout, stderr := hubRun(t, "pending")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "always: npm run test $ | npm run test **")

	code, stdout, stderr = hubRun(t, "resolve", "beef", "allow-always", "--pattern", "npm **")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	oneLine(t, stderr)
	assert.Contains(t, stderr, `pattern "npm **" was not proposed; choose from "npm run test $", "npm run test **", "rm -rf dist $"`)
	code, _, stderr = hubRun(t, "resolve", "beef", "allow-once", "--pattern", "npm run test **")
	assert.Equal(t, exitUsage, code, stderr)

	code, stdout, stderr = hubRun(t, "resolve", "beef", "allow-always", "--pattern", "npm run test **")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "saves npm run test ** for npm run test\n")
	assert.Contains(t, stdout, "nothing saved for rm -rf dist\n")
	ans := req.wait(t)
	assert.Equal(t, []string{"npm run test **", ""}, ans.Patterns)
	require.NotNil(t, ans.Approver)
	assert.Equal(t, hub.KindCLI, ans.Approver.Kind)
}

func TestHubCLIPendingAndResolve(t *testing.T) {
	e := newHubCLIEnv(t)
	e.startHub(t)
	approver := e.dial(t, hub.RoleApprover, "approver")
	_, err := approver.Subscribe(context.Background())
	require.NoError(t, err)
	code, stdout, _ := hubRun(t, "pending")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "no pending approvals\n", stdout)
	code, stdout, _ = hubRun(t, "pending", "--json")
	assert.Equal(t, exitOK, code)
	assert.JSONEq(t, "[]", stdout)

	command := "rm -rf /tmp/x\x1b[2J\u202e"
	req := e.request(t, "f00dfeed01", command)
	e.waitPending(t, "f00dfeed01")

	code, stdout, stderr := hubRun(t, "pending")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 2)
	assert.Regexp(t, `^ID\s+AGE\s+LEFT\s+AGENT\s+RISK\s+COMMAND$`, lines[0])
	assert.Regexp(t, `^f00dfeed\s+\d+s\s+\d+s\s+claude-code\s+dangerous\s+rm -rf /tmp/x\\x1b\[2J\\u202e$`, lines[1])

	code, stdout, _ = hubRun(t, "pending", "--json")
	require.Equal(t, exitOK, code)
	var list []hub.Approval
	require.NoError(t, json.Unmarshal([]byte(stdout), &list))
	require.Len(t, list, 1)
	assert.Equal(t, command, list[0].Command, "JSON keeps the command as it is")

	code, stdout, stderr = hubRun(t, "resolve", "f00d", "allow-always")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "allowed always: f00dfeed rm -rf /tmp/x\\x1b[2J\\u202e\n", stdout)
	ans := req.wait(t)
	require.NotNil(t, ans.Decision)
	assert.Equal(t, hub.AllowAlways, *ans.Decision)
	assert.Contains(t, ans.ResolvedBy, "resolve@")

	// The first resolution won; a second finds nothing, with no effect.
	code, stdout, stderr = hubRun(t, "resolve", "f00dfeed01", "deny")
	assert.Equal(t, exitError, code)
	assert.Empty(t, stdout)
	oneLine(t, stderr)
	assert.Equal(t, "execgate: no pending approval f00dfeed01 (unknown, expired or already resolved)\n", stderr)
}

func TestHubCLIWatch(t *testing.T) {
	e := newHubCLIEnv(t)
	stop := e.startHub(t)
	for _, asJSON := range []bool{true, false} {
		out := &syncBuffer{}
		args := []string{"watch"}
		if asJSON {
			args = append(args, "--json")
		}
		done := make(chan [2]any, 1)
		go func() {
			code, stderr := hubCLI(t, out, args...)
			done <- [2]any{code, stderr}
		}()
		// watch is a watcher, never counted as someone who can answer
		// (issue 15: a shim waited on it for a minute).
		e.waitWatchers(t, 1)
		e.waitApprovers(t, 0)
		resolver := e.dial(t, hub.RoleApprover, "approve@pts/7")
		_, err := resolver.Subscribe(t.Context())
		require.NoError(t, err)
		e.waitApprovers(t, 1)
		id := fmt.Sprintf("watch%v0001", asJSON)
		req := e.request(t, id, "git push --force")
		e.waitPending(t, id)
		_, err = resolver.Resolve(context.Background(), id, hub.Deny)
		require.NoError(t, err)
		req.wait(t)
		require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") >= 2 }, 10*time.Second, 10*time.Millisecond)

		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if asJSON {
			var evs []watchLine
			for _, l := range lines {
				var ev watchLine
				require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
				evs = append(evs, ev)
			}
			assert.Equal(t, hub.EventRequested, evs[0].Event)
			assert.Equal(t, hub.EventResolved, evs[1].Event)
			var a hub.Approval
			require.NoError(t, json.Unmarshal(evs[1].Payload, &a))
			assert.Equal(t, id, a.ID)
			assert.Equal(t, hub.Deny, a.Decision)
			assert.Equal(t, "approve@pts/7", a.ResolvedBy)
			stop() // the hub goes away: watch says so and exits 3
			select {
			case r := <-done:
				assert.Equal(t, exitNoHub, r[0])
				assert.Equal(t, "execgate: the hub went away\n", r[1])
			case <-time.After(10 * time.Second):
				t.Fatal("watch did not end with the hub")
			}
			e.startHub(t)
		} else {
			assert.Regexp(t, `^\d\d:\d\d:\d\d requested watchfal claude-code dangerous \(\d+s left\): git push --force$`, lines[0])
			assert.Regexp(t, `^\d\d:\d\d:\d\d resolved watchfal deny by approve@pts/7 \([^)]+\): git push --force$`, lines[1])
		}
	}
}

func TestHubCLISession(t *testing.T) {
	e := newHubCLIEnv(t)
	e.startHub(t)
	shim := e.dial(t, hub.RoleRequester, "shim")
	ctx := context.Background()

	code, stdout, stderr := hubRun(t, "session", "set", "claude-code", "security=allowlist", "ask=always", "--for", "2h")
	require.Equal(t, exitOK, code, stderr)
	oneLine(t, stdout)
	assert.Regexp(t, `^session claude-code: security=allowlist ask=always \(until \d\d:\d\d:\d\d, (2h00m|1h59m) left, set by session@\S+\)$`,
		strings.TrimSpace(stdout))
	o, err := shim.Session(ctx, "claude-code")
	require.NoError(t, err)
	assert.Equal(t, "allowlist", o.Security)
	assert.Equal(t, "always", o.Ask)
	assert.InDelta(t, time.Now().Add(2*time.Hour).UnixMilli(), o.ExpiresAtMs, 60000)

	code, stdout, stderr = hubRun(t, "session", "elevate", "codex")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `^session codex: security=full ask=off \(elevated, until \d\d:\d\d:\d\d, (30m00s|29m59s) left, set by`, stdout)
	o, err = shim.Session(ctx, "codex")
	require.NoError(t, err)
	assert.True(t, o.Elevated)
	assert.InDelta(t, time.Now().Add(30*time.Minute).UnixMilli(), o.ExpiresAtMs, 60000)

	code, stdout, _ = hubRun(t, "session", "list")
	require.Equal(t, exitOK, code)
	assert.Len(t, strings.Split(strings.TrimSpace(stdout), "\n"), 2)
	assert.Contains(t, stdout, "claude-code: security=allowlist ask=always")
	assert.Contains(t, stdout, "codex: security=full ask=off (elevated")

	code, stdout, _ = hubRun(t, "session", "list", "--json")
	require.Equal(t, exitOK, code)
	var list []hub.SessionOverride
	require.NoError(t, json.Unmarshal([]byte(stdout), &list))
	assert.Len(t, list, 2)

	for _, agent := range []string{"codex", "claude-code"} {
		code, stdout, stderr = hubRun(t, "session", "clear", agent)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, "session "+agent+": cleared\n", stdout)
	}
	o, err = shim.Session(ctx, "codex")
	require.NoError(t, err)
	assert.Empty(t, o.Security)
	code, stdout, _ = hubRun(t, "session", "list")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "no session overrides\n", stdout)
	code, stdout, _ = hubRun(t, "session", "list", "--json")
	require.Equal(t, exitOK, code)
	assert.JSONEq(t, "[]", stdout)
}

func TestHubCLIStatusAndSecondHub(t *testing.T) {
	e := newHubCLIEnv(t)
	stop := e.startHub(t)
	approver := e.dial(t, hub.RoleApprover, "approver")
	_, err := approver.Subscribe(context.Background())
	require.NoError(t, err)

	code, stdout, stderr := hubRun(t, "hub", "status")
	require.Equal(t, exitOK, code, stderr)
	oneLine(t, stdout)
	assert.Regexp(t, fmt.Sprintf(`^hub running: pid %d, socket %s, up \d+s, 0 pending, 1 approvers$`, os.Getpid(),
		regexpQuote(e.socket)), strings.TrimSpace(stdout))

	// A second hub for the same user refuses to start, saying why.
	code, stdout, stderr = hubRun(t, "hub")
	assert.Equal(t, exitError, code)
	assert.Empty(t, stdout)
	oneLine(t, stderr)
	assert.Contains(t, stderr, fmt.Sprintf("execgate: hub already running (pid %d, socket %s)", os.Getpid(), e.socket))

	stop()
	code, stdout, _ = hubRun(t, "hub", "status")
	assert.Equal(t, exitNoHub, code)
	assert.Contains(t, stdout, "hub not running")
}

func regexpQuote(s string) string {
	r := strings.NewReplacer(".", `\.`, "(", `\(`, ")", `\)`, "+", `\+`)
	return r.Replace(s)
}

func TestHubCLIUnit(t *testing.T) {
	newHubCLIEnv(t)
	t.Setenv("HOME", "/home/u & co")
	code, stdout, stderr := hubRun(t, "hub", "unit", "systemd")
	require.Equal(t, exitOK, code, stderr)
	var execStart string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "ExecStart="); ok {
			execStart = v
		}
	}
	assert.Contains(t, stdout, "[Service]\nType=simple\n")
	assert.Contains(t, stdout, "WantedBy=default.target")
	// EXECGATE_CONFIG is set in this environment and the service would not
	// see it: the unit names the file.
	assert.Regexp(t, `^"/\S+" "hub" "--config" ".*exec-approvals\.json"$`, execStart)

	code, stdout, stderr = hubRun(t, "hub", "unit", "launchd")
	require.Equal(t, exitOK, code, stderr)
	var plist struct {
		Dict struct {
			Keys    []string `xml:"key"`
			Strings []string `xml:"string"`
			Args    []string `xml:"array>string"`
		} `xml:"dict"`
	}
	require.NoError(t, xml.Unmarshal([]byte(stdout), &plist), stdout)
	assert.Equal(t, "com.github.execgate.hub", plist.Dict.Strings[0])
	require.Len(t, plist.Dict.Args, 4)
	assert.Equal(t, []string{"hub", "--config"}, plist.Dict.Args[1:3])
	assert.Contains(t, plist.Dict.Strings, "/home/u & co/Library/Logs/execgate-hub.log")
}

func TestSystemdQuote(t *testing.T) {
	assert.Equal(t, `"/opt/my dir/execgate"`, systemdQuote("/opt/my dir/execgate"))
	assert.Equal(t, `"a\\b\"c%%d$$e"`, systemdQuote(`a\b"c%d$e`))
}

func TestApproveNeedsTerminal(t *testing.T) {
	newHubCLIEnv(t)
	code, stdout, stderr := hubRun(t, "approve")
	assert.Equal(t, exitError, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "execgate: approve needs a terminal; in scripts use execgate pending, resolve and watch\n", stderr)
}
