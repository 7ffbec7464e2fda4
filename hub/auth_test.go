package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHelloRefused(t *testing.T) {
	h := startHub(t)
	now := time.Now()
	good := func() HelloParams { return newHelloParams(h.token, RoleApprover, "t", now) }
	replayed := good()

	tests := []struct {
		name  string
		setup func(r *raw)
		code  string
	}{
		{name: "wrong token", code: ErrCodeAuth, setup: func(r *raw) {
			r.sendFrame("1", MethodHello, newHelloParams(h.token+"x", RoleApprover, "t", now))
		}},
		{name: "bad HMAC", code: ErrCodeAuth, setup: func(r *raw) {
			p := good()
			p.MAC = strings.Repeat("0", 64)
			r.sendFrame("1", MethodHello, p)
		}},
		{name: "MAC for another role", code: ErrCodeAuth, setup: func(r *raw) {
			p := newHelloParams(h.token, RoleRequester, "t", now)
			p.Role = RoleApprover
			r.sendFrame("1", MethodHello, p)
		}},
		{name: "no MAC", code: ErrCodeAuth, setup: func(r *raw) {
			p := good()
			p.MAC = ""
			r.sendFrame("1", MethodHello, p)
		}},
		{name: "replayed nonce", code: ErrCodeAuth, setup: func(r *raw) {
			r.sendFrame("1", MethodHello, replayed)
		}},
		{name: "stale timestamp", code: ErrCodeAuth, setup: func(r *raw) {
			r.sendFrame("1", MethodHello, newHelloParams(h.token, RoleApprover, "t", now.Add(-11*time.Second)))
		}},
		{name: "future timestamp", code: ErrCodeAuth, setup: func(r *raw) {
			r.sendFrame("1", MethodHello, newHelloParams(h.token, RoleApprover, "t", now.Add(11*time.Second)))
		}},
		{name: "short nonce", code: ErrCodeAuth, setup: func(r *raw) {
			p := good()
			p.Nonce = "abcd"
			p.MAC = helloMAC(h.token, p.Nonce, p.TimestampMs, p.Role)
			r.sendFrame("1", MethodHello, p)
		}},
		{name: "missing hello", code: ErrCodeAuth, setup: func(r *raw) {
			r.sendFrame("1", MethodList, struct{}{})
		}},
		{name: "garbage first", code: ErrCodeAuth, setup: func(r *raw) { r.send("GET / HTTP/1.0") }},
		{name: "wrong version", code: ErrCodeVersion, setup: func(r *raw) {
			p := good()
			p.Version = 1
			r.sendFrame("1", MethodHello, p)
		}},
		{name: "unknown role", code: ErrCodeAuth, setup: func(r *raw) {
			r.sendFrame("1", MethodHello, newHelloParams(h.token, "admin", "t", now))
		}},
	}
	// The replayed hello is first accepted once.
	first := h.raw(t)
	first.sendFrame("1", MethodHello, replayed)
	require.Nil(t, first.next().Error)

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.raw(t)
			tt.setup(r)
			f := r.next()
			require.NotNil(t, f.Error, "frame %+v", f)
			assert.Equal(t, tt.code, f.Error.Code, f.Error.Message)
			assert.True(t, r.closed(), "connection closed after a refused hello")
		})
	}
	// The hub still serves others.
	c := h.dial(t, RoleApprover, "after")
	_, err := c.Status(context.Background())
	require.NoError(t, err)
}

// The hub's clock decides the window: ServerOptions.Now moved 20 s ahead
// makes a client's fresh hello stale.
func TestHelloWindowUsesHubClock(t *testing.T) {
	h := startHub(t)
	h.now.set(20 * time.Second)
	_, err := Dial(context.Background(), DialOptions{Socket: h.socket, Token: h.token, Role: RoleApprover})
	require.Error(t, err)
	assert.Equal(t, ErrCodeAuth, errCode(err))
	assert.Contains(t, err.Error(), "timestamp outside")
	h.now.set(9 * time.Second)
	c, err := Dial(context.Background(), DialOptions{Socket: h.socket, Token: h.token, Role: RoleApprover})
	require.NoError(t, err)
	c.Close()
}

func TestNoHelloInTime(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the hello timeout")
	}
	t.Parallel()
	h := startHub(t)
	r := h.raw(t)
	f, err := r.read(defaultHelloTimeout + 5*time.Second)
	require.NoError(t, err)
	require.NotNil(t, f.Error)
	assert.Equal(t, ErrCodeAuth, f.Error.Code)
	assert.True(t, r.closed())
}

func TestNonceMemoryBounded(t *testing.T) {
	var c nonceCache
	now := time.Now()
	for i := range maxNonces {
		ok, full := c.add(strconv.Itoa(i), now.Add(helloWindow), now)
		require.True(t, ok)
		require.False(t, full)
	}
	ok, full := c.add("one more", now.Add(helloWindow), now)
	assert.False(t, ok)
	assert.True(t, full, "refused rather than forget a live nonce")
	// Once the window has passed, old nonces are forgotten.
	later := now.Add(helloWindow + time.Second)
	ok, _ = c.add("one more", later.Add(helloWindow), later)
	assert.True(t, ok)
	assert.Len(t, c.seen, 1)
	ok, _ = c.add("one more", later.Add(helloWindow), later)
	assert.False(t, ok, "replay")
}

