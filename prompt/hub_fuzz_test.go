package prompt

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/execgate/execgate/hub"
)

// FuzzHubAnswer plays a hub that greets the shim properly and then answers
// its approval request with arbitrary bytes ($ID stands for the request's
// id). Whatever arrives, Ask must not panic, and it may only allow when the
// answer was literally a decided allow for this request: a garbled, partial,
// unknown or mismatched answer is never read as permission.
func FuzzHubAnswer(f *testing.F) {
	seeds := []string{
		`{"id":"$ID","ok":true,"result":{"id":"x","decision":"allow-once","outcome":"decided"}}`,
		`{"id":"$ID","ok":true,"result":{"id":"x","decision":"allow-always","outcome":"decided"}}`,
		`{"id":"$ID","ok":true,"result":{"id":"x","decision":"deny","outcome":"decided"}}`,
		`{"id":"$ID","ok":true,"result":{"id":"x","decision":"allow-once","outcome":"expired"}}`,
		`{"id":"$ID","ok":true,"result":{"id":"x","decision":"ALLOW-ONCE","outcome":"decided"}}`,
		`{"id":"$ID","ok":true,"result":{"id":"x","decision":null,"outcome":"decided"}}`,
		`{"id":"$ID","ok":false,"result":{"decision":"allow-once","outcome":"decided"}}`,
		`{"id":"$ID","error":{"code":"NO_APPROVER","message":"x"}}`,
		`{"id":"other","ok":true,"result":{"decision":"allow-once","outcome":"decided"}}`,
		`{"id":"$ID","ok":true,"result":{"decision":"allow-once","outcome":"decided","decision":"deny"}}`,
		`{"id":"$ID","ok":true,"result":"allow-once"}`,
		`{"id":"$ID","ok":true,"result":{"decision":"allow-once"`,
		"\x00\xff\n\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	sock := filepath.Join(f.TempDir(), "hub.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ln.Close() })
	answers := make(chan []byte)
	go fakeHub(ln, answers)

	f.Fuzz(func(t *testing.T, answer []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		go func() {
			select {
			case answers <- answer:
			case <-ctx.Done():
			}
		}()
		c, err := hub.Dial(ctx, hub.DialOptions{Socket: sock, Token: fakeToken, Name: "fuzz"})
		if err != nil {
			t.Fatalf("dial the fake hub: %v", err)
		}
		defer c.Close()
		ans, err := Hub{Client: c}.Ask(ctx, Request{ID: "req-1", Command: "rm -rf ~", Timeout: time.Second})
		if err != nil || ans.Decision == Deny {
			return
		}
		if !literalAllow(answer, ans.Decision) {
			t.Fatalf("answer %q read as %+v", answer, ans)
		}
	})
}

// literalAllow reports whether one line of answer is a decided allow with
// decision d for the request.
func literalAllow(answer []byte, d Decision) bool {
	for line := range bytes.SplitSeq(answer, []byte("\n")) {
		var fr struct {
			ID     string
			OK     *bool
			Result struct{ Decision, Outcome string }
		}
		if json.Unmarshal(line, &fr) == nil && fr.OK != nil && *fr.OK &&
			fr.Result.Outcome == hub.OutcomeDecided && fr.Result.Decision == string(d) {
			return true
		}
	}
	return false
}

// fakeToken is the token the fake hub and its clients share.
const fakeToken = "fake-hub-token"

// fakeHub answers each connection's hello properly (proving the token and
// sealing its frames as docs/protocol.md says, written here from the
// document rather than with the hub's code) and its next request with the
// next answer, each line of it that ends in a brace sealed (as the hub
// itself would send it), then closes it.
func fakeHub(ln net.Listener, answers <-chan []byte) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		func() {
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(5 * time.Second))
			r := bufio.NewReader(nc)
			read := func() hub.Frame {
				line, err := r.ReadBytes('\n')
				if err != nil {
					return hub.Frame{}
				}
				line = bytes.TrimRight(line, "\n")
				if i := bytes.LastIndex(line, []byte(`,"seq":`)); i > 0 {
					line = append(line[:i:i], '}')
				}
				var fr hub.Frame
				json.Unmarshal(line, &fr)
				return fr
			}
			h := read()
			var p hub.HelloParams
			json.Unmarshal(h.Params, &p)
			const hubNonce = "0123456789abcdef0123456789abcdef"
			m := hmac.New(sha256.New, []byte(fakeToken))
			m.Write([]byte("execgate-hub/2 connection " + string(p.Role) + " " + p.Nonce + " " + hubNonce))
			key := m.Sum(nil)
			n := 0
			seal := func(body []byte) []byte {
				body = bytes.TrimRight(body, " \t\r")
				if len(body) == 0 || body[len(body)-1] != '}' {
					// No seal can carry it (the seal replaces a closing
					// brace): it goes as it is, and fails its check.
					return append(body, '\n')
				}
				n++
				d := sha256.Sum256(body)
				m := hmac.New(sha256.New, key)
				m.Write([]byte("hub " + strconv.Itoa(n) + " " + hex.EncodeToString(d[:])))
				return fmt.Appendf(body[:len(body)-1:len(body)-1], `,"seq":%d,"mac":"%x"}`+"\n", n, m.Sum(nil))
			}
			hello, _ := json.Marshal(hub.Frame{ID: h.ID, OK: new(true),
				Result: json.RawMessage(`{"version":2,"role":"requester","approvers":1,"hubNonce":"` + hubNonce + `"}`)})
			nc.Write(seal(hello))
			reqID := read().ID
			answer := <-answers
			for line := range bytes.SplitSeq(bytes.ReplaceAll(answer, []byte("$ID"), []byte(reqID)), []byte("\n")) {
				if len(bytes.TrimSpace(line)) > 0 {
					nc.Write(seal(line))
				}
			}
		}()
	}
}

// The fake hub of FuzzHubAnswer does reach an allow: the property above is
// not vacuous.
func TestFakeHubAllows(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "hub.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	answers := make(chan []byte, 1)
	go fakeHub(ln, answers)
	answers <- []byte(`{"id":"$ID","ok":true,"result":{"id":"req-1","decision":"allow-once","outcome":"decided"}}` + "\n")
	ctx := context.Background()
	c, err := hub.Dial(ctx, hub.DialOptions{Socket: sock, Token: fakeToken})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ans, err := Hub{Client: c}.Ask(ctx, Request{ID: "req-1", Command: "ls", Timeout: time.Second})
	if err != nil || ans.Decision != AllowOnce {
		t.Fatalf("got %+v, %v; want allow-once", ans, err)
	}
}
