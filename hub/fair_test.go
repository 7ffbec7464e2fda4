package hub

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floodEnv runs this test binary as floodMain.
const floodEnv = "EXECGATE_HUB_TEST_FLOOD"

// floodMain is a requester driven over stdin, one command a line (the
// fairness tests run it as another uid):
//
//	raw N       open N connections that never say hello
//	conns N     dial up to N connections: "conn ok" for each, then
//	            "conn refused: ERR" for the first refused one
//	requests N  send N requests at once over the dialled connections:
//	            "request refused: ERR" for each refused one (the others
//	            stay pending)
//	ask         dial one more connection and ask once: "outcome: X",
//	            or "ask: ERR"
//
// It exits when stdin closes, and says "done" after each command.
func floodMain() int {
	socket := os.Getenv(serveSocketEnv)
	var raws []net.Conn
	var conns []*Client
	var wg sync.WaitGroup
	var outMu sync.Mutex
	say := func(format string, a ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Printf(format+"\n", a...)
	}
	dial := func() (*Client, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return Dial(ctx, DialOptions{Socket: socket, Token: os.Getenv(clientTokenEnv), Name: "flood"})
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		verb, arg, _ := strings.Cut(in.Text(), " ")
		n, _ := strconv.Atoi(arg)
		switch verb {
		case "raw":
			for range n {
				nc, err := net.Dial("unix", socket)
				if err != nil {
					say("raw: %v", err)
					break
				}
				raws = append(raws, nc)
			}
		case "conns":
			for range n {
				c, err := dial()
				if err != nil {
					say("conn refused: %v", err)
					break
				}
				conns = append(conns, c)
				say("conn ok")
			}
		case "requests":
			var sent sync.WaitGroup
			for i := range n {
				c := conns[i%len(conns)]
				sent.Add(1)
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					// The answer to a refused request comes at once; an
					// admitted one is pending until the test ends.
					ch := make(chan error, 1)
					go func() {
						_, err := c.Request(ctx, ApprovalRequest{Command: "flood " + strconv.Itoa(i), Risk: "safe", AgentID: "flood", TimeoutMs: 30_000})
						ch <- err
					}()
					sent.Done()
					switch err := <-ch; {
					case errCode(err) == ErrCodeQuota:
						say("request refused: %v", err)
					case err != nil:
						say("request failed: %v", err)
					}
				})
			}
			sent.Wait()
		case "ask":
			c, err := dial()
			if err != nil {
				say("ask: %v", err)
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			ans, err := c.Request(ctx, ApprovalRequest{Command: "id", Risk: "safe", AgentID: "other", TimeoutMs: 20_000})
			cancel()
			c.Close()
			if err != nil {
				say("ask: %v", err)
				break
			}
			say("outcome: %s", ans.Outcome)
		}
		say("done")
	}
	for _, c := range conns {
		c.Close()
	}
	for _, nc := range raws {
		nc.Close()
	}
	return 0
}

// uidSeam stands a uid in for the real one of chosen processes, for when
// the tests cannot run a process as another user (not root). The peer's
// pid is still the kernel's word.
type uidSeam struct {
	mu   sync.Mutex
	uids map[int]int // pid → uid
}

func (s *uidSeam) set(pid, uid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uids == nil {
		s.uids = map[int]int{}
	}
	s.uids[pid] = uid
}

