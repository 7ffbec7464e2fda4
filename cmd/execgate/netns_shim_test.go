package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/sandbox"
	"github.com/execgate/execgate/shim"
)

// A confined command that runs the workspace's code gets a private
// loopback network (sandbox.Grants.Loopback): a test's own server works,
// and nothing outside is reached.

// netProbeSrc listens on both loopbacks, TCP and UDP, talks to itself,
// then tries the host's listeners named in its arguments; it prints one
// line per step.
const netProbeSrc = `package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	for _, a := range []string{"127.0.0.1:0", "[::1]:0"} {
		fmt.Println("tcp", a, tcpSelf(a))
		fmt.Println("udp", a, udpSelf(a))
	}
	if len(os.Args) > 2 {
		c, err := net.DialTimeout("tcp", os.Args[1], time.Second)
		if err == nil {
			c.Close()
			fmt.Println("host tcp reached")
		}
		if c, err := net.Dial("udp", os.Args[2]); err == nil {
			c.Write([]byte("escaped"))
			c.Close()
		}
	}
}

func tcpSelf(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("pong"))
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return err
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if err == nil && string(b) != "pong" {
		err = fmt.Errorf("read %q", b)
	}
	return err
}

func udpSelf(addr string) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	defer pc.Close()
	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		return err
	}
	defer c.Close()
	c.Write([]byte("ping"))
	pc.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 8)
	n, _, err := pc.ReadFrom(b)
	if err == nil && string(b[:n]) != "ping" {
		err = fmt.Errorf("read %q", b[:n])
	}
	return err
}
`

const netProbeWant = "tcp 127.0.0.1:0 <nil>\nudp 127.0.0.1:0 <nil>\ntcp [::1]:0 <nil>\nudp [::1]:0 <nil>\n"

// hostListeners opens a TCP and a UDP listener on the host's loopback and
// reports whether anything reached either.
func hostListeners(t *testing.T) (tcpAddr, udpAddr string, reached func() bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { pc.Close() })
	hit := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hit <- struct{}{}
			c.Close()
		}
	}()
	go func() {
		b := make([]byte, 16)
		for {
			if _, _, err := pc.ReadFrom(b); err != nil {
				return
			}
			hit <- struct{}{}
		}
	}()
	return ln.Addr().String(), pc.LocalAddr().String(), func() bool {
		select {
		case <-hit:
			return true
		case <-time.After(200 * time.Millisecond):
			return false
		}
	}
}

// buildNetProbe builds the probe into dir (outside any sandbox).
func buildNetProbe(t *testing.T, dir string) {
	t.Helper()
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.go"), []byte(netProbeSrc), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module netprobe\n\ngo 1.22\n"), 0o644))
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "netprobe"), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

func requireConfinement(t *testing.T) {
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("cannot confine here: %s", st.Reason)
	}
}

// Through the real shim, as root (the thread's own namespace).
func TestConfinedLoopbackThroughShim(t *testing.T) {
	requireConfinement(t)
	e := newShimEnv(t, "")
	buildNetProbe(t, e.work)
	tcpAddr, udpAddr, reached := hostListeners(t)
	o := runOutcome(t, e.command(context.Background(), e.shim("bash"), "bash", "-c", "./netprobe "+tcpAddr+" "+udpAddr), "")
	require.Equal(t, 0, o.status, "stderr: %s", o.stderr)
	require.Equal(t, netProbeWant, o.stdout, "stderr: %s", o.stderr)
	require.False(t, reached(), "the host's loopback listeners were reached")
	var confined string
	for _, ev := range e.readAudit() {
		if ev.Confined != "" {
			confined = ev.Confined
		}
	}
	require.Contains(t, confined, "a private loopback network")
}

