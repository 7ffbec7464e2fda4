package config

// AuditConfig is the "audit" section: what the shim keeps in its audit
// log (see the shim package and docs/threat-model.md, "What execgate
// stores").
type AuditConfig struct {
	// OutputTail says when a finished command's event keeps the end of
	// its output: OutputTailOff, OutputTailOn or
	// OutputTailUnlessCredentials ("" means DefaultOutputTail).
	OutputTail OutputTail `json:"outputTail,omitempty"`
	// Export names the collectors the log is also sent to (export.go).
	Export AuditExport `json:"export,omitzero"`
}

// OutputTail is audit.outputTail's value.
type OutputTail string

// OutputTail values.
const (
	// OutputTailOff keeps no output in the log.
	OutputTailOff OutputTail = "off"
	// OutputTailOn keeps the tail of every captured command's output.
	OutputTailOn OutputTail = "on"
	// OutputTailUnlessCredentials keeps it except for commands the policy
	// saw read or send credentials (the effects read-credentials and
	// send).
	OutputTailUnlessCredentials OutputTail = "unless-credentials"
)

// DefaultOutputTail is audit.outputTail when the configuration is silent.
const DefaultOutputTail = OutputTailUnlessCredentials

// Valid reports whether t is one of the defined values.
func (t OutputTail) Valid() bool {
	return t == OutputTailOff || t == OutputTailOn || t == OutputTailUnlessCredentials
}

// OutputTailSetting returns the configured audit.outputTail, or the
// default.
func (c *Config) OutputTailSetting() OutputTail {
	if c == nil || !c.Audit.OutputTail.Valid() {
		return DefaultOutputTail
	}
	return c.Audit.OutputTail
}

// parseAudit reads the audit section. A value that is not understood
// becomes "off", with a warning: a typo must not keep more than was
// asked for.
func (p *parser) parseAudit(v any) AuditConfig {
	var a AuditConfig
	if v == nil {
		return a
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf("audit", "want an object, got %s; keeping no output tail", describe(v))
		a.OutputTail = OutputTailOff
		return a
	}
	if raw, present := m["outputTail"]; present && raw != nil {
		s, isString := raw.(string)
		switch t := OutputTail(s); {
		case isString && t.Valid():
			a.OutputTail = t
		default:
			p.warnf("audit.outputTail", "want %q, %q or %q, got %s; using %q",
				OutputTailOff, OutputTailOn, OutputTailUnlessCredentials, describe(raw), OutputTailOff)
			a.OutputTail = OutputTailOff
		}
	}
	a.Export = p.parseExport("audit.export", m["export"])
	p.unknownFields("audit", m, []string{"outputTail", "export"})
	return a
}
