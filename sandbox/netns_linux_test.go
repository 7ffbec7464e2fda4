//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// actVar makes the test binary, started confined, do one network act and
// print what happened (see act); nonrootVar makes it, started as another
// user, run confinedActs itself (the helper route a normal user takes).
const (
	actVar     = "SANDBOX_TEST_NET_ACT"
	nonrootVar = "SANDBOX_TEST_NONROOT"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == HelperArg {
		HelperMain(os.Args)
	}
	if a := os.Getenv(actVar); a != "" {
		os.Exit(act(a))
	}
	if os.Getenv(nonrootVar) != "" {
		os.Exit(nonrootMain())
	}
	os.Exit(m.Run())
}

// act does one network act inside the sandbox and prints "ok NAME" or
// "fail NAME: why" for each step.
func act(a string) int {
	kind, arg, _ := strings.Cut(a, " ")
	switch kind {
	case "self":
		// Listen on loopback, both families, TCP and UDP, and talk to
		// itself.
		for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
			report("tcp "+addr, tcpSelf(addr))
			report("udp "+addr, udpSelf(addr))
		}
	case "tcp":
		c, err := net.DialTimeout("tcp", arg, time.Second)
		if err == nil {
			c.Write([]byte("escaped"))
			c.Close()
		}
		report("tcp "+arg, err)
	case "udp":
		c, err := net.Dial("udp", arg)
		if err == nil {
			_, err = c.Write([]byte("escaped"))
			c.Close()
		}
		report("udp "+arg, err)
	case "unix":
		c, err := net.Dial("unix", arg)
		if err == nil {
			c.Close()
		}
		report("unix", err)
	case "resolve":
		_, err := net.LookupHost(arg)
		report("resolve", err)
	case "ns":
		l, err := os.Readlink("/proc/self/ns/net")
		fmt.Println(l, err)
	}
	return 0
}

func report(name string, err error) {
	if err != nil {
		fmt.Printf("fail %s: %v\n", name, err)
		return
	}
	fmt.Printf("ok %s\n", name)
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
	c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
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
	if _, err := c.Write([]byte("ping")); err != nil {
		return err
	}
	pc.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 16)
	n, _, err := pc.ReadFrom(b)
	if err == nil && string(b[:n]) != "ping" {
		err = fmt.Errorf("read %q", b[:n])
	}
	return err
}

// netWorld is a workspace and the grants of a command that runs code
// there, with the test binary readable so that it can run confined.
func netWorld(t *testing.T) (world, Grants) {
	w := newWorld(t)
	g := w.grants()
	g.Loopback = true
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	g.Read = append(g.Read, filepath.Dir(exe))
	return w, g
}

// forkAct runs the test binary confined by p, doing a, through
// Prepared.ForkExec (the way the shim starts a shell), and returns what it
// printed.
func forkAct(t *testing.T, p *Prepared, dir, a string, extraEnv ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := runForked(p, exe, []string{exe}, dir, append([]string{actVar + "=" + a, "PATH=/usr/bin:/bin"}, extraEnv...))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runForked(p *Prepared, path string, argv []string, dir string, env []string) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer r.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return "", err
	}
	defer null.Close()
	attr := &syscall.ProcAttr{Dir: dir, Env: env, Files: []uintptr{null.Fd(), w.Fd(), w.Fd()},
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	pid, release, err := p.ForkExec(path, argv, attr)
	defer release()
	w.Close()
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	io.Copy(&buf, r)
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return buf.String(), err
	}
	return buf.String(), nil
}

// ways are the two ways a private network is made: as root on the
// confined thread, and through the helper in a user namespace (forced
// here; a normal user's own route, tested as one in TestLoopbackNonRoot).
func ways(t *testing.T) map[string]netMode {
	if !effective(unix.CAP_SYS_ADMIN) {
		return map[string]netMode{"helper": netHelper}
	}
	return map[string]netMode{"thread": netThread, "helper": netHelper}
}

