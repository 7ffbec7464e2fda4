package auditexport

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/shim"
)

// OTLPSender sends records as OpenTelemetry log records over OTLP/HTTP,
// with the OpenTelemetry Go SDK's exporter. The SDK's logger stamps each
// record (resource service.name=execgate, scope); the records are then
// exported by this sender itself, batch by batch, so that it knows whether
// the collector took them before the cursor moves: the SDK's batch
// processor would report a failure to a global handler instead.
type OTLPSender struct {
	exporter *otlploghttp.Exporter
	provider *sdklog.LoggerProvider
	logger   otellog.Logger
	stamped  *collector
}

// collector is the processor the SDK hands each stamped record to.
type collector struct {
	mu   sync.Mutex
	recs []sdklog.Record
}

func (c *collector) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.mu.Lock()
	c.recs = append(c.recs, r.Clone())
	c.mu.Unlock()
	return nil
}

func (c *collector) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c *collector) Shutdown(context.Context) error                         { return nil }
func (c *collector) ForceFlush(context.Context) error                       { return nil }

func (c *collector) take() []sdklog.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.recs
	c.recs = nil
	return out
}

// NewOTLPSender prepares a sender for o: its endpoint's /v1/logs, its
// headers, no retries of the SDK's own (a failed batch waits in the local
// log for the next run) and timeout per request.
func NewOTLPSender(o *config.OTLPExport) (*OTLPSender, error) {
	opts := []otlploghttp.Option{
		otlploghttp.WithEndpointURL(o.Endpoint + "/v1/logs"),
		otlploghttp.WithTimeout(timeout),
		otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}),
	}
	if len(o.Headers) > 0 {
		opts = append(opts, otlploghttp.WithHeaders(o.Headers))
	}
	exp, err := otlploghttp.New(context.Background(), opts...)
	if err != nil {
		return nil, err
	}
	c := &collector{}
	res := resource.NewSchemaless(semconv.ServiceName("execgate"))
	p := sdklog.NewLoggerProvider(sdklog.WithProcessor(c), sdklog.WithResource(res))
	return &OTLPSender{exporter: exp, provider: p, logger: p.Logger("github.com/execgate/execgate/auditexport"), stamped: c}, nil
}

// Send exports recs as one request.
func (s *OTLPSender) Send(ctx context.Context, recs []Record) error {
	for _, r := range recs {
		s.logger.Emit(ctx, otelRecord(r))
	}
	batch := s.stamped.take()
	if err := s.exporter.Export(ctx, batch); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// Close shuts the exporter down.
func (s *OTLPSender) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s.provider.Shutdown(ctx)
	return s.exporter.Shutdown(ctx)
}

// otelRecord is r as a log record: the line as its body (what the local
// log holds, redacted), the event's time, a severity (WARN for a
// refusal), and the fields a collector filters on as attributes.
func otelRecord(r Record) otellog.Record {
	var o otellog.Record
	ev := r.Event
	o.SetTimestamp(ev.Time)
	o.SetEventName(ev.Event)
	o.SetBody(attribute.StringValue(string(r.Line)))
	sev, text := otellog.SeverityInfo, "INFO"
	if ev.Event == shim.EventDenied {
		sev, text = otellog.SeverityWarn, "WARN"
	}
	o.SetSeverity(sev)
	o.SetSeverityText(text)
	attrs := []attribute.KeyValue{
		attribute.String("execgate.event", ev.Event),
		attribute.String("execgate.agent", ev.Agent),
		attribute.String("execgate.decision", ev.Decision),
		attribute.String("execgate.risk", ev.Risk),
		attribute.String("execgate.id", ev.ID),
	}
	if ev.Seq > 0 {
		attrs = append(attrs, attribute.Int64("execgate.seq", ev.Seq), attribute.String("execgate.hash", ev.Hash))
	}
	if ev.Pid > 0 {
		attrs = append(attrs, attribute.Int("process.pid", ev.Pid))
	}
	o.AddAttributes(attrs...)
	return o
}
