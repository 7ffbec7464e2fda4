package hub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pipeConn serves one in-memory connection from peer p on s and returns
// the client end; the handler's goroutine ends when the client end closes.
func pipeConn(s *Server, p peer) (net.Conn, <-chan struct{}) {
	client, server := net.Pipe()
	c := newConn(s, server)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.serve(context.Background(), p, s.authConfig(context.Background()))
	}()
	return client, done
}

// FuzzFrame feeds arbitrary bytes to the hub's line handling, after a
// valid hello when the first byte is odd (each line of the input then
// sealed with the connection's key when the second bit is clear too, so
// that what is inside reaches the handlers): the hub must not panic, and
// everything it answers must be one valid JSON frame per line.
func FuzzFrame(f *testing.F) {
	seeds := []string{
		`{"id":"1","method":"hub.status"}`,
		`{"id":"1","method":"exec.approval.list","params":{}}`,
		`{"id":"2","method":"exec.approval.resolve","params":{"id":"abcd","decision":"deny"}}`,
		`{"id":"3","method":"exec.approval.request","params":{"command":"ls","risk":"safe","timeoutMs":1}}`,
		`{"id":"4","method":"session.set","params":{"agentId":"a","elevated":true}}`,
		`{"id":"5","method":"subscribe"}` + "\n" + `{"method":"exec.report","params":{"event":"exec.started"}}`,
		`{"id":"6","method":"exec.approvals.set","params":{"file":{"version":1},"baseHash":"x"}}`,
		`{"id":"7","method":"hello","params":{"version":1,"role":"approver"}}`,
		`{"id":` + "\x00\xff" + `}`,
		"\n\n\r\n",
		`[{"id":"x"}]`,
		`{"id":"x","method":"exec.approval.get","params":"` + strings.Repeat("\\u0000", 10) + `"}`,
	}
	for _, s := range seeds {
		f.Add(byte(1), []byte(s))
		f.Add(byte(3), []byte(s))
		f.Add(byte(0), []byte(s))
	}
	dir := f.TempDir()
	s := newServer(ServerOptions{ConfigPath: filepath.Join(dir, "c.json")})
	auth := s.config.current(context.Background())
	require.NoError(f, auth.err)
	me := peer{uid: s.uid, pid: 1}

	f.Fuzz(func(t *testing.T, mode byte, input []byte) {
		nc, done := pipeConn(s, me)
		defer func() {
			nc.Close()
			<-done
		}()
		var frames []Frame
		readErr := make(chan error, 1)
		keyc := make(chan []byte, 1)
		hello := newHelloParams(auth.token, RoleApprover, "fuzz", time.Now())
		go func() {
			r := bufio.NewReader(nc)
			for {
				line, err := r.ReadBytes('\n')
				if u, ok := splitSeal(line); ok {
					var fr Frame
					if json.Unmarshal(u.body, &fr) == nil && fr.ID == "hello" {
						var res HelloResult
						json.Unmarshal(fr.Result, &res)
						keyc <- connKey(auth.token, RoleApprover, hello.Nonce, res.HubNonce)
					}
					line = append(u.body, '\n')
				}
				if len(line) > 0 {
					var fr Frame
					if !json.Valid(line) || json.Unmarshal(line, &fr) != nil {
						readErr <- &json.SyntaxError{}
						return
					}
					frames = append(frames, fr)
					if fr.ID == "sentinel" {
						readErr <- nil
						return
					}
				}
				if err != nil {
					readErr <- nil // closed by the hub: fine
					return
				}
			}
		}()
		nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		sentinel := []byte(`{"id":"sentinel","method":"hub.status"}`)
		if mode&1 == 1 {
			b, _ := encodeFrame("hello", MethodHello, hello)
			nc.Write(append(b, '\n'))
		}
		if mode&3 == 1 {
			var key []byte
			select {
			case key = <-keyc:
			case <-time.After(10 * time.Second):
				t.Fatal("no answer to the hello")
			}
			var n uint64
			for _, l := range bytes.Split(append(input, '\n'), []byte("\n")) {
				if len(bytes.TrimSpace(l)) == 0 {
					nc.Write(append(l, '\n'))
					continue
				}
				if l[len(l)-1] != '}' {
					l = append(l, '}')
				}
				n++
				nc.Write(seal(key, dirClient, n, l))
			}
			n++
			nc.Write(seal(key, dirClient, n, sentinel))
		} else {
			nc.Write(input)
			nc.Write(append(append([]byte("\n"), sentinel...), '\n'))
		}
		select {
		case err := <-readErr:
			require.NoError(t, err, "invalid frame from the hub for input %q", input)
		case <-time.After(10 * time.Second):
			t.Fatalf("no sentinel answer for input %q", input)
		}
		for _, fr := range frames {
			require.True(t, fr.Error != nil || fr.OK != nil || fr.Event != "", "frame %+v", fr)
		}
	})
}
