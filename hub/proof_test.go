package hub

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeHub listens on a socket of its own and answers every hello with ok,
// and every other request as answer says, sealing its frames as seal
// says: what a process that does not know the token can do.
func fakeHub(t *testing.T, seal func(n uint64, body []byte) []byte, answer func(method string) any) string {
	t.Helper()
	socket := filepath.Join(shortTempDir(t), "hub.sock")
	ln, err := net.Listen("unix", socket)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				r := bufio.NewReader(nc)
				var n uint64
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					if u, ok := splitSeal(line); ok {
						line = u.body
					}
					var f Frame
					if json.Unmarshal(line, &f) != nil {
						return
					}
					var result any = answer(f.Method)
					if f.Method == MethodHello {
						var p HelloParams
						json.Unmarshal(f.Params, &p)
						result = HelloResult{Version: p.Version, Role: p.Role, Approvers: 1, HubNonce: randomHex(16)}
					}
					raw, _ := json.Marshal(result)
					ok := true
					b, _ := json.Marshal(Frame{ID: f.ID, OK: &ok, Result: raw})
					n++
					nc.Write(seal(n, b))
				}
			}()
		}
	}()
	return socket
}

// forged is what a process without the token answers: a loosened session
// and an allowed request.
func forged(method string) any {
	switch method {
	case MethodSessionGet:
		return SessionOverride{AgentID: "agent-1", Security: "full", Ask: "off"}
	case MethodRequest:
		d := AllowOnce
		return ApprovalAnswer{ID: "x", Decision: &d, Outcome: OutcomeDecided}
	}
	return struct{}{}
}