func TestTokenCreatedAndRotated(t *testing.T) {
	h := startHub(t)
	// startHub began without a token: the hub created it.
	require.Len(t, h.token, 43)
	old := h.token

	// Rotate the token in the file: the old one stops working at once.
	raw, err := os.ReadFile(h.config)
	require.NoError(t, err)
	rotated := strings.Replace(string(raw), old, "a-new-token-of-enough-length-000000000000", 1)
	require.NoError(t, os.WriteFile(h.config, []byte(rotated), 0o600))

	_, err = Dial(context.Background(), DialOptions{Socket: h.socket, Token: old, Role: RoleApprover})
	assert.Equal(t, ErrCodeAuth, errCode(err))
	c, err := Dial(context.Background(), DialOptions{Socket: h.socket, Token: "a-new-token-of-enough-length-000000000000", Role: RoleApprover})
	require.NoError(t, err)
	c.Close()

	// A file that becomes unreadable refuses everyone (fail closed) and is
	// left alone.
	require.NoError(t, os.WriteFile(h.config, []byte(`{"version":`), 0o600))
	_, err = Dial(context.Background(), DialOptions{Socket: h.socket, Token: "a-new-token-of-enough-length-000000000000", Role: RoleApprover})
	assert.Equal(t, ErrCodeAuth, errCode(err))
	assert.Contains(t, err.Error(), "cannot read its configuration")
	b, err := os.ReadFile(h.config)
	require.NoError(t, err)
	assert.Equal(t, `{"version":`, string(b))
}

// helloVector is hub/testdata/hello-vector.json: a worked example of the
// hello MAC that docs/protocol.md shows.
type helloVector struct {
	Token       string `json:"token"`
	Nonce       string `json:"nonce"`
	TimestampMs int64  `json:"timestampMs"`
	Role        Role   `json:"role"`
	Message     string `json:"message"`
	MAC         string `json:"mac"`
	// The hub's proof: the connection key and a sealed hello answer.
	HubNonce        string `json:"hubNonce"`
	KeyMessage      string `json:"keyMessage"`
	Key             string `json:"key"`
	Frame           string `json:"frame"`
	FrameDigest     string `json:"frameDigest"`
	FrameMACMessage string `json:"frameMACMessage"`
	FrameMAC        string `json:"frameMAC"`
	Sealed          string `json:"sealed"`
}

func TestHelloVector(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "hello-vector.json"))
	require.NoError(t, err)
	var v helloVector
	require.NoError(t, json.Unmarshal(b, &v))
	assert.Equal(t, v.Message, helloMessage(v.Nonce, v.TimestampMs, v.Role))
	assert.Equal(t, v.MAC, helloMAC(v.Token, v.Nonce, v.TimestampMs, v.Role))
	// The hub's proof (numbers computed with openssl, as the
	// documentation shows).
	key := connKey(v.Token, v.Role, v.Nonce, v.HubNonce)
	assert.Equal(t, v.Key, hex.EncodeToString(key))
	assert.Equal(t, v.Sealed+"\n", string(seal(key, dirHub, 1, []byte(v.Frame))))
	d := sha256.Sum256([]byte(v.Frame))
	assert.Equal(t, v.FrameDigest, hex.EncodeToString(d[:]))
	assert.Equal(t, v.FrameMAC, hex.EncodeToString(frameMAC(key, dirHub, 1, &d)))
	body, err := openSealed([]byte(v.Sealed), key, dirHub, 1)
	require.NoError(t, err)
	assert.Equal(t, v.Frame, string(body))

	// The documentation shows the same numbers.
	doc, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	require.NoError(t, err)
	for _, s := range []string{v.Token, v.Nonce, strconv.FormatInt(v.TimestampMs, 10), v.Message, v.MAC,
		v.HubNonce, v.KeyMessage, v.Key, v.FrameDigest, v.FrameMACMessage, v.FrameMAC, v.Sealed} {
		assert.Contains(t, string(doc), s)
	}
	// Every method and event name of the contract is documented.
	for _, name := range []string{MethodHello, MethodRequest, MethodResolve, MethodList, MethodGet, MethodConfigGet,
		MethodConfigSet, MethodSubscribe, MethodReport, MethodSessionGet, MethodSessionSet, MethodSessionClear,
		MethodSessionList, MethodStatus, MethodWithdraw, EventRequested, EventResolved, EventExpired, EventWithdrawn,
		EventStarted, EventFinished, EventDenied, EventSession} {
		assert.Regexp(t, regexp.MustCompile("`"+regexp.QuoteMeta(name)+"`"), string(doc))
	}
	for _, code := range []string{ErrCodeBadRequest, ErrCodeTooLarge, ErrCodeAuth, ErrCodeForbidden, ErrCodeNotFound,
		ErrCodeConflict, ErrCodeRateLimit, ErrCodeVersion, ErrCodeInternal} {
		assert.Contains(t, string(doc), "`"+code+"`")
	}
}
