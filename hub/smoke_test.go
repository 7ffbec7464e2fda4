package hub

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	h := startHub(t)
	appr, ev := h.approver(t, "appr")
	req := h.dial(t, RoleRequester, "shim")
	ctx := context.Background()
	done := make(chan ApprovalAnswer, 1)
	go func() {
		ans, err := req.Request(ctx, testRequest("ls"))
		assert.NoError(t, err)
		done <- ans
	}()
	a := nextEvent(t, ev, EventRequested)
	_, err := appr.Resolve(ctx, a.ID[:6], AllowOnce)
	require.NoError(t, err)
	select {
	case ans := <-done:
		require.Equal(t, OutcomeDecided, ans.Outcome)
		require.Equal(t, AllowOnce, *ans.Decision)
		require.Equal(t, "appr", ans.ResolvedBy)
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
	}
}
