package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// AuditExport is audit.export: the collectors the audit log is sent to,
// besides the local file that stays the record. Export runs outside the
// shim (execgate-export, which `execgate log --export` runs), reading the
// local log from a cursor, so a collector that is down never slows a
// command.
type AuditExport struct {
	// OTLP sends each event as an OpenTelemetry log record over OTLP/HTTP.
	OTLP *OTLPExport `json:"otlp,omitempty"`
	// Syslog sends each event as one RFC 5424 message.
	Syslog *SyslogExport `json:"syslog,omitempty"`
}

// OTLPExport is an OpenTelemetry collector's OTLP/HTTP receiver.
type OTLPExport struct {
	// Endpoint is the receiver's base URL (http://collector:4318); the
	// records go to its /v1/logs.
	Endpoint string `json:"endpoint"`
	// Headers are sent with every request (an Authorization header, a
	// tenant id).
	Headers map[string]string `json:"headers,omitempty"`
}

// SyslogExport is a syslog receiver.
type SyslogExport struct {
	// Address is unix:///dev/log (the local daemon: rsyslog, or journald
	// where it owns /dev/log), udp://HOST:PORT or tcp://HOST:PORT
	// (octet-counted frames, RFC 6587).
	Address string `json:"address"`
	// Tag is the APP-NAME of every message; "execgate" when empty.
	Tag string `json:"tag,omitempty"`
}

// ExportTarget is one collector the audit log goes to.
type ExportTarget struct {
	// Kind is "otlp" or "syslog".
	Kind   string
	OTLP   *OTLPExport
	Syslog *SyslogExport
	// Managed is set for a target the managed policy requires.
	Managed bool
}

// Export target kinds.
const (
	ExportOTLP   = "otlp"
	ExportSyslog = "syslog"
)

// Where names the collector for messages: the endpoint or address.
func (t ExportTarget) Where() string {
	if t.OTLP != nil {
		return t.OTLP.Endpoint
	}
	if t.Syslog != nil {
		return t.Syslog.Address
	}
	return ""
}

// ID is a short stable name for the target, for its cursor file: the kind
// and a digest of where it sends (not of its headers, which may be
// secrets and may change).
func (t ExportTarget) ID() string {
	sum := sha256.Sum256([]byte(t.Kind + "\x00" + t.Where()))
	return t.Kind + "-" + hex.EncodeToString(sum[:6])
}

// ExportTargets lists where the audit log goes: the managed policy's
// targets, which no user setting removes, then the user's own that differ.
func (c *Config) ExportTargets() []ExportTarget {
	if c == nil {
		return nil
	}
	var out []ExportTarget
	add := func(e AuditExport, managed bool) {
		for _, t := range []ExportTarget{
			{Kind: ExportOTLP, OTLP: e.OTLP, Managed: managed},
			{Kind: ExportSyslog, Syslog: e.Syslog, Managed: managed},
		} {
			if t.Where() == "" {
				continue
			}
			if slices.ContainsFunc(out, func(o ExportTarget) bool { return o.ID() == t.ID() }) {
				continue
			}
			out = append(out, t)
		}
	}
	if c.Managed != nil {
		add(c.Managed.Export, true)
	}
	add(c.Audit.Export, false)
	return out
}

// parseExport reads an audit.export section. A target that cannot be used
// is dropped with a warning: sending nothing is what a mistake costs, and
// the local log keeps every event.
func (p *parser) parseExport(path string, v any) AuditExport {
	var e AuditExport
	if v == nil {
		return e
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf(path, "want an object, got %s; nothing is exported", describe(v))
		return e
	}
	if raw, ok := m["otlp"]; ok && raw != nil {
		e.OTLP = p.parseOTLP(path+".otlp", raw)
	}
	if raw, ok := m["syslog"]; ok && raw != nil {
		e.Syslog = p.parseSyslog(path+".syslog", raw)
	}
	p.unknownFields(path, m, []string{"otlp", "syslog"})
	return e
}

func (p *parser) parseOTLP(path string, v any) *OTLPExport {
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf(path, "want an object, got %s; not exported", describe(v))
		return nil
	}
	p.unknownFields(path, m, []string{"endpoint", "headers"})
	o := &OTLPExport{Endpoint: p.stringField(path, m, "endpoint")}
	if problem := checkEndpoint(o.Endpoint); problem != "" {
		p.warnf(path+".endpoint", "%s; not exported", problem)
		return nil
	}
	if raw, ok := m["headers"]; ok && raw != nil {
		hm, ok := raw.(map[string]any)
		if !ok {
			p.warnf(path+".headers", "want an object of strings, got %s; not exported", describe(raw))
			return nil
		}
		o.Headers = make(map[string]string, len(hm))
		for _, k := range sortedKeys(hm) {
			s, ok := hm[k].(string)
			if !ok || k == "" || strings.ContainsAny(k+s, "\r\n") {
				p.warnf(joinPath(path+".headers", k), "want a header name and a one-line string value; not exported")
				return nil
			}
			o.Headers[k] = s
		}
	}
	return o
}

// checkEndpoint says what is wrong with an OTLP/HTTP endpoint, or "".
func checkEndpoint(s string) string {
	u, err := url.Parse(s)
	switch {
	case s == "":
		return "missing (want http://HOST:PORT or https://HOST:PORT)"
	case err != nil:
		return fmt.Sprintf("not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return fmt.Sprintf("want http://HOST:PORT or https://HOST:PORT, got %s", quote(s))
	}
	return ""
}

func (p *parser) parseSyslog(path string, v any) *SyslogExport {
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf(path, "want an object, got %s; not exported", describe(v))
		return nil
	}
	p.unknownFields(path, m, []string{"address", "tag"})
	s := &SyslogExport{Address: p.stringField(path, m, "address"), Tag: p.stringField(path, m, "tag")}
	if _, _, err := SyslogNetwork(s.Address); err != nil {
		p.warnf(path+".address", "%v; not exported", err)
		return nil
	}
	if len(s.Tag) > 48 || strings.ContainsFunc(s.Tag, func(r rune) bool { return r <= ' ' || r > '~' }) {
		p.warnf(path+".tag", "want up to 48 printable ASCII characters without spaces; not exported")
		return nil
	}
	return s
}

// SyslogNetwork splits a syslog address into what net.Dial takes:
// unix:///dev/log → ("unixgram", "/dev/log"), udp://h:514 → ("udp",
// "h:514"), tcp://h:601 → ("tcp", "h:601").
func SyslogNetwork(addr string) (network, address string, err error) {
	scheme, rest, ok := strings.Cut(addr, "://")
	if !ok || rest == "" {
		return "", "", fmt.Errorf("want unix:///PATH, udp://HOST:PORT or tcp://HOST:PORT, got %s", quote(addr))
	}
	switch scheme {
	case "unix":
		if !strings.HasPrefix(rest, "/") {
			return "", "", fmt.Errorf("want an absolute socket path, got %s", quote(addr))
		}
		return "unixgram", rest, nil
	case "udp", "tcp":
		if !strings.Contains(rest, ":") || strings.Contains(rest, "/") {
			return "", "", fmt.Errorf("want %s://HOST:PORT, got %s", scheme, quote(addr))
		}
		return scheme, rest, nil
	}
	return "", "", fmt.Errorf("want unix:///PATH, udp://HOST:PORT or tcp://HOST:PORT, got %s", quote(addr))
}
