package prompt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
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
		c, err := hub.Dial(ctx, hub.DialOptions{Socket: sock, Name: "fuzz"})
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

// fakeHub answers each connection's hello properly and its next request
// with the next answer, then closes it.
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
			id := func() string {
				line, err := r.ReadBytes('\n')
				if err != nil {
					return ""
				}
				var fr hub.Frame
				json.Unmarshal(line, &fr)
				return fr.ID
			}
			hello, _ := json.Marshal(hub.Frame{ID: id(), OK: new(true),
				Result: json.RawMessage(`{"version":1,"role":"requester","approvers":1}`)})
			nc.Write(append(hello, '\n'))
			reqID := id()
			answer := <-answers
			nc.Write(bytes.ReplaceAll(answer, []byte("$ID"), []byte(reqID)))
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
	c, err := hub.Dial(ctx, hub.DialOptions{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ans, err := Hub{Client: c}.Ask(ctx, Request{ID: "req-1", Command: "ls", Timeout: time.Second})
	if err != nil || ans.Decision != AllowOnce {
		t.Fatalf("got %+v, %v; want allow-once", ans, err)
	}
}
