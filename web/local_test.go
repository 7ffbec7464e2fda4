package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hub"
)

// Helper modes of this test binary.
const (
	netnsEnv = "EXECGATE_WEB_TEST_NETNS" // run netnsMain (inside a fresh network namespace)
	floodEnv = "EXECGATE_WEB_TEST_FLOOD" // run floodMain against this address
)

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(netnsEnv) != "":
		os.Exit(netnsMain())
	case os.Getenv(floodEnv) != "":
		os.Exit(floodMain(os.Getenv(floodEnv)))
	}
	os.Exit(m.Run())
}

// testAddr is the machine's own non-loopback address inside the test's
// network namespace (TEST-NET-1: it exists nowhere else, and nothing
// leaves the namespace).
const testAddr = "192.0.2.1"

// netnsMain runs in a network namespace of its own: it gives the loopback
// interface a second, non-loopback address, serves the web approver on
// every address, logs in as its owner, and then asks as itself and as
// another user (nobody, with the owner's cookie) through that address.
func netnsMain() int {
	for _, args := range [][]string{{"link", "set", "lo", "up"}, {"addr", "add", testAddr + "/32", "dev", "lo"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			fmt.Printf("setup: ip %s: %v %s\n", strings.Join(args, " "), err, out)
			return 0
		}
	}
	w, err := Listen(Options{Addr: "0.0.0.0:0", Dial: func(context.Context) (*hub.Client, error) {
		return nil, errors.New("no hub in this test")
	}})
	if err != nil {
		fmt.Println("setup:", err)
		return 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Serve(ctx)
	port := w.Addr()[strings.LastIndex(w.Addr(), ":")+1:]
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 5 * time.Second}
	resp, err := c.Get(w.LoginURL())
	if err != nil {
		fmt.Println("setup: login:", err)
		return 0
	}
	resp.Body.Close()
	var cookie string
	for _, ck := range resp.Cookies() {
		cookie = ck.Name + "=" + ck.Value
	}
	ask := func(cred *syscall.Credential) string {
		script := "exec 3<>/dev/tcp/" + testAddr + "/" + port + ` && printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1:` + port +
			`\r\nCookie: ` + cookie + `\r\n\r\n' >&3 && head -1 <&3`
		cmd := exec.Command("bash", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, _ := cmd.CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	fmt.Printf("owner: %s\n", ask(nil))
	fmt.Printf("other: %s\n", ask(&syscall.Credential{Uid: 65534, Gid: 65534}))
	return 0
}

// TestOtherUserThroughLocalAddress: with --listen on every address,
// another local user who took the owner's cookie connects through the
// machine's own non-loopback address (not loopback, where it was already
// refused). It is still a local connection, and gets no answer; the owner
// through the same address gets the page.
func TestOtherUserThroughLocalAddress(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: a network namespace and a second uid")
	}
	for _, tool := range []string{"unshare", "ip", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command("unshare", "--net", exe)
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	got := string(out)
	if strings.Contains(got, "setup:") {
		t.Skipf("cannot set up the namespace: %s", got)
	}
	assert.Contains(t, got, "owner: HTTP/1.0 200 OK", "the owner through the machine's own address")
	other := got[strings.Index(got, "other:"):]
	assert.NotContains(t, other, "HTTP/", "another user with the owner's cookie got an answer: %q", got)
}

// floodMain opens connections to addr from 16 goroutines for two seconds,
// as fast as it can, holding each open without a word, then exits.
func floodMain(addr string) int {
	var wg sync.WaitGroup
	stop := time.Now().Add(2 * time.Second)
	var mu sync.Mutex
	var held []net.Conn
	for range 16 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					continue
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fmt.Println("opened", len(held))
	return 0
}

// TestFloodDoesNotStallOwner: while another local user floods the web
// approver with connections that say nothing (each refused, and each
// asking the kernel who opened it), the owner's requests are still
// answered at once: judging a connection never waits in the accept loop
// behind the others.
func TestFloodDoesNotStallOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to flood as a second uid")
	}
	e := startEnv(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := shortTempDir(t)
	require.NoError(t, os.Chmod(dir, 0o711))
	bin := dir + "/web.test"
	b, err := os.ReadFile(exe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	c := client(t)
	e.login(t, c)
	addr := strings.TrimPrefix(e.base, "http://")

	done := make(chan string, 1)
	go func() {
		cmd := exec.Command(bin)
		cmd.Env = []string{floodEnv + "=" + addr}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, _ := cmd.CombinedOutput()
		done <- string(out)
	}()
	time.Sleep(300 * time.Millisecond) // the flood is on
	var worst time.Duration
	for i := 0; i < 20; i++ {
		start := time.Now()
		code, _, _ := get(t, c, e.base+"/", nil)
		require.Equal(t, http.StatusOK, code)
		worst = max(worst, time.Since(start))
		time.Sleep(50 * time.Millisecond)
	}
	flood := <-done
	t.Logf("flood: %s; the owner's slowest answer: %v", strings.TrimSpace(flood), worst)
	assert.Less(t, worst, time.Second, "the owner waited behind the flood")
}

// TestConnLimits: a party past its share is refused while the others keep
// theirs, and what it gives back it may use again.
func TestConnLimits(t *testing.T) {
	l := &connLimits{perParty: 2, total: 3, held: map[string]int{}}
	r1, ok := l.take("uid 1000")
	require.True(t, ok)
	_, ok = l.take("uid 1000")
	require.True(t, ok)
	_, ok = l.take("uid 1000")
	assert.False(t, ok, "past its share")
	r3, ok := l.take("address 192.0.2.9")
	require.True(t, ok, "another party still gets in")
	_, ok = l.take("address 192.0.2.10")
	assert.False(t, ok, "past the total")
	r1()
	r1() // twice gives back once
	_, ok = l.take("uid 1000")
	assert.True(t, ok)
	r3()
	assert.Equal(t, 2, l.all)
}

// TestSilentConnectionsBounded: connections that never send a byte are
// held at most maxConnsPerParty at a time per party, and closed by the
// header timeout; past the share they are closed at once.
func TestSilentConnectionsBounded(t *testing.T) {
	e := startEnv(t)
	addr := strings.TrimPrefix(e.base, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range maxConnsPerParty {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	time.Sleep(200 * time.Millisecond) // judged, in their own goroutines
	extra, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer extra.Close()
	extra.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	extra.SetReadDeadline(time.Now().Add(3 * time.Second))
	n, err := extra.Read(make([]byte, 64))
	assert.Zero(t, n, "a connection past the share got an answer")
	assert.Error(t, err)
	var ne net.Error
	assert.False(t, errors.As(err, &ne) && ne.Timeout(), "closed at once, not left hanging: %v", err)
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	time.Sleep(200 * time.Millisecond)
	c := client(t)
	code, _, _ := get(t, c, e.base+"/", nil)
	assert.Equal(t, http.StatusUnauthorized, code, "room again once they are gone")
}
