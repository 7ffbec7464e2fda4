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

// OutputConfig is the "output" section, top level or in an agent's entry:
// how much of a command's output an agent receives. The shim caps only
// output an agent reads (a recognised agent, stdout a pipe or a socket; see
// the shim package); a file, a device or a terminal always gets every byte.
// A nil field takes the next level's value (see Config.OutputFor), then the
// shim's default.
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
func (p *parser) parseOutput(path string, v any) OutputConfig {
	var o OutputConfig
	if v == nil {
		return o
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf(path, "want an object, got %s; using the defaults", describe(v))
		return o
	}
	o.MaxBytes = p.byteCount(path, m, "maxBytes")
	o.TailBytes = p.byteCount(path, m, "tailBytes")
	o.SpillMaxBytes = p.byteCount(path, m, "spillMaxBytes")
	if o.MaxBytes != nil && o.TailBytes != nil && *o.MaxBytes > 0 && *o.TailBytes > *o.MaxBytes {
		p.warnf(path+".tailBytes", "%d exceeds maxBytes %d; using %d", *o.TailBytes, *o.MaxBytes, *o.MaxBytes)
		o.TailBytes = o.MaxBytes
	}
	p.unknownFields(path, m, []string{"maxBytes", "tailBytes", "spillMaxBytes"})
	return o
}

// OutputFor returns the output settings for agent: each field from the
// agent's own "output", else agent "*"'s, else the top-level section; nil
// where none sets it.
func (c *Config) OutputFor(agent string) OutputConfig {
	o := c.Output
	levels := []string{WildcardAgent}
	if agent != WildcardAgent {
		levels = append(levels, agent)
	}
	for _, name := range levels {
		a, ok := c.Agents[name]
		if !ok {
			continue
		}
		for _, f := range []struct{ dst, src **int64 }{
			{&o.MaxBytes, &a.Output.MaxBytes},
			{&o.TailBytes, &a.Output.TailBytes},
			{&o.SpillMaxBytes, &a.Output.SpillMaxBytes},
		} {
			if *f.src != nil {
				*f.dst = *f.src
			}
		}
	}
	return o
}

// byteCount reads an optional whole number of bytes in [0, 1 TiB].
func (p *parser) byteCount(path string, m map[string]any, key string) *int64 {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		p.warnf(path+"."+key, "want a number of bytes, got %s; using the default", describe(v))
		return nil
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || i < 0 || i > maxOutputSetting {
		p.warnf(path+"."+key, "want a whole number from 0 to %d, got %s; using the default", int64(maxOutputSetting), describe(v))
		return nil
	}
	return &i
}
