package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Lifetimes of the secrets.
const (
	// loginTTL bounds how long an unused login link works: long enough to
	// copy it to another screen, short enough that a stale one in a
	// scrollback or shell history is worthless.
	loginTTL = 15 * time.Minute
	// sessionTTL bounds a browser session; after it the page asks for a
	// new link.
	sessionTTL = 24 * time.Hour
	// maxSecrets bounds each table, so that minting links in a loop
	// cannot grow memory without bound.
	maxSecrets = 64
)

// cookieName is the start of the session cookie's name; the server's
// port follows it (Server.cookie).
const cookieName = "execgate_session"

// secrets holds unused login tokens and live sessions. Both are 32 random
// bytes, hex; they are compared in constant time.
type secrets struct {
	mu       sync.Mutex
	logins   map[string]time.Time // token → expiry
	sessions map[string]time.Time // session id → expiry
}

func newSecrets() *secrets {
	return &secrets{logins: map[string]time.Time{}, sessions: map[string]time.Time{}}
}

// randomSecret returns 32 bytes from crypto/rand, hex.
func randomSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics rather than return weak bytes)
	return hex.EncodeToString(b)
}

// mintLogin returns a new one-time login token.
func (s *secrets) mintLogin(now time.Time) string {
	t := randomSecret()
	s.mu.Lock()
	defer s.mu.Unlock()
	prune(s.logins, now)
	s.logins[t] = now.Add(loginTTL)
	return t
}

// redeem exchanges a login token for a new session id; ok is false when
// the token is unknown, used or expired. A token works once.
func (s *secrets) redeem(token string, now time.Time) (session string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prune(s.logins, now)
	key, found := lookup(s.logins, token)
	if !found {
		return "", false
	}
	delete(s.logins, key)
	prune(s.sessions, now)
	session = randomSecret()
	s.sessions[session] = now.Add(sessionTTL)
	return session, true
}

// valid reports whether session is a live session id.
func (s *secrets) valid(session string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	prune(s.sessions, now)
	_, ok := lookup(s.sessions, session)
	return ok
}

// lookup finds key in m comparing every entry in constant time, so that
// response time says nothing about how much of a guess was right.
func lookup(m map[string]time.Time, key string) (string, bool) {
	if key == "" {
		return "", false
	}
	var found string
	for k := range m {
		if subtle.ConstantTimeCompare([]byte(k), []byte(key)) == 1 {
			found = k
		}
	}
	return found, found != ""
}

// prune drops expired entries and, past maxSecrets, the ones closest to
// expiry.
func prune(m map[string]time.Time, now time.Time) {
	for k, exp := range m {
		if !now.Before(exp) {
			delete(m, k)
		}
	}
	for len(m) >= maxSecrets {
		var oldest string
		for k, exp := range m {
			if oldest == "" || exp.Before(m[oldest]) {
				oldest = k
			}
		}
		delete(m, oldest)
	}
}

// hostPolicy decides which Host headers name this server.
type hostPolicy struct {
	// bound is the listening address, host:port.
	bound string
	// extra are names the user allowed (--allow-host), host or host:port.
	extra []string
}

// allows reports whether host (a request's Host header) names this
// server. Loopback names are accepted on any port, so that an
// `ssh -L 9000:127.0.0.1:PORT` tunnel works: a DNS-rebinding page cannot
// send them, since its Host is the attacker's name. Anything else must be
// the bound address or a name the user allowed.
func (p hostPolicy) allows(host string) bool {
	if host == "" {
		return false
	}
	if strings.EqualFold(host, p.bound) || slices.ContainsFunc(p.extra, func(e string) bool {
		return strings.EqualFold(e, host) || strings.EqualFold(e, hostOnly(host))
	}) {
		return true
	}
	return isLoopbackName(hostOnly(host))
}

// hostOnly strips the port from host:port (and brackets from [::1]).
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.Trim(host, "[]")
}

// isLoopbackName reports the names that always mean this machine.
func isLoopbackName(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether origin (an Origin header) is this server as
// the browser reached it: the request's own Host (already checked by
// hostPolicy). Either scheme is accepted because a TLS-terminating proxy
// (tailscale serve) shows the page as https while it reaches us as http;
// no other site can send an Origin with this Host. "null" and anything
// unparsable are foreign.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return false
	}
	return (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}
