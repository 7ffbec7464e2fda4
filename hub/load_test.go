package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decisionFor is the scripted approver's answer to command "cmd N".
func decisionFor(cmd string) string {
	n, _ := strconv.Atoi(strings.TrimPrefix(cmd, "cmd "))
	return decisions[n%len(decisions)]
}

// scriptedApprover resolves every requested approval from the event
// stream, several resolutions in flight, and counts what it did.
type scriptedApprover struct {
	c        *Client
	resolved atomic.Int64
	failed   atomic.Int64
	firstErr atomic.Value
	wg       sync.WaitGroup
}

func runApprover(ctx context.Context, c *Client, ev <-chan Event) *scriptedApprover {
	return runApproverShare(ctx, c, ev, 0, 1)
}

// runApproverShare resolves only the approvals whose id's first byte is
// part k of n: several approvers then share the work.
func runApproverShare(ctx context.Context, c *Client, ev <-chan Event, k, n int) *scriptedApprover {
	s := &scriptedApprover{c: c}
	s.wg.Go(func() {
		var inflight sync.WaitGroup
		defer inflight.Wait()
		for e := range ev {
			if e.Name != EventRequested {
				continue
			}
			var a Approval
			if json.Unmarshal(e.Payload, &a) != nil || a.ID == "" {
				s.failed.Add(1)
				continue
			}
			if int(a.ID[0])%n != k {
				continue
			}
			inflight.Go(func() {
				if _, err := c.Resolve(ctx, a.ID, decisionFor(a.Command)); err != nil {
					if s.failed.Add(1) == 1 {
						s.firstErr.Store(err)
					}
					return
				}
				s.resolved.Add(1)
			})
		}
	})
	return s
}

