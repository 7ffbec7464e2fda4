package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/shim"
)

// These tests run a real hub process (`execgate hub`) and real shims,
// with scripted approvers speaking the protocol over the hub's socket.

// hubWorld is a shimEnv with a hub of its own.
type hubWorld struct {
	*shimEnv
	socket string
	hub    *exec.Cmd
	exited chan struct{}
}

// askConfig makes every `rm` ask (allowlist security, ask on miss) with the
// given askFallback and approval timeout.
func askConfig(fallback string, timeoutMs int) string {
	return `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "` + fallback +
		`", "timeoutMs": ` + itoa(timeoutMs) + `}}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// newHubWorld starts a hub for a fresh shimEnv and waits until it answers.
func newHubWorld(t *testing.T, config string) *hubWorld {
	t.Helper()
	realBash(t)
	e := newShimEnv(t, config)
	// A short runtime directory: socket paths are limited to ~100 bytes.
	runtime, err := os.MkdirTemp("", "eg")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(runtime) })
	e.env = append(e.env, "XDG_RUNTIME_DIR="+runtime)
	w := &hubWorld{shimEnv: e, socket: filepath.Join(runtime, "execgate", "hub.sock")}
	w.start(t)
	return w
}

func (w *hubWorld) start(t *testing.T) {
	t.Helper()
	w.hub = exec.Command(filepath.Join(w.dir, "execgate"), "hub")
	w.hub.Env = w.env
	w.hub.Dir = w.work
	// The hub writes its logs from exec's copying goroutine while the test
	// reads them: a locked buffer, not a strings.Builder.
	logs := &lockedBuffer{}
	w.hub.Stdout, w.hub.Stderr = logs, logs
	require.NoError(t, w.hub.Start())
	w.exited = make(chan struct{})
	go func() { w.hub.Wait(); close(w.exited) }()
	t.Cleanup(func() {
		w.hub.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.exited:
		case <-time.After(5 * time.Second):
			w.hub.Process.Kill()
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := w.dial(t, hub.RoleApprover)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-w.exited:
			t.Fatalf("hub exited: %s", logs.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "hub did not answer: %v\n%s", err, logs.String())
		time.Sleep(20 * time.Millisecond)
	}
}

// dial connects with the token the hub keeps in the configuration.
func (w *hubWorld) dial(t *testing.T, role hub.Role) (*hub.Client, error) {
	t.Helper()
	cfg, _, _, err := config.Load(w.config)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	return hub.Dial(ctx, hub.DialOptions{Socket: w.socket, Token: cfg.Socket.Token, Role: role, Name: "test-" + string(role)})
}

// approver is a scripted approver subscribed to the hub.
type approver struct {
	c      *hub.Client
	events <-chan hub.Event
}

func (w *hubWorld) approver(t *testing.T) *approver {
	t.Helper()
	c, err := w.dial(t, hub.RoleApprover)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	ev, err := c.Subscribe(t.Context())
	require.NoError(t, err)
	return &approver{c: c, events: ev}
}

// next waits for the next event named name, skipping others.
func (a *approver) next(t *testing.T, name string) hub.Approval {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-a.events:
			require.True(t, ok, "event stream closed waiting for %s", name)
			if ev.Name != name {
				continue
			}
			var ap hub.Approval
			require.NoError(t, json.Unmarshal(ev.Payload, &ap))
			return ap
		case <-timeout:
			t.Fatalf("no %s event", name)
		}
	}
}

// runShim starts a shim running src; the result arrives on the channel.
func (w *hubWorld) runShim(t *testing.T, src string, env ...string) (*exec.Cmd, <-chan outcome) {
	t.Helper()
	cmd := w.command(t.Context(), w.shim("bash"), "bash", "-c", src)
	cmd.Env = append(cmd.Env, env...)
	done := make(chan outcome, 1)
	started := make(chan struct{})
	go func() {
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Start()
		close(started)
		if err != nil {
			done <- outcome{stderr: err.Error(), status: -2}
			return
		}
		cmd.Wait()
		done <- outcome{stdout: out.String(), stderr: errb.String(), status: cmd.ProcessState.ExitCode()}
	}()
	<-started
	return cmd, done
}

func wait(t *testing.T, done <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(20 * time.Second):
		t.Fatal("shim did not finish")
	}
	return outcome{}
}

const marker = "ran.marker"

// asking is a command that needs approval and leaves a file when it runs:
// the file is outside the workspace, so no sandbox would let it run
// unasked (a command that only touches the workspace runs confined).
func asking(w *hubWorld) string {
	return "touch " + w.markerPath() + " && rm -f ./nothing-here && echo done"
}

// markerPath is in the home directory, not in the workspace (a file in a
// temporary directory would be a scratch file the sandbox grants).
func (w *hubWorld) markerPath() string { return filepath.Join(envValue(w.env, "HOME"), marker) }

func (w *hubWorld) ran() bool {
	_, err := os.Stat(w.markerPath())
	return err == nil
}

func TestHubApproveOnceAndDeny(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 30000))
	a := w.approver(t)
	for _, tt := range []struct {
		decision string
		status   int
		ran      bool
	}{{hub.AllowOnce, 0, true}, {hub.Deny, 126, false}} {
		t.Run(tt.decision, func(t *testing.T) {
			os.Remove(w.markerPath())
			_, done := w.runShim(t, asking(w))
			req := a.next(t, hub.EventRequested)
			assert.Equal(t, asking(w), req.Command)
			assert.Equal(t, "test-agent", req.AgentID)
			assert.NotEmpty(t, req.Reasons)
			_, err := a.c.Resolve(t.Context(), req.ID, tt.decision)
			require.NoError(t, err)
			o := wait(t, done)
			assert.Equal(t, tt.status, o.status, "stderr %q", o.stderr)
			assert.Equal(t, tt.ran, w.ran())
			if !tt.ran {
				denyLine(t, o, "execgate: denied: refused by the user (hub)")
				return
			}
			assert.Equal(t, "done\n", o.stdout)
			// The shim reports the run to the hub's subscribers.
			assert.Equal(t, req.ID, a.next(t, hub.EventStarted).ID)
			assert.Equal(t, req.ID, a.next(t, hub.EventFinished).ID)
		})
	}
}

// TestHubAllowAlwaysPersists: without a chosen scope, allow-always saves
// the narrowest, the exact command (issue 15: `rm -f ./a-file` saved
// `rm **`, which let every later rm through); the audit log says who
// decided, once or always, and what was saved.
func TestHubAllowAlwaysPersists(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 30000))
	w.unconfined() // rm in the workspace would run confined, unasked
	a := w.approver(t)
	_, done := w.runShim(t, "rm -f ./a-file")
	req := a.next(t, hub.EventRequested)
	require.Len(t, req.Proposals, 1)
	assert.Equal(t, []string{"rm -f ./a-file $"}, req.Proposals[0].Patterns)
	_, err := a.c.Resolve(t.Context(), req.ID, hub.AllowAlways)
	require.NoError(t, err)
	require.Equal(t, 0, wait(t, done).status)

	assert.Equal(t, []string{"rm -f ./a-file $"}, allowlisted(t, w))
	evs := w.readAudit()
	require.NotEmpty(t, evs)
	assert.Equal(t, shim.ScopeAlways, evs[0].Scope)
	assert.Equal(t, []string{"rm -f ./a-file $"}, evs[0].Allowlisted)
	require.NotNil(t, evs[0].Approver)
	assert.Equal(t, os.Getuid(), evs[0].Approver.Uid)
	assert.NotEmpty(t, evs[0].Approver.Host)

	// The same command runs without asking; another rm is asked again
	// (and, with nobody to ask, refused).
	a.c.Close()
	_, done = w.runShim(t, "rm -f ./a-file")
	assert.Equal(t, 0, wait(t, done).status)
	_, done = w.runShim(t, "rm -f ./another-file")
	assert.Equal(t, 126, wait(t, done).status)
}

// TestHubAllowAlwaysChosenScope: the approver's chosen scope is what the
// shim saves, and one the engine did not propose is refused by the hub.
func TestHubAllowAlwaysChosenScope(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 30000))
	// git pack-refs: not read-only, and no option of it reaches
	// elsewhere, so a wildcard is proposed (git init's --template and
	// --separate-git-dir reach other directories: it gets none).
	out, err := exec.Command("git", "init", "-q", w.work).CombinedOutput()
	require.NoError(t, err, "%s", out)
	w.unconfined() // writing .git only, it would run confined, unasked
	a := w.approver(t)
	_, done := w.runShim(t, "git pack-refs --all")
	req := a.next(t, hub.EventRequested)
	require.Len(t, req.Proposals, 1)
	assert.Equal(t, []string{"git pack-refs --all $", "git pack-refs **"}, req.Proposals[0].Patterns)
	_, err = a.c.ResolveWith(t.Context(), hub.ResolveParams{ID: req.ID, Decision: hub.AllowAlways, Patterns: []string{"git **"}})
	require.Error(t, err, "a scope wider than proposed")
	_, err = a.c.ResolveWith(t.Context(), hub.ResolveParams{ID: req.ID, Decision: hub.AllowAlways, Patterns: []string{"git pack-refs **"}})
	require.NoError(t, err)
	require.Equal(t, 0, wait(t, done).status)
	assert.Equal(t, []string{"git pack-refs **"}, allowlisted(t, w))
	a.c.Close()
	_, done = w.runShim(t, "git pack-refs --no-prune")
	assert.Equal(t, 0, wait(t, done).status)
}

// allowlisted is the test agent's allowlist patterns.
func allowlisted(t *testing.T, w *hubWorld) []string {
	t.Helper()
	cfg, _, _, err := config.Load(w.config)
	require.NoError(t, err)
	var patterns []string
	for _, e := range cfg.Resolve("test-agent").Allowlist {
		patterns = append(patterns, e.Pattern)
	}
	return patterns
}

func TestHubExpiryAppliesFallback(t *testing.T) {
	for _, tt := range []struct {
		fallback string
		status   int
	}{{"deny", 126}, {"full", 0}} {
		t.Run(tt.fallback, func(t *testing.T) {
			w := newHubWorld(t, askConfig(tt.fallback, 1000))
			a := w.approver(t)
			start := time.Now()
			_, done := w.runShim(t, asking(w))
			a.next(t, hub.EventRequested)
			a.next(t, hub.EventExpired)
			o := wait(t, done)
			assert.Less(t, time.Since(start), 10*time.Second)
			assert.Equal(t, tt.status, o.status, "stderr %q", o.stderr)
			assert.Equal(t, tt.status == 0, w.ran())
			if tt.status != 0 {
				denyLine(t, o, "execgate: denied: approval timed out after 1s (askFallback=deny)")
			}
		})
	}
}

func TestHubFirstResolutionWins(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 30000))
	a1, a2 := w.approver(t), w.approver(t)
	_, done := w.runShim(t, asking(w))
	req := a1.next(t, hub.EventRequested)
	assert.Equal(t, req.ID, a2.next(t, hub.EventRequested).ID)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, d := range []struct {
		a        *approver
		decision string
	}{{a1, hub.AllowOnce}, {a2, hub.Deny}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = d.a.c.Resolve(context.Background(), req.ID, d.decision)
		}()
	}
	wg.Wait()
	var notFound int
	for _, err := range errs {
		var eb *hub.ErrorBody
		if errors.As(err, &eb) && eb.Code == hub.ErrCodeNotFound {
			notFound++
		} else {
			require.NoError(t, err)
		}
	}
	assert.Equal(t, 1, notFound, "exactly one resolution loses")
	o := wait(t, done)
	resolved := a1.next(t, hub.EventResolved)
	assert.Equal(t, resolved.Decision == hub.AllowOnce, o.status == 0, "the shim follows the winner")
	assert.Equal(t, o.status == 0, w.ran())
}

func TestHubShimKilledWithdraws(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 30000))
	a := w.approver(t)
	cmd, done := w.runShim(t, asking(w))
	req := a.next(t, hub.EventRequested)
	require.NoError(t, cmd.Process.Kill())
	wait(t, done)
	assert.Equal(t, req.ID, a.next(t, hub.EventWithdrawn).ID)
	list, err := a.c.List(t.Context())
	require.NoError(t, err)
	assert.Empty(t, list)
	_, err = a.c.Resolve(t.Context(), req.ID, hub.AllowOnce)
	var eb *hub.ErrorBody
	require.ErrorAs(t, err, &eb)
	assert.Equal(t, hub.ErrCodeNotFound, eb.Code)
	assert.False(t, w.ran())
}

// TestHubKilledFailsClosed: the hub dies while a shim waits. The shim must
// notice within a second and refuse, even with askFallback=full.
func TestHubKilledFailsClosed(t *testing.T) {
	w := newHubWorld(t, askConfig("full", 30000))
	a := w.approver(t)
	_, done := w.runShim(t, asking(w))
	a.next(t, hub.EventRequested)
	killed := time.Now()
	require.NoError(t, w.hub.Process.Kill())
	o := wait(t, done)
	assert.Less(t, time.Since(killed), time.Second, "the shim noticed the dead hub")
	assert.Equal(t, 126, o.status, "stderr %q", o.stderr)
	assert.Contains(t, o.stderr, "asking failed")
	assert.False(t, w.ran())
}

func TestHubApproverDisconnects(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 30000))
	a1, a2 := w.approver(t), w.approver(t)
	_, done := w.runShim(t, asking(w))
	req := a1.next(t, hub.EventRequested)
	a1.c.Close()
	time.Sleep(100 * time.Millisecond)
	list, err := a2.c.List(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1, "the request stays for the other approver")
	assert.Equal(t, req.ID, list[0].ID)
	_, err = a2.c.Resolve(t.Context(), req.ID[:6], hub.AllowOnce)
	require.NoError(t, err)
	assert.Equal(t, 0, wait(t, done).status)
	assert.True(t, w.ran())
}

// TestHubNoApprover: with nobody subscribed the hub answers at once and the
// shim applies askFallback immediately instead of waiting out the timeout.
func TestHubNoApprover(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 60000))
	start := time.Now()
	_, done := w.runShim(t, asking(w))
	o := wait(t, done)
	assert.Less(t, time.Since(start), 5*time.Second)
	denyLine(t, o, "execgate: denied: ")
	assert.Contains(t, o.stderr, "nobody to ask")
	assert.False(t, w.ran())
}

// TestHubSessionOverride: an approver's session override loosens an
// agent's policy; the agent's own environment can still only tighten it.
func TestHubSessionOverride(t *testing.T) {
	w := newHubWorld(t, askConfig("deny", 60000))
	a := w.approver(t)
	_, err := a.c.SetSession(t.Context(), hub.SessionOverride{AgentID: "test-agent", Elevated: true,
		ExpiresAtMs: time.Now().Add(time.Minute).UnixMilli()})
	require.NoError(t, err)
	_, done := w.runShim(t, asking(w))
	o := wait(t, done)
	assert.Equal(t, 0, o.status, "elevated: runs without asking; stderr %q", o.stderr)

	// check and policy get show what the shim applies, and say why.
	cli := func(args ...string) (string, string) {
		cmd := w.command(t.Context(), filepath.Join(w.dir, "execgate"), append([]string{"execgate"}, args...)...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run()
		return out.String(), errb.String()
	}
	out, errOut := cli("check", "--", asking(w))
	assert.True(t, strings.HasPrefix(out, "allow: "), "check under the elevated session: %q", out)
	assert.Contains(t, errOut, "the hub's session override for test-agent applies: elevated")
	out, _ = cli("policy", "get")
	assert.Regexp(t, `security +full +\(session; configured allowlist from defaults\)`, out)
	assert.Contains(t, out, "the hub's session override for test-agent applies: elevated")

	_, done = w.runShim(t, asking(w), "EXECGATE_SECURITY=deny")
	denyLine(t, wait(t, done), "execgate: denied: ")

	// Another agent is not elevated, nor this one once it is cleared: they
	// ask.
	askedAndDenied := func(env ...string) {
		t.Helper()
		_, done := w.runShim(t, asking(w), env...)
		req := a.next(t, hub.EventRequested)
		_, err := a.c.Resolve(t.Context(), req.ID, hub.Deny)
		require.NoError(t, err)
		denyLine(t, wait(t, done), "execgate: denied: refused by the user (hub)")
	}
	askedAndDenied("EXECGATE_AGENT=other")
	require.NoError(t, a.c.ClearSession(t.Context(), "test-agent"))
	askedAndDenied()
}

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestHubWaitingLineOnTerminal (issue 15): a shim whose stderr is a
// terminal a person watches says that the hub is waiting for an approver
// and, afterwards, who decided; with an agent's variables in the
// environment (the terminal is the agent's) it says nothing.
func TestHubWaitingLineOnTerminal(t *testing.T) {
	for _, agent := range []bool{false, true} {
		t.Run(fmt.Sprint("agent=", agent), func(t *testing.T) {
			w := newHubWorld(t, askConfig("deny", 30000))
			a := w.approver(t)
			ptmx, tty, err := pty.Open()
			require.NoError(t, err)
			defer ptmx.Close()
			var screen syncBuffer
			go io.Copy(&screen, ptmx)
			cmd := w.command(t.Context(), w.shim("bash"), "bash", "-c", asking(w))
			if agent {
				cmd.Env = append(cmd.Env, "CLAUDECODE=1")
			}
			cmd.Stderr = tty
			require.NoError(t, cmd.Start())
			defer tty.Close()
			req := a.next(t, hub.EventRequested)
			if !agent {
				require.Eventually(t, func() bool { return strings.Contains(screen.String(), "waiting for an approver (1 connected)…") },
					10*time.Second, 10*time.Millisecond, "screen %q", screen.String())
			}
			_, err = a.c.Resolve(t.Context(), req.ID, hub.AllowOnce)
			require.NoError(t, err)
			require.NoError(t, cmd.Wait())
			// Everything the shim wrote is on screen once this is.
			_, err = tty.WriteString("END-OF-SHIM\n")
			require.NoError(t, err)
			require.Eventually(t, func() bool { return strings.Contains(screen.String(), "END-OF-SHIM") },
				10*time.Second, 10*time.Millisecond)
			if agent {
				assert.NotContains(t, screen.String(), "execgate:")
				return
			}
			assert.Contains(t, screen.String(), "execgate: allowed once by ")
		})
	}
}
