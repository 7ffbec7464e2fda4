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
	assert.Equal(t, Override{Security: SecurityDeny, Ask: AskAlways, AskFallback: SecurityAllowlist}, o)
	assert.Equal(t, []string{`EXECGATE_ASK="sometimes" is not one of off, on-miss, always; using always`}, warnings)

	o, warnings = EnvOverride(func(string) string { return "" })
	assert.Equal(t, Override{}, o)
	assert.Empty(t, warnings)
}

// FuzzEnvOverride: whatever an agent's environment holds, the policy it
// ends up with is never looser than the configured one in any field, and a
// value that is not valid is reported and stands for the strictest.
func FuzzEnvOverride(f *testing.F) {
	f.Add("deny", "always", "deny", 0)
	f.Add("full", "off", "full", 1)
	f.Add("dney", "sometimes", "ALLOWLIST", 2)
	f.Add("", "on-miss", "\x00", 3)
	bases := []Policy{
		{Security: SecurityFull, Ask: AskOff, AskFallback: SecurityFull},
		{Security: SecurityAllowlist, Ask: AskOnMiss, AskFallback: SecurityAllowlist},
		{Security: SecurityDeny, Ask: AskAlways, AskFallback: SecurityDeny},
		BuiltinPolicy(),
	}
	f.Fuzz(func(t *testing.T, security, ask, fallback string, base int) {
		env := map[string]string{SecurityEnv: security, AskEnv: ask, AskFallbackEnv: fallback}
		o, warnings := EnvOverride(func(k string) string { return env[k] })
		p := bases[uint(base)%uint(len(bases))]
		got := p.Tightened(o)
		if got.Security.rank() > p.Security.rank() || got.AskFallback.rank() > p.AskFallback.rank() {
			t.Fatalf("%+v tightened by %+v became %+v", p, o, got)
		}
		if got.Ask != p.Ask && got.Ask != AskAlways {
			t.Fatalf("%+v tightened by %+v asks %q", p, o, got.Ask)
		}
		invalid := 0
		for _, v := range []string{security, fallback} {
			if v != "" && !Security(v).Valid() {
				invalid++
			}
		}
		if ask != "" && !Ask(ask).Valid() {
			invalid++
			if got.Ask != AskAlways {
				t.Fatalf("EXECGATE_ASK=%q left ask %q", ask, got.Ask)
			}
		}
		if len(warnings) != invalid {
			t.Fatalf("%d invalid values, %d warnings: %q", invalid, len(warnings), warnings)
		}
		if security != "" && !Security(security).Valid() && got.Security != SecurityDeny {
			t.Fatalf("EXECGATE_SECURITY=%q left security %q", security, got.Security)
		}
	})
}
