package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOverrides(t *testing.T) {
	base := Policy{Security: SecurityAllowlist, Ask: AskOnMiss, AskFallback: SecurityAllowlist, TimeoutMs: 1000}
	with := func(f func(*Policy)) Policy { p := base; f(&p); return p }
	tests := []struct {
		name      string
		o         Override
		tightened Policy
		loosened  Policy
	}{
		{"nothing", Override{}, base, base},
		{"security full", Override{Security: SecurityFull}, base,
			with(func(p *Policy) { p.Security = SecurityFull })},
		{"security deny", Override{Security: SecurityDeny},
			with(func(p *Policy) { p.Security = SecurityDeny }),
			with(func(p *Policy) { p.Security = SecurityDeny })},
		{"ask off", Override{Ask: AskOff}, base,
			with(func(p *Policy) { p.Ask = AskOff })},
		{"ask always", Override{Ask: AskAlways},
			with(func(p *Policy) { p.Ask = AskAlways }),
			with(func(p *Policy) { p.Ask = AskAlways })},
		{"fallback full", Override{AskFallback: SecurityFull}, base,
			with(func(p *Policy) { p.AskFallback = SecurityFull })},
		{"fallback deny", Override{AskFallback: SecurityDeny},
			with(func(p *Policy) { p.AskFallback = SecurityDeny }),
			with(func(p *Policy) { p.AskFallback = SecurityDeny })},
		{"elevated", Elevated, base,
			with(func(p *Policy) { p.Security, p.Ask = SecurityFull, AskOff })},
		{"invalid", Override{Security: "dny", Ask: "never"}, base, base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.tightened, base.Tightened(tt.o), "tightened")
			assert.Equal(t, tt.loosened, base.Loosened(tt.o), "loosened")
		})
	}
}

func TestEnvOverride(t *testing.T) {
	env := map[string]string{SecurityEnv: "deny", AskEnv: "sometimes", AskFallbackEnv: "allowlist"}
	o, warnings := EnvOverride(func(k string) string { return env[k] })
	assert.Equal(t, Override{Security: SecurityDeny, AskFallback: SecurityAllowlist}, o)
	assert.Equal(t, []string{`EXECGATE_ASK="sometimes" is not one of off, on-miss, always; ignored`}, warnings)

	o, warnings = EnvOverride(func(string) string { return "" })
	assert.Equal(t, Override{}, o)
	assert.Empty(t, warnings)
}