func heapInUse() uint64 {
	var m runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// waitGoroutines waits for the goroutine count to drop to at most n.
func waitGoroutines(n int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := runtime.NumGoroutine()
		if g <= n || time.Now().After(deadline) {
			return g
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLoad: 1,000 requesters, each on its own connection (as 1,000 shims
// would be), all pending at once, resolved by one scripted approver.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const n = 1000
	h := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A watcher that only counts events, to check each approval was
	// requested and resolved exactly once.
	watcher, wev := h.approver(t, "watch")
	baseG := runtime.NumGoroutine()
	baseHeap := heapInUse()

	clients := make([]*Client, n)
	for i := range clients {
		c, err := Dial(ctx, DialOptions{Socket: h.socket, Token: h.token, Name: "shim"})
		require.NoError(t, err)
		clients[i] = c
	}
	appr := h.dial(t, RoleApprover, "script")
	subCtx, stopSub := context.WithCancel(ctx)
	ev, err := appr.Subscribe(subCtx)
	require.NoError(t, err)
	counts := map[string]map[string]int{EventRequested: {}, EventResolved: {}}
	countsDone := make(chan struct{})
	go func() {
		defer close(countsDone)
		for e := range wev {
			if m, ok := counts[e.Name]; ok {
				var a Approval
				json.Unmarshal(e.Payload, &a)
				m[a.ID]++
				if len(counts[EventResolved]) == n {
					return
				}
			}
		}
	}()
	sa := runApprover(ctx, appr, ev)
	connected := runtime.NumGoroutine()
	peakHeap := heapInUse()

	start := time.Now()
	answers := make([]ApprovalAnswer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			r := testRequest("cmd " + strconv.Itoa(i))
			r.ID = fmt.Sprintf("load-%04d", i)
			answers[i], errs[i] = c.Request(ctx, r)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case <-countsDone:
	case <-time.After(30 * time.Second):
		bad := 0
		for i := range n {
			if errs[i] != nil || answers[i].Outcome != OutcomeDecided {
				if bad < 3 {
					t.Logf("request %d: %v %+v", i, errs[i], answers[i])
				}
				bad++
			}
		}
		t.Fatalf("the watcher did not see every event (requests took %v, %d bad, resolved %d failed %d: %v)", elapsed, bad, sa.resolved.Load(), sa.failed.Load(), sa.firstErr.Load())
	}

	for i := range n {
		require.NoError(t, errs[i], "request %d", i)
		require.Equal(t, OutcomeDecided, answers[i].Outcome, "request %d", i)
		require.Equal(t, fmt.Sprintf("load-%04d", i), answers[i].ID)
		require.Equal(t, decisionFor("cmd "+strconv.Itoa(i)), *answers[i].Decision, "request %d got another's answer", i)
	}
	for _, name := range []string{EventRequested, EventResolved} {
		require.Len(t, counts[name], n, name)
		for id, k := range counts[name] {
			require.Equal(t, 1, k, "%s %s seen %d times", name, id, k)
		}
	}
	st, err := appr.Status(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.Pending)
	t.Logf("%d approvals, all pending at once, resolved in %v (%.0f approvals/s)", n, elapsed, n/elapsed.Seconds())

	// Back to baseline: the requesters leave, the approver stops.
	stopSub()
	sa.wg.Wait()
	assert.EqualValues(t, n, sa.resolved.Load())
	assert.Zero(t, sa.failed.Load())
	for _, c := range clients {
		c.Close()
	}
	appr.Close()
	clients, answers, errs, counts = nil, nil, nil, nil
	g := waitGoroutines(baseG + 2)
	heap := heapInUse()

	t.Logf("goroutines: %d before, %d with %d clients connected, %d after they left", baseG, connected, n, g)
	t.Logf("heap in use: %d KiB before, %d KiB with the clients connected, %d KiB after", baseHeap>>10, peakHeap>>10, heap>>10)
	assert.LessOrEqual(t, g, baseG+2, "goroutines left behind")
	// What stays is the runtime's pool of dead goroutines' descriptors
	// (about 1 KiB each, never freed) and map buckets that do not shrink.
	assert.Less(t, heap, baseHeap+6<<20, "heap did not come back")
	st, err = watcher.Status(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, st.Connections)
	h.srv.mu.Lock()
	assert.Len(t, h.srv.conns, 1)
	assert.Len(t, h.srv.subs, 1)
	assert.Empty(t, h.srv.pending)
	h.srv.mu.Unlock()
}

// benchHub is a hub with a scripted approver and a pool of requester
// connections: each shim is its own process and connection, so the pool
// stands for many shims (and keeps each under the per-connection rate).
type benchHub struct {
	h     *testHub
	pool  []*Client
	next  atomic.Int64
	close func()
}

// newBenchHub starts a hub with approvers scripted approvers sharing the
// work (one approver alone is capped by its rate limit, 10,000 frames/s).
func newBenchHub(b *testing.B, poolSize, approvers int) *benchHub {
	h := startHub(b)
	bh := &benchHub{h: h}
	for range poolSize {
		bh.pool = append(bh.pool, h.dial(b, RoleRequester, "shim"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var sas []*scriptedApprover
	for k := range approvers {
		appr := h.dial(b, RoleApprover, "script")
		ev, err := appr.Subscribe(ctx)
		require.NoError(b, err)
		sas = append(sas, runApproverShare(context.Background(), appr, ev, k, approvers))
	}
	bh.close = func() {
		cancel()
		for _, sa := range sas {
			sa.wg.Wait()
		}
	}
	return bh
}

func (bh *benchHub) client() *Client {
	return bh.pool[int(bh.next.Add(1))%len(bh.pool)]
}

func percentile(d []time.Duration, p float64) time.Duration {
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// BenchmarkRoundTrip: request → requested event → resolve → answer, one
// at a time, excluding human time. Reports p50 and p99.
func BenchmarkRoundTrip(b *testing.B) {
	bh := newBenchHub(b, 256, 1)
	defer bh.close()
	ctx := context.Background()
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		ans, err := bh.client().Request(ctx, testRequest("cmd "+strconv.Itoa(i)))
		if err != nil || ans.Outcome != OutcomeDecided {
			b.Fatalf("request: %v %+v", err, ans)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
}

// BenchmarkThroughput: 64 requests in flight at all times, two scripted
// approvers; reports sustained approvals per second.
func BenchmarkThroughput(b *testing.B) {
	bh := newBenchHub(b, 256, 2)
	defer bh.close()
	ctx := context.Background()
	var i atomic.Int64
	b.SetParallelism(32) // 64 goroutines on 2 cores
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := i.Add(1)
			ans, err := bh.client().Request(ctx, testRequest("cmd "+strconv.FormatInt(n, 10)))
			if err != nil || ans.Outcome != OutcomeDecided {
				b.Errorf("request: %v %+v", err, ans)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "approvals/s")
}
