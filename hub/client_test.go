package hub

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Many calls in flight on one client, answers matched to callers.
func TestClientConcurrentCalls(t *testing.T) {
	h := startHub(t)
	c := h.dial(t, RoleApprover, "busy")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 500)
	for i := range 500 {
		wg.Go(func() {
			agent := "agent-" + string(rune('a'+i%26))
			if i%2 == 0 {
				_, err := c.Status(ctx)
				errs <- err
				return
			}
			o, err := c.Session(ctx, agent)
			if err == nil && o.AgentID != "" {
				t.Errorf("session of %s: %+v", agent, o)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestClientSubscribeEnds(t *testing.T) {
	h := startHub(t)
	c := h.dial(t, RoleApprover, "a")
	ctx, cancel := context.WithCancel(context.Background())
	ev, err := c.Subscribe(ctx)
	require.NoError(t, err)
	cancel()
	select {
	case _, ok := <-ev:
		assert.False(t, ok)
	case <-time.After(5 * time.Second):
		t.Fatal("channel not closed when ctx ended")
	}
	// The client is still usable.
	_, err = c.Status(context.Background())
	require.NoError(t, err)

	// The hub stops: the channel closes, Done too, and calls fail at once.
	ev, err = c.Subscribe(context.Background())
	require.NoError(t, err)
	h.stop()
	select {
	case _, ok := <-ev:
		assert.False(t, ok)
	case <-time.After(5 * time.Second):
		t.Fatal("channel not closed when the hub stopped")
	}
	<-c.Done()
	_, err = c.Status(context.Background())
	require.Error(t, err)
	_, err = c.Subscribe(context.Background())
	require.Error(t, err)
	require.Error(t, c.Report(ExecReport{Event: EventStarted}))
}

func TestClientCallContext(t *testing.T) {
	h := startHub(t)
	h.approver(t, "a")
	c := h.dial(t, RoleRequester, "shim")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Request(ctx, testRequest("ls"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)

	// Client-side checks fail without sending anything.
	appr := h.dial(t, RoleApprover, "b")
	_, err = appr.ConfigSet(context.Background(), []byte("{not json"), "x")
	require.ErrorContains(t, err, "not valid JSON")
	_, err = appr.SetSession(context.Background(), SessionOverride{AgentID: string(make([]byte, MaxLine))})
	require.ErrorContains(t, err, "line limit")
	_, err = appr.Status(context.Background())
	require.NoError(t, err)
}
