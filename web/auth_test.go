package web

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// get sends a GET with extra headers and returns the status and body.
func get(t *testing.T, c *http.Client, u string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			// The jar picks cookies by the URL, but be explicit: the
			// browser would send the cookie it holds for this host.
			if c.Jar != nil {
				for _, ck := range c.Jar.Cookies(req.URL) {
					req.AddCookie(ck)
				}
			}
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestLoginTokenWorksOnce(t *testing.T) {
	e := startEnv(t)
	c := client(t)
	u := e.login(t, c)
	cookies := c.Jar.Cookies(mustURL(t, e.base))
	require.Len(t, cookies, 1)
	require.Equal(t, e.web.cookie, cookies[0].Name)

	// The Set-Cookie header itself: HttpOnly and SameSite=Strict.
	c2 := client(t)
	resp, err := c2.Get(e.web.LoginURL())
	require.NoError(t, err)
	resp.Body.Close()
	sc := resp.Header.Get("Set-Cookie")
	require.Contains(t, sc, "HttpOnly")
	require.Contains(t, sc, "SameSite=Strict")
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))

	code, body, _ := get(t, c, e.base+"/", nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `<script src="/static/app.js"`)

	// The same link again, from anyone, is refused.
	for _, cl := range []*http.Client{c, client(t)} {
		code, body, _ := get(t, cl, u, nil)
		require.Equal(t, http.StatusForbidden, code)
		require.Contains(t, body, "used, expired or wrong")
	}
	code, _, _ = get(t, client(t), e.base+"/login?token=", nil)
	require.Equal(t, http.StatusForbidden, code)
	code, _, _ = get(t, client(t), e.base+"/login?token="+strings.Repeat("0", 64), nil)
	require.Equal(t, http.StatusForbidden, code)
}

func TestNoCookieRefused(t *testing.T) {
	e := startEnv(t)
	for _, path := range []string{"/", "/static/app.js", "/ws"} {
		code, body, _ := get(t, client(t), e.base+path, nil)
		require.Equal(t, http.StatusUnauthorized, code, path)
		require.Contains(t, body, "not logged in", path)
	}
	// A forged cookie is no better.
	c := client(t)
	c.Jar.SetCookies(mustURL(t, e.base), []*http.Cookie{{Name: e.web.cookie, Value: strings.Repeat("a", 64)}})
	code, _, _ := get(t, c, e.base+"/", nil)
	require.Equal(t, http.StatusUnauthorized, code)
}

func TestForeignOriginAndHostRefused(t *testing.T) {
	e := startEnv(t)
	c := client(t)
	e.login(t, c)
	_, port, _ := strings.Cut(e.web.Addr(), ":")
	cases := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"own origin", map[string]string{"Origin": e.base}, http.StatusOK},
		{"localhost any port (ssh -L)", map[string]string{"Host": "localhost:9999", "Origin": "http://localhost:9999"}, http.StatusOK},
		{"foreign origin", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"null origin", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"same host other scheme-less junk", map[string]string{"Origin": e.base + "/x"}, http.StatusForbidden},
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"rebinding host", map[string]string{"Host": "evil.example:" + port}, http.StatusMisdirectedRequest},
		{"rebinding host, matching origin", map[string]string{"Host": "evil.example:" + port, "Origin": "http://evil.example:" + port}, http.StatusMisdirectedRequest},
		{"lookalike host", map[string]string{"Host": "localhost.evil.example:" + port}, http.StatusMisdirectedRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, h := get(t, c, e.base+"/", tc.hdr)
			require.Equal(t, tc.want, code)
			require.Contains(t, h.Get("Content-Security-Policy"), "frame-ancestors 'none'")
			require.Equal(t, "DENY", h.Get("X-Frame-Options"))
		})
	}
	// The login link itself is refused from a foreign origin or host.
	code, _, _ := get(t, client(t), e.web.LoginURL(), map[string]string{"Host": "evil.example:" + port})
	require.Equal(t, http.StatusMisdirectedRequest, code)
}

func TestWebSocketForeignOriginRefused(t *testing.T) {
	e := startEnv(t)
	c := client(t)
	e.login(t, c)
	wsURL := "ws" + strings.TrimPrefix(e.base, "http") + "/ws"
	ctx := context.Background()

	_, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: c, HTTPHeader: http.Header{"Origin": {"http://evil.example"}}})
	require.Error(t, err)
	require.NotNil(t, resp)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	// Without the cookie, even from the right origin.
	_, resp, err = websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {e.base}}})
	require.Error(t, err)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// With both, the socket opens and says hello.
	ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: c, HTTPHeader: http.Header{"Origin": {e.base}}})
	require.NoError(t, err)
	defer ws.CloseNow()
	_, msg, err := ws.Read(ctx)
	require.NoError(t, err)
	require.Contains(t, string(msg), `"type":"hello"`)
}
