package config

import (
	"net/netip"
	"strconv"
	"strings"
)

// An allowed host (agents.NAME.sandbox.hosts) is what a confined command
// that runs code may reach through the shim's proxy: an exact name
// ("pypi.org"), every name under a suffix ("*.pythonhosted.org", not the
// suffix itself), or an IP address; each with ":port" for that port
// alone, else for 80 and 443. Names are matched as sent to the proxy, in
// lower case; the proxy resolves them.

// badSandboxHost says why h cannot be an allowed host, or "".
func badSandboxHost(h string) string {
	name, port, hasPort := splitHostEntry(h)
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
			return "want a port from 1 to 65535 after the colon"
		}
	}
	if a, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
		bracketed := strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]")
		if a.Is6() != bracketed || strings.Trim(name, "[]") != strings.TrimSuffix(strings.TrimPrefix(name, "["), "]") || a.Zone() != "" {
			return "write an IPv6 address in brackets, without a zone: [2001:db8::1]:443"
		}
		if a.IsUnspecified() {
			return "the unspecified address is no host"
		}
		return ""
	}
	wild := strings.HasPrefix(name, "*.")
	if wild {
		name = name[2:]
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return "want a host name with a dot (pypi.org), *. and a name with a dot (*.example.com), or an IP address"
	}
	for _, l := range labels {
		if !dnsLabel(l) {
			return "want a host name of letters, digits, - and . only (a * only as *. in front)"
		}
	}
	return ""
}

// splitHostEntry splits "name:port" and "[v6]:port"; a bare IPv6 address
// without brackets has no port.
func splitHostEntry(h string) (name, port string, hasPort bool) {
	if strings.HasPrefix(h, "[") {
		if i := strings.Index(h, "]"); i >= 0 {
			if rest := h[i+1:]; strings.HasPrefix(rest, ":") {
				return h[:i+1], rest[1:], true
			}
		}
		return h, "", false
	}
	if strings.Count(h, ":") == 1 {
		name, port, _ = strings.Cut(h, ":")
		return name, port, true
	}
	return h, "", false
}

// dnsLabel reports whether l is one label of a host name (RFC 1123).
func dnsLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, c := range l {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
		default:
			return false
		}
	}
	return true
}

// HostAllowed reports whether host (a name as a client sent it, or an IP
// address) at port is among hosts (SandboxFor's, lower case).
func HostAllowed(hosts []string, host string, port int) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		host = a.String()
		if a.Is6() && !a.Is4In6() {
			host = "[" + host + "]"
		}
	}
	for _, h := range hosts {
		name, p, hasPort := splitHostEntry(h)
		if hasPort {
			if strconv.Itoa(port) != p {
				continue
			}
		} else if port != 80 && port != 443 {
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
			name = a.String()
			if a.Is6() && !a.Is4In6() {
				name = "[" + name + "]"
			}
		}
		if suffix, ok := strings.CutPrefix(name, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
			continue
		}
		if host == name {
			return true
		}
	}
	return false
}
