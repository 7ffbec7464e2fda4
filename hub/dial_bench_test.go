package hub

import (
	"context"
	"testing"
)

// BenchmarkShimConnect is what a shim pays on every command while a hub
// runs: connect, hello (and, since the hub proves itself, checking its
// proof and every frame after), read the agent's session override, close.
func BenchmarkShimConnect(b *testing.B) {
	h := startHub(b)
	ctx := context.Background()
	for b.Loop() {
		c, err := Dial(ctx, DialOptions{Socket: h.socket, Token: h.token, Role: RoleRequester, Name: "shim"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Session(ctx, "agent"); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
