package config

import (
	"encoding/json"
	"strconv"
)

// ShellConfig is the "shell" section: how the shim runs approved commands.
type ShellConfig struct {
	// Path is the real shell; "" means the first of /bin/bash,
	// /usr/bin/bash, /bin/sh. The shim refuses a path that is not absolute
	// or that is execgate itself.
	Path string `json:"path,omitempty"`
	// Engine runs approved programs: "bash" (the default: the real shell,
	// after checking the whole program) or "interp" (mvdan.cc/sh's
	// interpreter, checking every external command's actual argv as it
	// runs; see docs/interp-engine.md).
	Engine string `json:"engine,omitempty"`
}

// Shell engines.
const (
	EngineBash   = "bash"
	EngineInterp = "interp"
)

// OutputConfig is the "output" section: how much of a command's output the
// caller receives when it is not a terminal. A nil field takes the shim's
// default.
type OutputConfig struct {
	// MaxBytes caps stdout+stderr combined; 0 disables the cap.
	MaxBytes *int64 `json:"maxBytes,omitempty"`
	// TailBytes is how much of the end is kept when output is cut.
	TailBytes *int64 `json:"tailBytes,omitempty"`
	// SpillMaxBytes bounds the file holding a cut output; 0 disables it.
	SpillMaxBytes *int64 `json:"spillMaxBytes,omitempty"`
}

// maxOutputSetting bounds the byte counts: 1 TiB is no real limit, and a
// bound keeps the arithmetic on them far from overflow.
const maxOutputSetting = 1 << 40

func (p *parser) parseShell(v any) ShellConfig {
	var s ShellConfig
	if v == nil {
		return s
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf("shell", "want an object, got %s; ignoring it", describe(v))
		return s
	}
	s.Path = p.stringField("shell", m, "path")
	switch e := p.stringField("shell", m, "engine"); e {
	case "", EngineBash, EngineInterp:
		s.Engine = e
	default:
		// The bash engine checks the whole program before anything runs,
		// the stricter of the two: a typo must not pick the other.
		p.warnf("shell.engine", "want %q or %q, got %q; using %q", EngineBash, EngineInterp, e, EngineBash)
	}
	p.unknownFields("shell", m, []string{"path", "engine"})
	return s
}

// parseOutput reads the output section. A bad value is dropped with a
// warning, leaving the default, which always caps: a mistake here can
// never turn capping off.
func (p *parser) parseOutput(v any) OutputConfig {
	var o OutputConfig
	if v == nil {
		return o
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf("output", "want an object, got %s; using the defaults", describe(v))
		return o
	}
	o.MaxBytes = p.byteCount(m, "maxBytes")
	o.TailBytes = p.byteCount(m, "tailBytes")
	o.SpillMaxBytes = p.byteCount(m, "spillMaxBytes")
	if o.MaxBytes != nil && o.TailBytes != nil && *o.MaxBytes > 0 && *o.TailBytes > *o.MaxBytes {
		p.warnf("output.tailBytes", "%d exceeds maxBytes %d; using %d", *o.TailBytes, *o.MaxBytes, *o.MaxBytes)
		o.TailBytes = o.MaxBytes
	}
	p.unknownFields("output", m, []string{"maxBytes", "tailBytes", "spillMaxBytes"})
	return o
}

// byteCount reads an optional whole number of bytes in [0, 1 TiB].
func (p *parser) byteCount(m map[string]any, key string) *int64 {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		p.warnf("output."+key, "want a number of bytes, got %s; using the default", describe(v))
		return nil
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || i < 0 || i > maxOutputSetting {
		p.warnf("output."+key, "want a whole number from 0 to %d, got %s; using the default", int64(maxOutputSetting), describe(v))
		return nil
	}
	return &i
}
