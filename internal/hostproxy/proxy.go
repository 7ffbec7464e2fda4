// Package hostproxy is the proxy through which a confined command reaches
// the hosts its agent allows (agents.NAME.sandbox.hosts): HTTPS through
// CONNECT, plain HTTP by absolute URI. The command's private network has
// nothing but loopback; the proxy's listener lives there, and the proxy
// dials out from the shim's own network. A host not allowed gets a 403
// whose body says how to allow it. The proxy resolves names; the command
// cannot.
//
// It is written on net/textproto rather than net/http, which the shim,
// started for every command, does not link.
package hostproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxy serves one command's private network.
type Proxy struct {
	// Allowed reports whether host (as the client named it) at port may
	// be reached.
	Allowed func(host string, port int) bool
	// Refusal is the body of the 403 for host:port.
	Refusal func(hostport string) string
	// Dial connects to an allowed host:port; nil dials names only to
	// public addresses (see dialPublic).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex
	reached []string
	refused []string
}

// headerTimeout bounds the wait for a request's head.
const headerTimeout = 30 * time.Second

// Serve accepts on ln until it is closed or ctx is done.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go p.handle(ctx, c)
	}
}

// Reached and Refused list the host:port pairs asked for, in order, once
// each.
func (p *Proxy) Reached() []string { return p.list(&p.reached) }
func (p *Proxy) Refused() []string { return p.list(&p.refused) }

func (p *Proxy) list(l *[]string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(*l)
}

func (p *Proxy) note(l *[]string, hostport string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(*l, hostport) {
		*l = append(*l, hostport)
	}
}

// request is the head of one proxy request.
type request struct {
	method, target, proto string
	header                textproto.MIMEHeader
	// host and port are where it goes; path is the origin-form target of
	// a plain HTTP request.
	host string
	port int
	path string
}

// readRequest reads a request's head: "CONNECT host:port HTTP/1.1" or
// "METHOD http://host[:port]/path HTTP/1.x", and its header.
func readRequest(r *textproto.Reader) (*request, error) {
	line, err := r.ReadLine()
	if err != nil {
		return nil, err
	}
	parts := strings.Split(line, " ")
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "HTTP/1.") || parts[0] == "" {
		return nil, fmt.Errorf("not an HTTP/1 request line: %q", line)
	}
	req := &request{method: parts[0], target: parts[1], proto: parts[2]}
	if req.header, err = r.ReadMIMEHeader(); err != nil {
		return nil, err
	}
	if req.method == "CONNECT" {
		host, port, err := net.SplitHostPort(req.target)
		if err != nil {
			return nil, fmt.Errorf("CONNECT needs host:port: %q", req.target)
		}
		req.host = host
		req.port, err = strconv.Atoi(port)
		if err != nil || req.port < 1 || req.port > 65535 {
			return nil, fmt.Errorf("CONNECT needs a port: %q", req.target)
		}
		return req, nil
	}
	u, err := url.Parse(req.target)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return nil, fmt.Errorf("want CONNECT for HTTPS, or an absolute http:// URI: %q", req.target)
	}
	req.host, req.port = u.Hostname(), 80
	if ps := u.Port(); ps != "" {
		if req.port, err = strconv.Atoi(ps); err != nil || req.port < 1 || req.port > 65535 {
			return nil, fmt.Errorf("bad port in %q", req.target)
		}
	}
	req.path = u.EscapedPath()
	if req.path == "" {
		req.path = "/"
	}
	if u.RawQuery != "" {
		req.path += "?" + u.RawQuery
	}
	return req, nil
}

func (p *Proxy) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(headerTimeout))
	br := bufio.NewReader(c)
	req, err := readRequest(textproto.NewReader(br))
	if err != nil {
		reply(c, 400, "Bad Request", "execgate's proxy: "+err.Error()+"\n")
		return
	}
	c.SetReadDeadline(time.Time{})
	hostport := net.JoinHostPort(req.host, strconv.Itoa(req.port))
	if req.host == "" || !p.Allowed(req.host, req.port) {
		p.note(&p.refused, hostport)
		reply(c, 403, "Forbidden", p.Refusal(hostport))
		return
	}
	dial := p.Dial
	if dial == nil {
		dial = dialPublic
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	up, err := dial(dctx, "tcp", hostport)
	cancel()
	if err != nil {
		reply(c, 502, "Bad Gateway", "execgate's proxy: "+err.Error()+"\n")
		return
	}
	defer up.Close()
	p.note(&p.reached, hostport)
	if req.method == "CONNECT" {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
	} else if err := writeHead(up, req); err != nil {
		return
	}
	// Whatever follows on this connection goes to this host alone.
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, br); closeWrite(up); done <- struct{}{} }()
	go func() { io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

// writeHead sends a plain HTTP request's head upstream in origin form,
// without the proxy's own headers.
func writeHead(w io.Writer, req *request) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\r\n", req.method, req.path, req.proto)
	keys := make([]string, 0, len(req.header))
	for k := range req.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "Proxy-") {
			continue
		}
		for _, v := range req.header[k] {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

func reply(w io.Writer, code int, status, body string) {
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, status, len(body), body)
}

// dialPublic dials host:port. A name must resolve to public addresses
// only: an allowed name pointed at this machine (127.0.0.1, a link-local
// or private address) would reach the host's own services, which the
// private network exists to keep out. An IP address the user allowed
// explicitly is dialled as it is.
func dialPublic(ctx context.Context, network, hostport string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	if _, err := netip.ParseAddr(host); err == nil {
		return d.DialContext(ctx, network, hostport)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	var last error = fmt.Errorf("%s has no address", host)
	for _, a := range addrs {
		a = a.Unmap()
		if !public(a) {
			last = fmt.Errorf("%s resolves to %s, which is not a public address", host, a)
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// public reports whether a is an address on the internet at large.
func public(a netip.Addr) bool {
	return a.IsGlobalUnicast() && !a.IsPrivate() && !a.IsLoopback() && !a.IsLinkLocalUnicast()
}
