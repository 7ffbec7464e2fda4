package hub

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"
	"time"
)

// helloWindow is how far a hello's timestamp may be from the hub's clock;
// a nonce is remembered as long as its timestamp is within it.
const helloWindow = 10 * time.Second

// maxNonces bounds the nonce memory. At the per-connection rate limit only
// a flood of connections could fill it; the hub then refuses hellos until
// old nonces age out rather than forget one early (which would allow a
// replay).
const maxNonces = 100_000

// Nonce length limits, in hex characters: at least 16 random bytes.
const (
	minNonceHex = 32
	maxNonceHex = 128
)

// helloMessage is what a hello's MAC covers (see HelloParams).
func helloMessage(nonce string, timestampMs int64, role Role) string {
	return nonce + ":" + strconv.FormatInt(timestampMs, 10) + ":" +
		"execgate-hub/" + strconv.Itoa(ProtocolVersion) + " " + string(role)
}

// helloMAC computes HelloParams.MAC: hex HMAC-SHA256 keyed with the token's
// text as it appears in the configuration file.
func helloMAC(token, nonce string, timestampMs int64, role Role) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(helloMessage(nonce, timestampMs, role)))
	return hex.EncodeToString(m.Sum(nil))
}

// newHelloParams builds a signed hello for a client.
func newHelloParams(token string, role Role, name string, now time.Time) HelloParams {
	nonce := randomHex(16)
	ts := now.UnixMilli()
	p := HelloParams{Version: ProtocolVersion, Role: role, Nonce: nonce, TimestampMs: ts, Name: name}
	if token != "" {
		p.MAC = helloMAC(token, nonce, ts, role)
	}
	return p
}

// randomHex returns n random bytes, hex encoded.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand crashes the program instead)
	return hex.EncodeToString(b)
}

// isHex reports whether s is non-empty lowercase or uppercase hex.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// nonceCache remembers the nonces of accepted hellos until their timestamp
// leaves the window, so that a captured hello cannot be replayed.
type nonceCache struct {
	mu        sync.Mutex
	seen      map[string]time.Time // nonce → when it may be forgotten
	lastSweep time.Time
}

// add records nonce, valid until until; it reports false when the nonce was
// seen already or the memory is full.
func (c *nonceCache) add(nonce string, until, now time.Time) (ok bool, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]time.Time{}
	}
	if exp, dup := c.seen[nonce]; dup && now.Before(exp) {
		return false, false
	}
	// Sweeping is O(n), so at most once a second: expiries are seconds
	// apart anyway.
	if len(c.seen) >= maxNonces/2 && now.Sub(c.lastSweep) >= time.Second {
		c.lastSweep = now
		for n, exp := range c.seen {
			if !now.Before(exp) {
				delete(c.seen, n)
			}
		}
	}
	if len(c.seen) >= maxNonces {
		return false, true
	}
	c.seen[nonce] = until
	return true, false
}

// nonceOK reports whether a hello's nonce has the required form.
func nonceOK(nonce string) bool {
	return len(nonce) >= minNonceHex && len(nonce) <= maxNonceHex && isHex(nonce)
}

// verifyHello checks a same-uid hello's proof. It returns "" when the hello
// is good, else why not (one line, for the client).
func verifyHello(p *HelloParams, token string, now time.Time, nonces *nonceCache) string {
	if token == "" {
		return "the hub has no token"
	}
	if !nonceOK(p.Nonce) {
		return "nonce must be 32 to 128 hex characters"
	}
	ts := time.UnixMilli(p.TimestampMs)
	if d := now.Sub(ts); d > helloWindow || d < -helloWindow {
		return "timestamp outside the ±10 s window (check the clock)"
	}
	want := helloMAC(token, p.Nonce, p.TimestampMs, p.Role)
	if !hmac.Equal([]byte(want), []byte(p.MAC)) {
		return "bad MAC (wrong token?)"
	}
	ok, full := nonces.add(p.Nonce, ts.Add(helloWindow+time.Second), now)
	switch {
	case full:
		return "too many recent handshakes; try again in a few seconds"
	case !ok:
		return "nonce already used (replay)"
	}
	return ""
}
