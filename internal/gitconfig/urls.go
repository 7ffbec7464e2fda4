package gitconfig

import (
	"net/url"
	"path/filepath"
	"strings"
)

// accessedURLs are the URLs a network command may reach: the URLs of
// every remote and submodule the configuration (and .gitmodules) names,
// every operand that looks like a URL, and each of those rewritten by
// url.BASE.insteadOf. Which remote the command uses is not worked out:
// every one is a candidate, which can only find more than git would.
func (c *Config) accessedURLs(inv Invocation) []string {
	var out []string
	for _, a := range inv.Args {
		if strings.Contains(a, "://") || strings.Contains(a, "::") {
			out = append(out, a)
		}
	}
	entries := c.Entries
	if c.Repo.WorkTree != "" {
		if b, err := readLimited(filepath.Join(c.Repo.WorkTree, ".gitmodules"), maxConfigFile); err == nil {
			if mods, err := Parse(b, ".gitmodules"); err == nil {
				entries = append(append([]Entry(nil), entries...), mods...)
			} else {
				// Unreadable: any URL at all.
				out = append(out, "")
			}
		}
	}
	for _, e := range entries {
		switch {
		case (e.Section() == "remote" || e.Section() == "submodule") && (e.Key() == "url" || e.Key() == "pushurl"):
			out = append(out, e.Value)
		case e.Section() == "url" && (e.Key() == "insteadof" || e.Key() == "pushinsteadof"):
			out = append(out, e.Subsection())
		}
	}
	n := len(out)
	for _, e := range c.Entries {
		if e.Section() != "url" || e.Key() != "insteadof" && e.Key() != "pushinsteadof" || e.Value == "" {
			continue
		}
		for _, u := range out[:n] {
			if rest, ok := strings.CutPrefix(u, e.Value); ok {
				out = append(out, e.Subsection()+rest)
			}
		}
	}
	return out
}

// urlMatches reports whether the URL pattern of a credential.URL.*
// variable may apply to one of urls (urlmatch.c): the same scheme, host
// (a leading *. matches one label) and port. The pattern's user and path
// are not compared, which can only match more. A pattern or URL that does
// not parse matches.
func urlMatches(pattern string, urls []string) bool {
	p, err := url.Parse(pattern)
	if err != nil || p.Scheme == "" || p.Host == "" {
		return true
	}
	for _, raw := range urls {
		if raw == "" {
			return true
		}
		if !strings.Contains(raw, "://") {
			continue // a path or an scp-like address: ssh or a local repository, no credential helper
		}
		u, err := url.Parse(raw)
		if err != nil {
			return true
		}
		if u.Scheme == "" || u.Host == "" {
			continue // a path or scp-like address: ssh or a local repository, no credential helper
		}
		if !strings.EqualFold(u.Scheme, p.Scheme) || portOf(u) != portOf(p) {
			continue
		}
		if hostMatches(strings.ToLower(p.Hostname()), strings.ToLower(u.Hostname())) {
			return true
		}
	}
	return false
}

// hostMatches compares hosts label by label, a * label matching any one.
func hostMatches(pattern, host string) bool {
	pl, hl := strings.Split(pattern, "."), strings.Split(host, ".")
	if len(pl) != len(hl) {
		return false
	}
	for i := range pl {
		if pl[i] != "*" && pl[i] != hl[i] {
			return false
		}
	}
	return true
}

// portOf is u's port, or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	case "ftp":
		return "21"
	case "ftps":
		return "990"
	}
	return ""
}