func (s *uidSeam) peerCred(nc net.Conn) (peer, error) {
	p, err := peerOf(nc)
	if err != nil {
		return p, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if uid, ok := s.uids[p.pid]; ok {
		p.uid = uid
	}
	return p, nil
}

// otherUids runs helper processes as other users: really, when the tests
// run as root, else through a uidSeam.
type otherUids struct {
	real bool
	bin  string // the test binary, where every user can run it
	seam *uidSeam
	// uids are two that are not ours: nobody and the one below when
	// real, made-up ones in the seam (the tests may run as nobody).
	uids [2]int
	// token is the hub's, given to the helpers in the seam: they run as
	// our own uid there, and a client checks a hub of its own uid by the
	// token (a real other uid has none and needs none).
	token string
}

func newOtherUids(t *testing.T, dir string) *otherUids {
	t.Helper()
	o := &otherUids{real: os.Geteuid() == 0, seam: &uidSeam{}, uids: [2]int{4_000_000_001, 4_000_000_002}}
	if o.real {
		o.uids = [2]int{65534, 65533}
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	o.bin = exe
	if o.real {
		t.Log("requester uids are real: helper processes run as other users")
		require.NoError(t, os.Chmod(dir, 0o711))
		o.bin = filepath.Join(dir, "hub.test")
		copyFile(t, exe, o.bin, 0o755)
	} else {
		t.Log("not root: requester uids are stood in by pid (uidSeam); the processes and sockets are real")
	}
	return o
}

// flooder is a floodMain process.
type flooder struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
}

// start runs floodMain as uid against socket.
func (o *otherUids) start(t *testing.T, uid int, socket string) *flooder {
	t.Helper()
	cmd := exec.Command(o.bin)
	cmd.Env = []string{floodEnv + "=1", serveSocketEnv + "=" + socket}
	if !o.real {
		cmd.Env = append(cmd.Env, clientTokenEnv+"="+o.token)
	}
	cmd.Stderr = os.Stderr
	if o.real {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	// Its pid is known before it is told to connect.
	o.seam.set(cmd.Process.Pid, uid)
	f := &flooder{t: t, in: in, lines: make(chan string, 1024)}
	go func() {
		defer close(f.lines)
		s := bufio.NewScanner(out)
		for s.Scan() {
			f.lines <- s.Text()
		}
	}()
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return f
}

// do sends one command and returns what the helper said until "done".
func (f *flooder) do(command string) []string {
	f.t.Helper()
	_, err := io.WriteString(f.in, command+"\n")
	require.NoError(f.t, err)
	var said []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-f.lines:
			require.True(f.t, ok, "helper exited during %q after %q", command, said)
			if l == "done" {
				return said
			}
			said = append(said, l)
		case <-timeout:
			f.t.Fatalf("helper did not finish %q (said %q)", command, said)
		}
	}
}

// waitFor reads the helper's lines until n of them start with prefix.
func (f *flooder) waitFor(prefix string, n int) []string {
	f.t.Helper()
	var got, all []string
	timeout := time.After(30 * time.Second)
	for len(got) < n {
		select {
		case l, ok := <-f.lines:
			require.True(f.t, ok, "helper exited waiting for %q", prefix)
			all = append(all, l)
			if strings.HasPrefix(l, prefix) {
				got = append(got, l)
			}
		case <-timeout:
			f.t.Fatalf("helper said %d of %d %q lines: %q", len(got), n, prefix, all)
		}
	}
	return got
}

