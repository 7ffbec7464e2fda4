package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A deny's message reaches the requester's answer and the approvers'
// resolved event; an allow with a message, or a message over the bound,
// is refused and leaves the approval pending.
func TestDenyMessage(t *testing.T) {
	h := startHub(t)
	ap, events := h.approver(t, "web@test")
	req := h.dial(t, RoleRequester, "shim")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	answers := make(chan ApprovalAnswer, 1)
	go func() {
		ans, err := req.Request(ctx, testRequest("rm -rf dist"))
		if err != nil {
			t.Error(err)
		}
		answers <- ans
	}()
	a := nextEvent(t, events, EventRequested)

	for _, bad := range []ResolveParams{
		{ID: a.ID, Decision: AllowOnce, Message: "fine"},
		{ID: a.ID, Decision: Deny, Message: strings.Repeat("x", MaxDenyMessage+1)},
	} {
		_, err := ap.ResolveWith(ctx, bad)
		require.Equal(t, ErrCodeBadRequest, errCode(err), "%+v", bad)
	}

	got, err := ap.ResolveWith(ctx, ResolveParams{ID: a.ID, Decision: Deny, Message: "use make clean instead"})
	require.NoError(t, err)
	require.Equal(t, "use make clean instead", got.Message)
	ans := <-answers
	require.Equal(t, OutcomeDecided, ans.Outcome)
	require.Equal(t, Deny, *ans.Decision)
	require.Equal(t, "use make clean instead", ans.Message)
	require.Equal(t, "web@test", ans.ResolvedBy)
	ev := nextEvent(t, events, EventResolved)
	require.Equal(t, "use make clean instead", ev.Message)
}