// TestFakeHubRefused: a process of our own uid listening on the socket
// and answering like a hub, but without the token, is refused at the
// hello, whether it seals nothing, seals with a key of its own, or replays
// a frame the real hub sealed for another connection; so nothing it says
// about sessions or approvals is ever read.
func TestFakeHubRefused(t *testing.T) {
	token := "Xq3vR8tYp2LmN6wZ0aBcDeFgHiJkLmNoPqRsTuVwXyA"
	plain := func(_ uint64, b []byte) []byte { return append(b, '\n') }
	ownKey := func(n uint64, b []byte) []byte {
		return seal([]byte("a key of its own, not the token's"), dirHub, n, b)
	}
	// A guess at the key from the token it does not have, with the
	// right construction otherwise.
	guessed := func(n uint64, b []byte) []byte {
		return seal(connKey("not-the-token", RoleRequester, strings.Repeat("0", 32), strings.Repeat("0", 32)), dirHub, n, b)
	}
	for name, sealer := range map[string]func(uint64, []byte) []byte{"unsealed": plain, "own key": ownKey, "guessed key": guessed} {
		t.Run(name, func(t *testing.T) {
			socket := fakeHub(t, sealer, forged)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := Dial(ctx, DialOptions{Socket: socket, Token: token, Name: "shim"})
			if c != nil {
				s, serr := c.Session(ctx, "agent-1")
				c.Close()
				t.Fatalf("a fake hub was taken for the hub; its session override: %+v %v", s, serr)
			}
			require.ErrorIs(t, err, ErrNotAuthentic)
			assert.NotErrorIs(t, err, ErrNoHub, "a fake hub is not 'no hub': the shim must refuse, not fall back")
			assert.Contains(t, err.Error(), socket)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
	t.Run("no token to check it by", func(t *testing.T) {
		socket := fakeHub(t, plain, forged)
		_, err := Dial(context.Background(), DialOptions{Socket: socket, Name: "shim"})
		require.ErrorIs(t, err, ErrNotAuthentic)
		assert.Contains(t, err.Error(), "no socket.token")
	})
}

// relay sits between clients and the real hub, line by line; tamper may
// change, drop (nil) or duplicate (two lines) what passes.
type relay struct {
	socket              string
	mu                  sync.Mutex
	fromClient, fromHub func(n int, line []byte) [][]byte
}

func startRelay(t *testing.T, h *testHub) *relay {
	t.Helper()
	r := &relay{socket: filepath.Join(shortTempDir(t), "relay.sock")}
	ln, err := net.Listen("unix", r.socket)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	pass := func(n int, line []byte) [][]byte { return [][]byte{line} }
	r.fromClient, r.fromHub = pass, pass
	pipe := func(dst, src net.Conn, tamper *func(int, []byte) [][]byte) {
		defer dst.Close()
		br := bufio.NewReaderSize(src, MaxLine)
		for n := 1; ; n++ {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			r.mu.Lock()
			out := (*tamper)(n, line)
			r.mu.Unlock()
			for _, l := range out {
				dst.Write(l)
			}
		}
	}
	go func() {
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			hc, err := net.Dial("unix", h.socket)
			if err != nil {
				cc.Close()
				continue
			}
			go pipe(hc, cc, &r.fromClient)
			go pipe(cc, hc, &r.fromHub)
		}
	}()
	return r
}

// TestRelayCannotTamper: a relay in front of the real hub (it could get
// there by renaming the hub's socket and binding its path) passes the
// hello and the hub's proof through untouched, then changes one frame.
// Whichever frame it changes, drops or replays, in either direction, the
// client or the hub notices, and the call fails rather than return what
// the relay wanted.
func TestRelayCannotTamper(t *testing.T) {
	h := startHub(t)
	appr, ev := h.approver(t, "owner")
	ctx := context.Background()
	_, err := appr.SetSession(ctx, SessionOverride{AgentID: "agent-1", Security: "deny"})
	require.NoError(t, err)
	r := startRelay(t, h)
	dial := func(t *testing.T) *Client {
		c, err := Dial(ctx, DialOptions{Socket: r.socket, Token: h.token, Name: "shim"})
		require.NoError(t, err, "an untouched relay passes the proof")
		t.Cleanup(func() { c.Close() })
		return c
	}
	set := func(fromClient, fromHub func(int, []byte) [][]byte) {
		r.mu.Lock()
		defer r.mu.Unlock()
		pass := func(n int, line []byte) [][]byte { return [][]byte{line} }
		r.fromClient, r.fromHub = pass, pass
		if fromClient != nil {
			r.fromClient = fromClient
		}
		if fromHub != nil {
			r.fromHub = fromHub
		}
	}

	t.Run("untouched", func(t *testing.T) {
		set(nil, nil)
		s, err := dial(t).Session(ctx, "agent-1")
		require.NoError(t, err)
		assert.Equal(t, "deny", s.Security)
	})
	t.Run("the hub's answer changed", func(t *testing.T) {
		set(nil, func(n int, line []byte) [][]byte {
			return [][]byte{[]byte(strings.Replace(string(line), `"security":"deny"`, `"security":"full"`, 1))}
		})
		s, err := dial(t).Session(ctx, "agent-1")
		require.ErrorIs(t, err, ErrNotAuthentic, "got %+v", s)
	})
	t.Run("a frame of the hub's replayed", func(t *testing.T) {
		set(nil, func(n int, line []byte) [][]byte {
			if n == 2 {
				return [][]byte{line, line}
			}
			return [][]byte{line}
		})
		c := dial(t)
		_, err := c.Session(ctx, "agent-1")
		require.NoError(t, err) // the first copy is genuine
		_, err = c.Status(ctx)
		require.ErrorIs(t, err, ErrNotAuthentic)
	})
	t.Run("a frame of the hub's dropped", func(t *testing.T) {
		set(nil, func(n int, line []byte) [][]byte {
			if n == 2 {
				return nil
			}
			return [][]byte{line}
		})
		c := dial(t)
		sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := c.Session(sctx, "agent-1")
		cancel()
		require.Error(t, err)
		_, err = c.Status(ctx)
		require.ErrorIs(t, err, ErrNotAuthentic)
	})
	t.Run("the client's request changed", func(t *testing.T) {
		// What the approver would see is not what the shim asked.
		set(func(n int, line []byte) [][]byte {
			return [][]byte{[]byte(strings.Replace(string(line), "rm -rf ~", "ls -la ~", 1))}
		}, nil)
		c := dial(t)
		_, err := c.Request(ctx, testRequest("rm -rf ~"))
		require.Error(t, err)
		assert.Equal(t, ErrCodeAuth, errCode(err), "%v", err)
		select {
		case e := <-ev:
			if e.Name == EventRequested {
				t.Fatalf("the hub showed approvers a tampered request: %s", e.Payload)
			}
		case <-time.After(100 * time.Millisecond):
		}
	})
	t.Run("a frame of the client's replayed", func(t *testing.T) {
		set(func(n int, line []byte) [][]byte {
			if n == 2 {
				return [][]byte{line, line}
			}
			return [][]byte{line}
		}, nil)
		c := dial(t)
		_, err := c.Status(ctx)
		require.NoError(t, err)
		_, err = c.Status(ctx)
		require.Error(t, err)
		assert.True(t, errCode(err) == ErrCodeAuth || errors.Is(err, ErrNotAuthentic), "%v", err)
	})
}

// FuzzUnseal: taking a seal off any line never panics, and whatever opens
// under a key seals back to the same line (the seal's form is exact, so a
// frame has one sealed form).
func FuzzUnseal(f *testing.F) {
	key := connKey("token", RoleRequester, strings.Repeat("a", 32), strings.Repeat("b", 32))
	f.Add(seal(key, dirHub, 1, []byte(`{"id":"1","ok":true}`)))
	f.Add(seal(key, dirHub, 12345678901234, []byte(`{"event":"x","payload":{"seq":1}}`)))
	f.Add([]byte(`{"id":"1","seq":1,"mac":"` + strings.Repeat("0", 64) + `"}`))
	f.Add([]byte(`,"seq":,"mac":"` + strings.Repeat("f", 64) + `"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		u, ok := splitSeal(line)
		if !ok {
			return
		}
		if u.check(key, dirHub, u.seq) == nil {
			require.Equal(t, strings.TrimRight(string(line), " \t\r\n")+"\n", string(seal(key, dirHub, u.seq, u.body)))
		}
	})
}