func withPrefix(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func count(lines []string, prefix string) int { return len(withPrefix(lines, prefix)) }

// TestFairShares: a requester uid floods the hub with connections (some
// never saying hello) and with pending approvals. It gets its share and a
// clear refusal past it; the owner's approver still connects and answers,
// the owner's own shim and another requester uid's shim still get their
// requests through, and when the flood ends its shares are given back.
func TestFairShares(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := shortTempDir(t)
	uids := newOtherUids(t, dir)
	flood, other := uids.uids[0], uids.uids[1]
	// Two requester uids: each gets (12-4)/2 = 4 connections and 4
	// pending approvals; the owner keeps a reserve of 4 of each.
	limits := Limits{Conns: 12, OwnerConns: 4, Pending: 12, OwnerPending: 4}
	sub := filepath.Join(dir, "h")
	require.NoError(t, os.Mkdir(sub, 0o711))
	cfg := filepath.Join(sub, "cfg.json")
	writeConfig(t, cfg, fmt.Sprintf(`{"requesterUids":[%d,%d]}`, flood, other))
	h := startHub(t, func(o *ServerOptions) {
		o.ConfigPath = cfg
		o.Socket = filepath.Join(sub, "run", "hub.sock")
		o.Limits = limits
		o.peerCred = uids.seam.peerCred
	})

	uids.token = h.token
	f := uids.start(t, flood, h.socket)
	f.do("raw 2") // counted from accept, hello or not
	said := f.do("conns 10")
	require.Equal(t, 2, count(said, "conn ok"), "%q", said)
	require.Equal(t, 1, count(said, "conn refused"), "%q", said)
	refusal := said[len(said)-1]
	assert.Contains(t, refusal, "BUSY")
	assert.Contains(t, refusal, fmt.Sprintf("uid %d already has 4 connections open, its share of this hub", flood))

	// The owner's approver connects anyway, and so does the owner's shim.
	appr, ev := h.approver(t, "owner")
	ownShim := h.dial(t, RoleRequester, "own-shim")

	// Four approvals are the flood's share; two more are refused at once.
	// A refusal may come before or after the helper's "done".
	refused := withPrefix(f.do("requests 6"), "request refused")
	refused = append(refused, f.waitFor("request refused", 2-len(refused))...)
	assert.Contains(t, refused[0], "QUOTA")
	assert.Contains(t, refused[0], fmt.Sprintf("uid %d already has 4 approvals pending, its share of this hub; this request is refused (not run)", flood))
	for range 4 {
		a := nextEvent(t, ev, EventRequested)
		require.Equal(t, flood, a.RequesterUid)
	}

	// Another requester uid's shim gets its request through and answered.
	g := uids.start(t, other, h.socket)
	asked := make(chan []string, 1)
	go func() { asked <- g.do("ask") }()
	a := nextEvent(t, ev, EventRequested)
	require.Equal(t, other, a.RequesterUid)
	_, err := appr.Resolve(context.Background(), a.ID, AllowOnce)
	require.NoError(t, err)
	select {
	case said := <-asked:
		assert.Equal(t, []string{"outcome: decided"}, said)
	case <-time.After(30 * time.Second):
		t.Fatal("the other uid got no answer")
	}

	// So does the owner's own shim.
	ch := answerOf(context.Background(), ownShim, testRequest("make"))
	a = nextEvent(t, ev, EventRequested)
	require.Equal(t, h.srv.uid, a.RequesterUid)
	_, err = appr.Resolve(context.Background(), a.ID, Deny)
	require.NoError(t, err)
	r := <-ch
	require.NoError(t, r.err)
	assert.Equal(t, OutcomeDecided, r.ans.Outcome)

	// The flood ends: every connection and approval it held is given back.
	f.in.Close()
	require.Eventually(t, func() bool {
		h.srv.mu.Lock()
		defer h.srv.mu.Unlock()
		return h.srv.connShares.held[flood] == 0 && h.srv.pendingShares.held[flood] == 0
	}, 10*time.Second, 10*time.Millisecond, "the flood's shares were not given back")
	h.srv.mu.Lock()
	assert.Equal(t, len(h.srv.conns), h.srv.connShares.all, "connections counted")
	assert.Equal(t, len(h.srv.pending), h.srv.pendingShares.all, "approvals counted")
	assert.Zero(t, h.srv.refusing)
	h.srv.mu.Unlock()
}

// A uid that may not use the hub is told so, and its connections count
// against no one's share.
func TestRefusedUidFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := shortTempDir(t)
	uids := newOtherUids(t, dir)
	stranger := uids.uids[0]
	sub := filepath.Join(dir, "h")
	require.NoError(t, os.Mkdir(sub, 0o711))
	cfg := filepath.Join(sub, "cfg.json")
	writeConfig(t, cfg, `{"requesterUids":[12345]}`) // open to others, not to the stranger
	h := startHub(t, func(o *ServerOptions) {
		o.ConfigPath = cfg
		o.Socket = filepath.Join(sub, "run", "hub.sock")
		o.Limits = Limits{Conns: 8, OwnerConns: 4}
		o.peerCred = uids.seam.peerCred
	})
	uids.token = h.token
	f := uids.start(t, stranger, h.socket)
	f.do("raw 8")
	said := f.do("conns 1")
	require.Len(t, said, 1)
	assert.Contains(t, said[0], "UNAUTHORIZED")
	assert.Contains(t, said[0], fmt.Sprintf("uid %d may not use this hub", stranger))
	h.dial(t, RoleApprover, "owner")
	h.srv.mu.Lock()
	assert.Zero(t, h.srv.connShares.held[stranger])
	h.srv.mu.Unlock()
}