func prepareFor(t *testing.T, g Grants, mode netMode) *Prepared {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := prepareNet(g, Options{Helper: exe}, mode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestLoopbackWorksInside(t *testing.T) {
	w, g := netWorld(t)
	for name, mode := range ways(t) {
		t.Run(name, func(t *testing.T) {
			p := prepareFor(t, g, mode)
			out := forkAct(t, p, w.ws, "self")
			want := "ok tcp 127.0.0.1:0\nok udp 127.0.0.1:0\nok tcp [::1]:0\nok udp [::1]:0\n"
			if out != want {
				t.Fatalf("in the private network:\n%s\nwant:\n%s", out, want)
			}
			if err := p.LoopbackErr(); err != nil {
				t.Fatalf("LoopbackErr = %v", err)
			}
		})
	}
	t.Run("without Loopback", func(t *testing.T) {
		// The control: today's sandbox refuses all of it.
		g := g
		g.Loopback = false
		p := prepareFor(t, g, netNone)
		out := forkAct(t, p, w.ws, "self")
		if strings.Contains(out, "ok ") {
			t.Fatalf("loopback worked without a namespace:\n%s", out)
		}
	})
}

func TestLoopbackReachesNothingOutside(t *testing.T) {
	w, g := netWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	sockDir := t.TempDir()
	sock := filepath.Join(sockDir, "outside.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	os.Chmod(sockDir, 0o755)
	g.Read = append(g.Read, sockDir) // even readable, it cannot be connected to
	hostNS, _ := os.Readlink("/proc/self/ns/net")
	for name, mode := range ways(t) {
		t.Run(name, func(t *testing.T) {
			p := prepareFor(t, g, mode)
			if out := forkAct(t, p, w.ws, "tcp "+ln.Addr().String()); !strings.HasPrefix(out, "fail ") {
				t.Errorf("TCP to the host's loopback: %s", out)
			}
			if out := forkAct(t, p, w.ws, "udp "+pc.LocalAddr().String()); !strings.HasPrefix(out, "fail ") {
				// A send may succeed into the namespace's own lo: what
				// matters is that the host's listener hears nothing.
				pc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				if _, _, err := pc.ReadFrom(make([]byte, 16)); err == nil {
					t.Errorf("UDP reached the host's listener: %s", out)
				}
			}
			if out := forkAct(t, p, w.ws, "unix "+sock); !strings.HasPrefix(out, "fail ") {
				t.Errorf("Unix socket outside: %s", out)
			}
			if out := forkAct(t, p, w.ws, "resolve example.com"); !strings.HasPrefix(out, "fail ") {
				t.Errorf("resolved a name: %s", out)
			}
			if out := forkAct(t, p, w.ws, "ns"); strings.HasPrefix(out, hostNS) {
				t.Errorf("ran in the host's network namespace: %s", out)
			}
			select {
			case <-accepted:
				t.Error("the host's TCP listener accepted a connection")
			default:
			}
		})
	}
}

// A daemon the command leaves behind (setsid, double fork) stays in the
// command's namespace, and every command of one Prepared shares it when
// it is made on the thread.
func TestLoopbackDaemonStaysInside(t *testing.T) {
	w, g := netWorld(t)
	hostNS, _ := os.Readlink("/proc/self/ns/net")
	for name, mode := range ways(t) {
		t.Run(name, func(t *testing.T) {
			p := prepareFor(t, g, mode)
			out, err := runForked(p, "/bin/bash", []string{"bash", "-c", `readlink /proc/self/ns/net > cmd.ns
setsid bash -c 'sleep 0.2; readlink /proc/self/ns/net > daemon.ns' </dev/null >/dev/null 2>&1 &`}, w.ws, []string{"PATH=/usr/bin:/bin"})
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var daemon []byte
			for i := 0; i < 50 && len(daemon) == 0; i++ {
				time.Sleep(50 * time.Millisecond)
				daemon, _ = os.ReadFile(filepath.Join(w.ws, "daemon.ns"))
			}
			cmd, _ := os.ReadFile(filepath.Join(w.ws, "cmd.ns"))
			if len(cmd) == 0 || string(cmd) != string(daemon) || strings.TrimSpace(string(cmd)) == hostNS {
				t.Fatalf("command in %q, daemon in %q, host %q", cmd, daemon, hostNS)
			}
			os.Remove(filepath.Join(w.ws, "daemon.ns"))
		})
	}
}

// The helper reports the command's own exec errors as ForkExec would, so
// that callers tell a missing program from a script without #!.
func TestHelperReportsExecErrors(t *testing.T) {
	w, g := netWorld(t)
	p := prepareFor(t, g, netHelper)
	_, err := runForked(p, filepath.Join(w.ws, "missing"), []string{"missing"}, w.ws, nil)
	if !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("err = %v, want ENOENT", err)
	}
	write(t, filepath.Join(w.ws, "noshebang"), "echo hi\n")
	os.Chmod(filepath.Join(w.ws, "noshebang"), 0o700)
	_, err = runForked(p, filepath.Join(w.ws, "noshebang"), []string{"noshebang"}, w.ws, nil)
	if !errors.Is(err, syscall.ENOEXEC) {
		t.Fatalf("err = %v, want ENOEXEC", err)
	}
}

// The helper's command keeps no capability from the user namespace, has
// no_new_privs, runs as the user who started it, and sees none of the
// helper's pipes.
func TestHelperDropsEverything(t *testing.T) {
	w, g := netWorld(t)
	p := prepareFor(t, g, netHelper)
	script := `grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Uid|Gid):' /proc/self/status; ls /proc/self/fd | tr '\n' ' '; touch made`
	out, err := runForked(p, "/bin/bash", []string{"bash", "-c", script}, w.ws, []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// The same descriptors as a command started without the helper (this
	// process may have inherited some of its own).
	plain, err := runForked(prepareFor(t, g, netNone), "/bin/bash", []string{"bash", "-c", "ls /proc/self/fd | tr '\\n' ' '"}, w.ws, nil)
	if err != nil || !strings.HasSuffix(out, "\n"+plain) {
		t.Errorf("descriptors through the helper differ: %q, without it %q (%v)", out, plain, err)
	}
	for _, c := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if !strings.Contains(out, c+":\t0000000000000000\n") {
			t.Errorf("%s not empty:\n%s", c, out)
		}
	}
	if !strings.Contains(out, "NoNewPrivs:\t1\n") {
		t.Errorf("no_new_privs not set:\n%s", out)
	}
	uid := fmt.Sprint(os.Geteuid())
	if !strings.Contains(out, "Uid:\t"+uid+"\t"+uid) {
		t.Errorf("not the user's own uid %s:\n%s", uid, out)
	}
	fi, err := os.Stat(filepath.Join(w.ws, "made"))
	if err != nil || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
		t.Errorf("a file the command made is not the user's: %v", err)
	}
}

// Where the namespace cannot be made the command runs with today's
// confinement — no network at all — never with more.
func TestLoopbackFailsClosed(t *testing.T) {
	w, g := netWorld(t)
	t.Run("helper that cannot start", func(t *testing.T) {
		p, err := prepareNet(g, Options{Helper: filepath.Join(w.ws, "no-such-helper")}, netHelper)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		out := forkAct(t, p, w.ws, "self")
		if strings.Contains(out, "ok ") || !strings.Contains(out, "fail tcp 127.0.0.1:0") {
			t.Fatalf("without a namespace:\n%s", out)
		}
		if p.LoopbackErr() == nil {
			t.Fatal("LoopbackErr is nil after the fallback")
		}
	})
	t.Run("plain OnThread of a helper's confinement", func(t *testing.T) {
		// A caller that does not start through ForkExec gets today's
		// confinement, not an unconfined thread.
		p := prepareFor(t, g, netHelper)
		exe, _ := os.Executable()
		var out bytes.Buffer
		cmd := exec.Command(exe)
		cmd.Dir, cmd.Env, cmd.Stdout = w.ws, []string{actVar + "=self"}, &out
		release, err := p.OnThread(cmd.Start)
		defer release()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if strings.Contains(out.String(), "ok ") || !strings.Contains(out.String(), "fail tcp 127.0.0.1:0") {
			t.Fatalf("through a plain OnThread:\n%s", out.String())
		}
		if b, err := exec.Command("/bin/cat", filepath.Join(w.home, ".ssh", "id_rsa")).Output(); err != nil || len(b) == 0 {
			t.Fatal("the control read failed")
		}
	})
	t.Run("a grant of the network", func(t *testing.T) {
		g := g
		g.Network = true
		p, err := PrepareWith(g, Options{Helper: "/proc/self/exe"})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if p.Grants().Loopback || p.NeedsChild() {
			t.Fatal("a network grant made a private network")
		}
	})
}

func TestProbeLoopback(t *testing.T) {
	newWorld(t)
	exe, _ := os.Executable()
	if err := ProbeLoopback(Options{Helper: exe}); err != nil {
		t.Fatalf("ProbeLoopback: %v", err)
	}
}

// nonrootMain is the test binary run as another user by
// TestLoopbackNonRoot: the route a normal user's shim takes, with
// execgate's own "/proc/self/exe" as the helper. It prints what the
// confined command printed.
func nonrootMain() int {
	ws := os.Getenv("WS")
	if effective(unix.CAP_SYS_ADMIN) {
		fmt.Println("still holds CAP_SYS_ADMIN")
		return 1
	}
	exe, _ := os.Executable()
	g := Grants{Workspace: ws, WriteWorkspace: true, RunCode: true, Loopback: true, Read: []string{filepath.Dir(exe)}}
	p, err := PrepareWith(g, Options{Helper: "/proc/self/exe"})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer p.Close()
	if !p.NeedsChild() {
		fmt.Println("not the helper's route")
		return 1
	}
	out, err := runForked(p, exe, []string{exe}, ws, []string{actVar + "=self"})
	fmt.Print(out)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if err := p.LoopbackErr(); err != nil {
		fmt.Println("fell back:", err)
	}
	return 0
}

// A normal user (the test, run as root, starts itself as nobody) gets the
// private loopback network through the helper.
func TestLoopbackNonRoot(t *testing.T) {
	newWorld(t)
	if os.Geteuid() != 0 {
		if err := ProbeLoopback(Options{Helper: "/proc/self/exe"}); err != nil {
			t.Skipf("not root, and user namespaces are unavailable here: %v", err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sandbox-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{nonrootVar + "=1", "WS=" + ws, "HOME=" + ws, "PATH=/usr/bin:/bin"}
	if os.Geteuid() == 0 {
		os.Chmod(dir, 0o755)
		os.Chown(ws, 65534, 65534)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	want := "ok tcp 127.0.0.1:0\nok udp 127.0.0.1:0\nok tcp [::1]:0\nok udp [::1]:0\n"
	if err != nil || string(out) != want {
		t.Fatalf("as a normal user (%v):\n%s\nwant:\n%s", err, out, want)
	}
}

// The proxy's listener is made inside the command's private network and
// handed out: what the command sends to it arrives outside, by either
// way of making the network.
func TestProxyListenerHandedOut(t *testing.T) {
	w, g := netWorld(t)
	g.Proxy = "127.0.0.1:3128"
	exe, _ := os.Executable()
	for name, mode := range ways(t) {
		t.Run(name, func(t *testing.T) {
			got := make(chan string, 1)
			var lns []net.Listener
			p, err := prepareNet(g, Options{Helper: exe, OnProxy: func(f *os.File) {
				ln, err := net.FileListener(f)
				f.Close()
				if err != nil {
					got <- err.Error()
					return
				}
				lns = append(lns, ln)
				go func() {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					b, _ := io.ReadAll(c)
					c.Close()
					got <- string(b)
				}()
			}}, mode)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			out, err := runForked(p, "/bin/bash", []string{"bash", "-c", "echo through > /dev/tcp/127.0.0.1/3128"}, w.ws, []string{"PATH=/usr/bin:/bin"})
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			select {
			case s := <-got:
				if s != "through\n" {
					t.Fatalf("the listener outside got %q", s)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("nothing reached the listener handed out")
			}
			for _, ln := range lns {
				ln.Close()
			}
		})
	}
}

// A helper whose capabilities cannot be used (lo cannot be brought up, the
// bounding set cannot be dropped: Ubuntu's restricted user namespaces)
// runs the command with the confinement it has without Loopback, rather
// than refusing it. Stood for by a helper started as nobody without new
// namespaces.
func TestHelperWithoutCapabilitiesFallsBack(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("starts the helper as another user, which needs root")
	}
	_, g := netWorld(t)
	dir, err := os.MkdirTemp("", "sandbox-nocaps-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	exe, _ := os.Executable()
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	os.Chown(ws, 65534, 65534)
	g.Workspace, g.TempDir, g.Read = ws, "", []string{dir}
	p := prepareFor(t, g, netHelper)
	p.net.helper, p.net.plainHelper = bin, true
	r, wr, _ := os.Pipe()
	defer r.Close()
	attr := &syscall.ProcAttr{Dir: ws, Env: []string{actVar + "=self"}, Files: []uintptr{0, wr.Fd(), wr.Fd()},
		Sys: &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}}
	pid, release, err := p.ForkExec(bin, []string{bin}, attr)
	defer release()
	wr.Close()
	if err != nil {
		t.Fatalf("refused instead of falling back: %v", err)
	}
	out, _ := io.ReadAll(r)
	var ws2 syscall.WaitStatus
	syscall.Wait4(pid, &ws2, 0, nil)
	if strings.Contains(string(out), "ok ") || !strings.Contains(string(out), "fail tcp 127.0.0.1:0") {
		t.Fatalf("without usable capabilities:\n%s", out)
	}
	if p.LoopbackErr() == nil {
		t.Fatal("ran without its private network, and LoopbackErr does not say so (the audit log reads it)")
	}
}
