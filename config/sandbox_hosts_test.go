package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSandboxHostEntries(t *testing.T) {
	for _, ok := range []string{"pypi.org", "files.pythonhosted.org", "*.pythonhosted.org", "proxy.golang.org:443",
		"Registry.NPMjs.org", "10.0.0.5", "10.0.0.5:8080", "[2001:db8::1]", "[2001:db8::1]:443", "127.0.0.1:8080"} {
		assert.Empty(t, badSandboxHost(ok), ok)
	}
	for _, bad := range []string{"", "localhost", "*", "*.com", "*.", "pypi.org:", "pypi.org:0", "pypi.org:65536",
		"pypi.org:08", "pypi.org:http", "a*.example.com", "*.*.example.com", "exa mple.com", "-x.example.com",
		"example.com/", "https://pypi.org", "2001:db8::1", "[2001:db8::1", "0.0.0.0", "[::]:443", "[fe80::1%eth0]",
		"pypi.org:443:1", "~/x", "../x", "exam_ple.com"} {
		assert.NotEmpty(t, badSandboxHost(bad), bad)
	}
}

func TestHostAllowed(t *testing.T) {
	hosts := []string{"*.pythonhosted.org", "10.0.0.5:8080", "[2001:db8::1]", "proxy.golang.org", "pypi.org:8443"}
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"proxy.golang.org", 443, true},
		{"PROXY.golang.org.", 443, true},
		{"proxy.golang.org", 80, true},
		{"proxy.golang.org", 22, false},
		{"sum.golang.org", 443, false},
		{"evilproxy.golang.org", 443, false},
		{"files.pythonhosted.org", 443, true},
		{"pythonhosted.org", 443, false},
		{"evilpythonhosted.org", 443, false},
		{"pythonhosted.org.evil.com", 443, false},
		{"pypi.org", 443, false},
		{"pypi.org", 8443, true},
		{"10.0.0.5", 8080, true},
		{"10.0.0.5", 443, false},
		{"2001:db8::1", 443, true},
		{"[2001:db8:0::1]", 443, true},
		{"127.0.0.1", 443, false},
		{"", 443, false},
	} {
		assert.Equal(t, c.want, HostAllowed(hosts, c.host, c.port), "%s:%d", c.host, c.port)
	}
}

func FuzzSandboxHost(f *testing.F) {
	for _, s := range []string{"pypi.org", "*.x.org:443", "[::1]:1", "1.2.3.4"} {
		f.Add(s, s, 443)
	}
	f.Fuzz(func(t *testing.T, entry, host string, port int) {
		if badSandboxHost(entry) != "" {
			return
		}
		// A valid entry never allows a host with characters no name has.
		for _, c := range host {
			if c == '/' || c == '@' || c == ' ' || c == '#' {
				if HostAllowed([]string{entry}, host, port) {
					t.Fatalf("%q allows %q", entry, host)
				}
				return
			}
		}
		HostAllowed([]string{entry}, host, port)
	})
}