// TestIdleTimeout: a connection that sends nothing and waits on nothing is
// closed after the idle timeout with IDLE; one that waits on the hub (an
// approval pending, a subscription) or on its command (reported started,
// not finished) is kept, and closed once it no longer waits.
func TestIdleTimeout(t *testing.T) {
	const idle = 300 * time.Millisecond
	h := startHub(t, func(o *ServerOptions) { o.Limits.IdleTimeout = idle })
	ctx := context.Background()

	appr, ev := h.approver(t, "subscribed")
	pendingShim := h.dial(t, RoleRequester, "waiting")
	ch := answerOf(ctx, pendingShim, testRequest("make"))
	a := nextEvent(t, ev, EventRequested)
	running := h.raw(t)
	running.hello(h.token, RoleRequester)
	running.sendFrame("", MethodReport, ExecReport{Event: EventStarted, ID: "run-1", Command: "sleep 1h"})
	finished := h.raw(t)
	finished.hello(h.token, RoleRequester)
	finished.sendFrame("", MethodReport, ExecReport{Event: EventStarted, ID: "run-2", Command: "true"})
	finished.sendFrame("", MethodReport, ExecReport{Event: EventFinished, ID: "run-2", Command: "true"})
	// An idle connection that said hello after all of the above: once it
	// is closed, the idle timeout has passed for every one of them.
	quiet := h.raw(t)
	quiet.hello(h.token, RoleRequester)

	for _, tc := range []struct {
		name string
		r    *raw
	}{{"quiet", quiet}, {"finished its command", finished}} {
		f, err := tc.r.read(10 * time.Second)
		require.NoError(t, err, tc.name)
		require.NotNil(t, f.Error, tc.name)
		assert.Equal(t, ErrCodeIdle, f.Error.Code, tc.name)
		assert.Contains(t, f.Error.Message, "nothing sent for 300ms and nothing outstanding", tc.name)
		assert.True(t, tc.r.closed(), tc.name)
	}

	// The waiting ones are still there.
	_, err := appr.Status(ctx)
	require.NoError(t, err, "subscribed approver")
	running.sendFrame("s", MethodStatus, nil)
	assert.Equal(t, "s", running.next().ID, "running command")
	_, err = appr.Resolve(ctx, a.ID, AllowOnce)
	require.NoError(t, err)
	res := <-ch
	require.NoError(t, res.err, "pending approval")
	assert.Equal(t, OutcomeDecided, res.ans.Outcome)

	// Its approval answered, the shim waits on nothing: it goes idle too.
	select {
	case <-pendingShim.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("an idle requester was not closed")
	}
	_, err = pendingShim.Status(ctx)
	assert.Equal(t, ErrCodeIdle, errCode(err), "%v", err)
}

// socket.idleTimeoutMs sets the idle timeout.
func TestIdleTimeoutConfigured(t *testing.T) {
	dir := shortTempDir(t)
	cfg := filepath.Join(dir, "cfg.json")
	writeConfig(t, cfg, `{"idleTimeoutMs":1000}`)
	h := startHub(t, func(o *ServerOptions) { o.ConfigPath = cfg })
	r := h.raw(t)
	r.hello(h.token, RoleRequester)
	f, err := r.read(10 * time.Second)
	require.NoError(t, err)
	require.NotNil(t, f.Error)
	assert.Equal(t, ErrCodeIdle, f.Error.Code)
	assert.Contains(t, f.Error.Message, "nothing sent for 1s")
}

