package auditexport

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/execgate/execgate/config"
)

// otlpReceiver is an OTLP/HTTP logs receiver on a real socket, decoding
// requests with the OpenTelemetry Collector's own pdata module.
type otlpReceiver struct {
	url string
	mu  sync.Mutex
	got []plog.Logs
	hdr []http.Header
	// fail, while set, answers every request with 503.
	fail bool
}

func startOTLPReceiver(t *testing.T, l net.Listener) *otlpReceiver {
	t.Helper()
	if l == nil {
		var err error
		l, err = net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
	}
	r := &otlpReceiver{url: "http://" + l.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/logs" || req.Method != http.MethodPost {
			http.NotFound(w, req)
			return
		}
		r.mu.Lock()
		fail := r.fail
		r.mu.Unlock()
		if fail {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		er := plogotlp.NewExportRequest()
		if err := er.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.got = append(r.got, er.Logs())
		r.hdr = append(r.hdr, req.Header.Clone())
		r.mu.Unlock()
		resp, _ := plogotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(resp)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return r
}

// records flattens what the receiver got: each log record with its
// resource's service.name.
func (r *otlpReceiver) records() (recs []plog.LogRecord, services []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.got {
		for i := range l.ResourceLogs().Len() {
			rl := l.ResourceLogs().At(i)
			svc, _ := rl.Resource().Attributes().Get("service.name")
			for j := range rl.ScopeLogs().Len() {
				sl := rl.ScopeLogs().At(j)
				for k := range sl.LogRecords().Len() {
					recs = append(recs, sl.LogRecords().At(k))
					services = append(services, svc.AsString())
				}
			}
		}
	}
	return recs, services
}

func otlpTarget(url string) config.ExportTarget {
	return config.ExportTarget{Kind: config.ExportOTLP, OTLP: &config.OTLPExport{Endpoint: url,
		Headers: map[string]string{"Authorization": "Bearer team-token"}}}
}

// TestOTLPExportReceiver: the SDK's exporter delivers every event to a
// real OTLP/HTTP receiver, once, in order: the log line (redacted as the
// local log is) as the body, the event's time, WARN for a refusal, the
// fields a collector filters on as attributes, service.name execgate, and
// the configured headers; a second run sends only what is new.
func TestOTLPExportReceiver(t *testing.T) {
	r := startOTLPReceiver(t, nil)
	target := otlpTarget(r.url)
	s, err := NewOTLPSender(target.OTLP)
	require.NoError(t, err)
	defer s.Close()
	l := exportLog(t, 5)
	dir := t.TempDir()
	res, err := Run(t.Context(), l, target, dir, s)
	require.NoError(t, err)
	assert.Equal(t, 5, res.Sent)
	recs, services := r.records()
	require.Len(t, recs, 5)
	for i, rec := range recs {
		assert.Equal(t, "execgate", services[i])
		body := rec.Body().Str()
		assert.Contains(t, body, fmt.Sprintf(`"command":"echo %d [REDACTED:github-token]"`, i))
		assert.NotContains(t, body, "ghp_")
		seq, ok := rec.Attributes().Get("execgate.seq")
		require.True(t, ok)
		assert.Equal(t, int64(i+1), seq.Int())
		agent, _ := rec.Attributes().Get("execgate.agent")
		assert.Equal(t, "claude-code", agent.Str())
		want := "INFO"
		if i%3 == 2 {
			want = "WARN"
		}
		assert.Equal(t, want, rec.SeverityText())
		assert.WithinDuration(t, time.Now(), rec.Timestamp().AsTime(), time.Minute)
	}
	assert.Equal(t, "Bearer team-token", r.hdr[0].Get("Authorization"))

	appendEvents(t, l, 5, 2)
	res, err = Run(t.Context(), l, target, dir, s)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Sent)
	recs, _ = r.records()
	require.Len(t, recs, 7)
	assert.Contains(t, recs[6].Body().Str(), `"id":"id6"`)
}

// TestOTLPExportCollectorDown: a receiver that is not there, or that
// answers 503, fails the run at once, sending nothing twice and losing
// nothing: the next run, with the receiver back, sends every event once.
func TestOTLPExportCollectorDown(t *testing.T) {
	l0, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l0.Addr().String()
	l0.Close()
	target := otlpTarget("http://" + addr)
	s, err := NewOTLPSender(target.OTLP)
	require.NoError(t, err)
	defer s.Close()
	l := exportLog(t, 4)
	dir := t.TempDir()
	start := time.Now()
	_, err = Run(t.Context(), l, target, dir, s)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Contains(t, err.Error(), "otlp http://"+addr)
	assert.NoFileExists(t, cursorPath(dir, target))

	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	r := startOTLPReceiver(t, ln)
	r.mu.Lock()
	r.fail = true
	r.mu.Unlock()
	_, err = Run(t.Context(), l, target, dir, s)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "request failure: body: busy", "the receiver's 503 answer")
	r.mu.Lock()
	r.fail = false
	r.mu.Unlock()
	res, err := Run(t.Context(), l, target, dir, s)
	require.NoError(t, err)
	assert.Equal(t, 4, res.Sent)
	recs, _ := r.records()
	assert.Len(t, recs, 4)
}
