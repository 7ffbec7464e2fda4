//go:build linux && (amd64 || arm64)

package sandbox

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// A confined command with the user's terminal as its input cannot type
// into it: what TIOCSTI pushes there, the user's shell reads and runs,
// unconfined, after the command. Checked against the same program run
// unconfined, where the kernel allows it.
func TestTerminalInjectionFails(t *testing.T) {
	w := newWorld(t)
	python := ""
	for _, p := range []string{"/usr/local/bin/python3", "/usr/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("no python3 among the system's programs")
	}
	const inject = `import fcntl, termios
for c in b"echo INJECTED\n":
    fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))
`
	run := func(confined bool) (string, error) {
		t.Helper()
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Skipf("no terminal: %v", err)
		}
		defer ptmx.Close()
		defer tty.Close()
		cmd := exec.Command(python, "-c", inject)
		cmd.Dir, cmd.Stdin = w.ws, tty
		cmd.Env = []string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin"}
		if confined {
			p, err := Prepare(w.grants())
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			release, err := p.OnThread(cmd.Start)
			defer release()
			if err != nil {
				t.Fatal(err)
			}
		} else if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		runErr := cmd.Wait()
		// What is waiting to be read on the terminal, as the user's shell
		// would read it next.
		fd := int(tty.Fd()) // Fd makes it blocking: once, then not
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 256)
		n, _ := unix.Read(fd, buf)
		return string(buf[:max(n, 0)]), runErr
	}
	pending, err := run(false)
	if !strings.Contains(pending, "INJECTED") {
		t.Skipf("this kernel refuses TIOCSTI anyway (dev.tty.legacy_tiocsti=0?): %v", err)
	}
	pending, err = run(true)
	if strings.Contains(pending, "INJECTED") || err == nil {
		t.Fatalf("a confined command typed %q into the terminal (err %v)", pending, err)
	}
}