// A connection refused for want of room says why, and the client reports it.
func TestBusyRefusalOwner(t *testing.T) {
	h := startHub(t, func(o *ServerOptions) { o.Limits = Limits{Conns: 2, OwnerConns: 1} })
	h.dial(t, RoleApprover, "a")
	h.dial(t, RoleRequester, "b")
	_, err := Dial(context.Background(), DialOptions{Socket: h.socket, Token: h.token, Name: "c"})
	require.Error(t, err)
	assert.Equal(t, ErrCodeBusy, errCode(err), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprintf("the hub has no room for another connection of uid %d (2 open); try again later", h.srv.uid))
	assert.NotErrorIs(t, err, ErrNoHub)
}

// TestSharesTable checks the arithmetic of shares.
func TestSharesTable(t *testing.T) {
	const owner = 1000
	type step struct {
		uid  int
		take bool // take, else give
		want shareVerdict
	}
	tests := []struct {
		name       string
		total      int
		reserve    int
		requesters int
		steps      []step
	}{
		{"one requester fills its share, owner keeps the reserve", 4, 1, 1, []step{
			{7, true, shareGranted}, {7, true, shareGranted}, {7, true, shareGranted}, {7, true, shareOwn},
			{owner, true, shareGranted}, {owner, true, shareFull},
		}},
		{"two requesters: equal shares, the other keeps room", 10, 2, 2, []step{
			{7, true, shareGranted}, {7, true, shareGranted}, {7, true, shareGranted}, {7, true, shareGranted}, {7, true, shareOwn},
			{8, true, shareGranted}, {8, true, shareGranted}, {8, true, shareGranted}, {8, true, shareGranted}, {8, true, shareOwn},
			{owner, true, shareGranted}, {owner, true, shareGranted}, {owner, true, shareFull},
		}},
		{"given back, taken again", 3, 1, 1, []step{
			{7, true, shareGranted}, {7, true, shareGranted}, {7, true, shareOwn},
			{7, false, 0}, {7, true, shareGranted},
		}},
		{"owner may use all of it", 3, 1, 1, []step{
			{owner, true, shareGranted}, {owner, true, shareGranted}, {owner, true, shareGranted}, {owner, true, shareFull},
			{7, true, shareFull},
		}},
		{"a uid dropped from the list still counts against the others' part", 4, 1, 1, []step{
			{9, true, shareGranted}, {9, true, shareGranted}, {7, true, shareGranted}, {7, true, shareFull},
		}},
		{"giving back what was never taken is a no-op", 2, 1, 1, []step{
			{7, false, 0}, {owner, false, 0}, {7, true, shareGranted}, {7, true, shareOwn},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newShares(tt.total, tt.reserve, owner)
			for i, st := range tt.steps {
				if !st.take {
					s.give(st.uid)
					continue
				}
				assert.Equal(t, st.want, s.take(st.uid, tt.requesters), "step %d (uid %d)", i, st.uid)
			}
			sum, others := 0, 0
			for uid, n := range s.held {
				assert.Positive(t, n)
				sum += n
				if uid != owner {
					others += n
				}
			}
			assert.Equal(t, sum, s.all)
			assert.Equal(t, others, s.others)
		})
	}
}

// Limits keep each reserve below its budget, whatever is asked.
func TestLimitsDefaults(t *testing.T) {
	l := Limits{}.withDefaults()
	assert.Equal(t, Limits{Conns: 4096, OwnerConns: 512, Pending: 10_000, OwnerPending: 2_000, HelloTimeout: 10 * time.Second}, l)
	l = Limits{Conns: 3, OwnerConns: 9, Pending: 1, OwnerPending: 1}.withDefaults()
	assert.Equal(t, 2, l.OwnerConns)
	assert.Equal(t, 0, l.OwnerPending)
}