// As a normal user (the test runs the shim as nobody when it is root):
// the helper in a user namespace.
func TestConfinedLoopbackNonRootThroughShim(t *testing.T) {
	requireConfinement(t)
	if os.Geteuid() != 0 {
		t.Skip("runs the shim as another user, which needs root; as this user TestConfinedLoopbackThroughShim is the same test")
	}
	bin := shimDir(t)
	require.NoError(t, os.Chmod(bin, 0o755))
	root, err := os.MkdirTemp("", "execgate-netns-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	require.NoError(t, os.Chmod(root, 0o755))
	home, work, state := filepath.Join(root, "home"), filepath.Join(root, "home", "work"), filepath.Join(root, "state")
	for _, d := range []string{home, work, state} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	buildNetProbe(t, work)
	for _, d := range []string{home, work, state, filepath.Join(work, "netprobe")} {
		require.NoError(t, os.Chown(d, 65534, 65534))
	}
	tcpAddr, udpAddr, reached := hostListeners(t)
	cmd := exec.Command(filepath.Join(bin, "shims", "bash"), "-c", "./netprobe "+tcpAddr+" "+udpAddr+"; id -u; touch made")
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "XDG_STATE_HOME=" + state,
		"EXECGATE_CONFIG=" + filepath.Join(home, "config.json"), "EXECGATE_AGENT=test-agent", "LC_ALL=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	o := runOutcome(t, cmd, "")
	require.Equal(t, 0, o.status, "stderr: %s", o.stderr)
	require.Equal(t, netProbeWant+"65534\n", o.stdout, "stderr: %s", o.stderr)
	require.False(t, reached(), "the host's loopback listeners were reached")
	fi, err := os.Stat(filepath.Join(work, "made"))
	require.NoError(t, err)
	require.Equal(t, uint32(65534), fi.Sys().(*syscall.Stat_t).Uid, "a file the command made is not the user's")

	// A lone program, which the shim would exec in place without bash, and
	// bash, which it would exec in place, run as children instead: exec'd,
	// they would have no namespace.
	env := cmd.Env
	// Output to a file, not a pipe an agent reads: nothing to cap, so the
	// shim would exec the program, or bash, in place.
	for i, program := range []string{"./netprobe " + tcpAddr + " " + udpAddr, "./netprobe '" + tcpAddr + "' \"" + udpAddr + "\""} {
		cmd := exec.Command(filepath.Join(bin, "shims", "bash"), "-c", program)
		cmd.Dir, cmd.Env = work, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		outPath := filepath.Join(root, fmt.Sprintf("passthrough%d.out", i))
		outFile, err := os.Create(outPath)
		require.NoError(t, err)
		defer outFile.Close()
		var errb strings.Builder
		cmd.Stdout, cmd.Stderr = outFile, &errb
		require.NoError(t, cmd.Run(), "stderr: %s", errb.String())
		got, err := os.ReadFile(outPath)
		require.NoError(t, err)
		require.Equal(t, netProbeWant, string(got), "%s: stderr: %s", program, errb.String())
		require.False(t, reached(), "the host's loopback listeners were reached")
	}
	var direct bool
	l := shim.AuditLog{Path: filepath.Join(state, "execgate", "audit.jsonl")}
	require.NoError(t, l.Read(time.Time{}, func(ev shim.Event, _ []byte) error {
		if strings.HasPrefix(ev.Command, "./netprobe") && ev.Direct {
			direct = true
		}
		return nil
	}))
	require.True(t, direct, "the lone program did not run without bash")
}

// The lead's repro: `go test ./...` of a project whose test starts an
// httptest server, through the confined shim. Before the private
// network it failed: "httptest: failed to listen on a port: … bind:
// permission denied".
func TestConfinedGoTestWithHttptest(t *testing.T) {
	requireConfinement(t)
	if testing.Short() {
		t.Skip("compiles net/http in a fresh cache")
	}
	e := newShimEnv(t, "")
	require.NoError(t, os.MkdirAll(filepath.Join(e.home(), ".cache", "go-build"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "go.mod"), []byte("module example.com/srv\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "srv_test.go"), []byte(`package srv

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestServer(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer s.Close()
	res, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if string(b) != "hello" {
		t.Fatalf("got %q", b)
	}
}
`), 0o644))
	env := []string{"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOPROXY=off", "CGO_ENABLED=0"}
	for _, kv := range e.env {
		if k, _, _ := strings.Cut(kv, "="); k != "GOCACHE" && k != "GOPATH" && k != "GOMODCACHE" && k != "GOFLAGS" {
			env = append(env, kv)
		}
	}
	e.env = env
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "go test ./..."), "")
	require.Equal(t, 0, o.status, "stdout: %s\nstderr: %s", o.stdout, o.stderr)
	require.Contains(t, o.stdout, "ok  \texample.com/srv")
	var confined string
	for _, ev := range e.readAudit() {
		if ev.Confined != "" {
			confined = ev.Confined
		}
	}
	require.Contains(t, confined, "a private loopback network", "go test ran unconfined?")
}

// hostAddr is an address of this machine other than loopback (a
// confined command's proxy settings leave loopback direct), on which the
// tests' stand-in hosts listen.
func hostAddr(t *testing.T) string {
	ifs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range ifs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Skip("no address but loopback to stand in for a host")
	return ""
}

// standIn is a host: an HTTP server answering "hello" to anything, which
// counts what it served.
func standIn(t *testing.T, ip string) (addr string, served func() int) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	n := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 4096)
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if k, _ := c.Read(b); k > 0 {
					n <- struct{}{}
					c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n"))
				}
			}()
		}
	}()
	return ln.Addr().String(), func() int {
		count := 0
		for {
			select {
			case <-n:
				count++
			case <-time.After(200 * time.Millisecond):
				return count
			}
		}
	}
}

// A confined command that runs code reaches its agent's allowed hosts
// through the shim's proxy, plain HTTP and CONNECT; a host not allowed
// gets the proxy's 403 and the command sees the failure; nothing is
// reached around the proxy; the audit log records both.
func TestConfinedAllowedHostsThroughShim(t *testing.T) {
	requireConfinement(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	ip := hostAddr(t)
	allowed, servedAllowed := standIn(t, ip)
	other, servedOther := standIn(t, ip)
	script := `#!/bin/sh
curl -sS -f http://` + allowed + `/simple/; echo "plain rc=$?"
curl -sS -f -p http://` + allowed + `/simple/; echo "connect rc=$?"
curl -sS -f http://` + other + `/; echo "refused rc=$?"
curl -sS --noproxy '*' --max-time 2 http://` + other + `/ 2>/dev/null; echo "around rc=$?"
`
	for _, nobody := range []bool{false, true} {
		name := "root"
		if nobody {
			name = "nobody"
		}
		t.Run(name, func(t *testing.T) {
			if nobody && os.Geteuid() != 0 {
				t.Skip("runs the shim as another user, which needs root")
			}
			root, err := os.MkdirTemp("", "execgate-hosts-")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(root) })
			require.NoError(t, os.Chmod(root, 0o755))
			home, work, state := filepath.Join(root, "home"), filepath.Join(root, "home", "work"), filepath.Join(root, "state")
			for _, d := range []string{home, work, state} {
				require.NoError(t, os.MkdirAll(d, 0o755))
			}
			cfg := filepath.Join(home, "config.json")
			require.NoError(t, os.WriteFile(cfg, []byte(`{"version": 1, "agents": {"*": {"sandbox": {"hosts": ["`+allowed+`"]}}}}`), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(work, "fetch.sh"), []byte(script), 0o755))
			bin := shimDir(t)
			cmd := exec.Command(filepath.Join(bin, "shims", "bash"), "-c", "./fetch.sh")
			cmd.Dir = work
			cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "XDG_STATE_HOME=" + state,
				"EXECGATE_CONFIG=" + cfg, "EXECGATE_AGENT=test-agent", "LC_ALL=C.UTF-8"}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if nobody {
				require.NoError(t, os.Chmod(bin, 0o755))
				for _, d := range []string{home, work, state, filepath.Join(work, "fetch.sh")} {
					require.NoError(t, os.Chown(d, 65534, 65534))
				}
				cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
			}
			o := runOutcome(t, cmd, "")
			require.Equal(t, 0, o.status, "stderr: %s", o.stderr)
			require.Equal(t, "hello\nplain rc=0\nhello\nconnect rc=0\nrefused rc=22\naround rc=7\n", o.stdout, "stderr: %s", o.stderr)
			require.Equal(t, 2, servedAllowed(), "the allowed host was not reached twice")
			require.Equal(t, 0, servedOther(), "a host not allowed was reached")
			var fin *shim.Event
			l := shim.AuditLog{Path: filepath.Join(state, "execgate", "audit.jsonl")}
			require.NoError(t, l.Read(time.Time{}, func(ev shim.Event, _ []byte) error {
				if ev.Event == shim.EventFinished {
					fin = &ev
				}
				return nil
			}))
			require.NotNil(t, fin)
			require.Equal(t, []string{allowed}, fin.Hosts)
			require.Equal(t, []string{other}, fin.HostsRefused)
			require.Contains(t, fin.Confined, "a private loopback network")
		})
	}
}

// A shim started inside a confined command (a `bash -c` on the agent's
// PATH, a version manager's script) confines what it runs inside the
// enclosing command's network, not a new one of its own: a server the
// outer command started on loopback is reached from the inner one.
func TestNestedShimSharesTheNetwork(t *testing.T) {
	requireConfinement(t)
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	e := newShimEnv(t, "")
	server := py + ` -c 'import socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 18081)); s.listen(); s.settimeout(5); c, _ = s.accept(); c.sendall(b"pong"); c.close()'`
	client := py + ` -c 'import socket; print(socket.create_connection(("127.0.0.1", 18081), timeout=5).recv(4).decode())'`
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "outer.sh"), []byte("#!/bin/sh\n"+server+" &\nsleep 0.5\nbash -c ./client.sh\nwait\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "client.sh"), []byte("#!/bin/sh\nexec "+client+"\n"), 0o755))
	e.shimsFirst()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "./outer.sh"), "")
	require.Equal(t, "pong\n", o.stdout, "stderr: %s", o.stderr)
	require.Equal(t, 0, o.status, "stderr: %s", o.stderr)
}
