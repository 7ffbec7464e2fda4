package hostproxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/netip"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// upstream is a real TCP server standing in for a host: it records the
// head of what it receives and answers with a fixed HTTP response, or
// echoes (for a tunnel).
func upstream(t *testing.T) (addr string, heads chan string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	heads = make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				var head strings.Builder
				for {
					line, err := br.ReadString('\n')
					head.WriteString(line)
					if err != nil || line == "\r\n" {
						break
					}
				}
				heads <- head.String()
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
			}()
		}
	}()
	return ln.Addr().String(), heads
}

// start serves a proxy allowing registry.example.org (any port mapped to
// the upstream) and nothing else.
func start(t *testing.T, up string) (*Proxy, string) {
	p := &Proxy{
		Allowed: func(host string, port int) bool { return host == "registry.example.org" && (port == 443 || port == 80) },
		Refusal: func(hp string) string { return "refused " + hp + ": execgate policy sandbox add host\n" },
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, up) // the test's resolver: every allowed name is the upstream
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go p.Serve(ctx, ln)
	return p, ln.Addr().String()
}

func ask(t *testing.T, proxy, head string) string {
	c, err := net.Dial("tcp", proxy)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = io.WriteString(c, head)
	require.NoError(t, err)
	b, _ := io.ReadAll(c)
	return string(b)
}

func TestConnectAllowed(t *testing.T) {
	up, heads := upstream(t)
	p, addr := start(t, up)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "CONNECT registry.example.org:443 HTTP/1.1\r\nHost: registry.example.org:443\r\n\r\n")
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "HTTP/1.1 200 Connection established\r\n", line)
	br.ReadString('\n')
	// Through the tunnel, bytes reach the host as sent.
	io.WriteString(c, "GET /simple/ HTTP/1.1\r\nHost: registry.example.org\r\n\r\n")
	assert.Equal(t, "GET /simple/ HTTP/1.1\r\nHost: registry.example.org\r\n\r\n", <-heads)
	rest, _ := io.ReadAll(br)
	assert.Contains(t, string(rest), "hello")
	assert.Equal(t, []string{"registry.example.org:443"}, p.Reached())
	assert.Empty(t, p.Refused())
}

func TestRefused(t *testing.T) {
	up, heads := upstream(t)
	p, addr := start(t, up)
	for _, head := range []string{
		"CONNECT evil.example.com:443 HTTP/1.1\r\n\r\n",
		"CONNECT registry.example.org:22 HTTP/1.1\r\n\r\n",
		"GET http://evil.example.com/x HTTP/1.1\r\nHost: registry.example.org\r\n\r\n",
		"CONNECT registry.example.org.evil.com:443 HTTP/1.1\r\n\r\n",
	} {
		out := ask(t, addr, head)
		assert.True(t, strings.HasPrefix(out, "HTTP/1.1 403 Forbidden\r\n"), "%q → %q", head, out)
		assert.Contains(t, out, "execgate policy sandbox add host")
	}
	select {
	case h := <-heads:
		t.Fatalf("a refused request reached the upstream: %q", h)
	case <-time.After(100 * time.Millisecond):
	}
	assert.Equal(t, []string{"evil.example.com:443", "registry.example.org:22", "evil.example.com:80", "registry.example.org.evil.com:443"}, p.Refused())
	assert.Empty(t, p.Reached())
}

func TestPlainHTTPForwarded(t *testing.T) {
	up, heads := upstream(t)
	_, addr := start(t, up)
	out := ask(t, addr, "GET http://registry.example.org/pkg/x?v=1 HTTP/1.1\r\nHost: registry.example.org\r\nProxy-Authorization: secret\r\nAccept: */*\r\n\r\n")
	assert.True(t, strings.HasPrefix(out, "HTTP/1.1 200 OK"), out)
	assert.True(t, strings.HasSuffix(out, "hello"), out)
	assert.Equal(t, "GET /pkg/x?v=1 HTTP/1.1\r\nAccept: */*\r\nHost: registry.example.org\r\n\r\n", <-heads)
}

func TestBadRequests(t *testing.T) {
	up, _ := upstream(t)
	_, addr := start(t, up)
	for _, head := range []string{
		"GET /relative HTTP/1.1\r\n\r\n",
		"CONNECT registry.example.org HTTP/1.1\r\n\r\n",
		"CONNECT registry.example.org:99999 HTTP/1.1\r\n\r\n",
		"GET https://registry.example.org/ HTTP/1.1\r\n\r\n",
		"GET http://user:pw@registry.example.org/ HTTP/1.1\r\n\r\n",
		"SSH-2.0-OpenSSH\r\n\r\n",
	} {
		out := ask(t, addr, head)
		assert.True(t, strings.HasPrefix(out, "HTTP/1.1 400 Bad Request\r\n"), "%q → %q", head, out)
	}
}

// A name allowed but pointed at this machine is not dialled: the private
// network exists to keep the host's own services out.
func TestDialPublicRefusesLocalAddresses(t *testing.T) {
	_, err := dialPublic(context.Background(), "tcp", "localhost:80")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a public address")
	for _, a := range []string{"127.0.0.1", "10.1.2.3", "192.168.1.1", "169.254.169.254", "::1", "fe80::1", "0.0.0.0", "fc00::1"} {
		assert.False(t, public(netip.MustParseAddr(a)), a)
	}
	assert.True(t, public(netip.MustParseAddr("151.101.0.223")))
}

func FuzzReadRequest(f *testing.F) {
	for _, s := range []string{"CONNECT a.b:443 HTTP/1.1\r\n\r\n", "GET http://a.b/x HTTP/1.0\r\nX: y\r\n\r\n", "GET / HTTP/1.1\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		req, err := readRequest(textproto.NewReader(bufio.NewReader(strings.NewReader(in))))
		if err != nil {
			return
		}
		if req.port < 1 || req.port > 65535 {
			t.Fatalf("port %d from %q", req.port, in)
		}
		if req.method != "CONNECT" && !strings.HasPrefix(req.path, "/") {
			t.Fatalf("path %q from %q", req.path, in)
		}
	})
}
