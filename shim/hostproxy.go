package shim

import (
	"context"
	"net"
	"os"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/hostproxy"
	"github.com/execgate/execgate/sandbox"
)

// proxyAddr is where a confined command that runs code finds the proxy to
// its agent's allowed hosts: a listener inside its private network
// (sandbox.Grants.Proxy), so any port will do; this one is outside the
// ephemeral range a test's own servers take.
const proxyAddr = "127.0.0.1:3128"

// serveProxy returns what receives the proxy's listener when the
// command's private network is made, nil when g allows no hosts. The
// proxy serves until ctx ends (the shim's run).
func (s *session) serveProxy(ctx context.Context, g *sandbox.Grants) func(*os.File) {
	if g.Proxy == "" {
		return nil
	}
	hosts, agent := s.extra.Hosts, s.ev.Agent
	p := &hostproxy.Proxy{
		Allowed: func(host string, port int) bool { return config.HostAllowed(hosts, host, port) },
		Refusal: func(hostport string) string { return refusalBody(hostport, agent) },
	}
	s.proxy = p
	return func(f *os.File) {
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			s.log.Warn("proxy listener", "err", err)
			return
		}
		go p.Serve(ctx, ln)
	}
}

// refusalBody is the 403's body: what was refused and how to allow it.
func refusalBody(hostport, agent string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	flag := ""
	if agent != "" {
		flag = " --agent " + agent
	}
	return "execgate: " + hostport + " is not among the hosts this agent's confined commands may reach; " +
		"a person can allow it with: execgate policy sandbox add host " + host + flag + "\n"
}
