// Package rsyslogtest starts a real rsyslogd for tests: the syslog export
// is tested against the daemon teams run, not a stand-in.
package rsyslogtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rsyslog is a real rsyslogd listening on a TCP port and a unix socket of
// its own, writing what it gets, one message a line, to out.
type Rsyslog struct {
	// TCP is its HOST:PORT, Sock its unix socket, Out the file it writes.
	TCP, Sock, Out string
}

// Start starts rsyslogd in the foreground, in a directory of the
// test's own; the test skips, saying why, without it.
func Start(t *testing.T, port int) *Rsyslog {
	t.Helper()
	bin, err := exec.LookPath("rsyslogd")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/rsyslogd"); err != nil {
			t.Skip("rsyslogd is not installed: the syslog export is tested against the real daemon (apt-get install rsyslog; .ci/run does)")
		}
	}
	dir, err := os.MkdirTemp("", "rsl") // short: a unix socket path is at most 108 bytes
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &Rsyslog{TCP: fmt.Sprintf("127.0.0.1:%d", port), Sock: filepath.Join(dir, "log.sock"), Out: filepath.Join(dir, "out.log")}
	conf := fmt.Sprintf(`global(workDirectory=%q)
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket=%q)
module(load="imtcp")
input(type="imtcp" address="127.0.0.1" port="%d")
template(name="line" type="string" string="%%pri%%|%%app-name%%|%%procid%%|%%msgid%%|%%msg%%\n")
*.* action(type="omfile" file=%q template="line")
`, dir, r.Sock, port, r.Out)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rsyslog.conf"), []byte(conf), 0o600))
	cmd := exec.Command(bin, "-n", "-f", filepath.Join(dir, "rsyslog.conf"), "-i", filepath.Join(dir, "rsyslogd.pid"))
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", r.TCP)
		if err != nil {
			return false
		}
		c.Close()
		_, err = os.Stat(r.Sock)
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "rsyslogd did not start: %s", &stderr)
	return r
}

// Lines waits until Out holds n lines and returns them.
func (r *Rsyslog) Lines(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	assert.Eventually(t, func() bool {
		raw, _ := os.ReadFile(r.Out)
		got = strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
		if len(raw) == 0 {
			got = nil
		}
		return len(got) >= n
	}, 10*time.Second, 20*time.Millisecond)
	require.Len(t, got, n, "rsyslogd wrote %q", got)
	return got
}

// FreePort is a TCP port on 127.0.0.1 nothing listens on (as of now).
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
