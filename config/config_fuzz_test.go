package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execgate/execgate/pattern"
)

// FuzzParseConfig checks that no input makes ParseConfig panic, and that a
// configuration it accepts is normalised: every level holds only valid
// values, every entry a valid pattern, and every agent resolves to a policy
// whose every field is valid.
func FuzzParseConfig(f *testing.F) {
	vectors, _ := filepath.Glob(filepath.Join("testdata", "config", "*.json"))
	for _, v := range vectors {
		if strings.HasSuffix(v, ".want.json") {
			continue
		}
		if raw, err := os.ReadFile(v); err == nil {
			f.Add(raw)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, warnings, err := ParseConfig(raw)
		for _, w := range warnings {
			if strings.Contains(w, "\n") {
				t.Fatalf("warning spans lines: %q", w)
			}
		}
		if err != nil {
			if cfg != nil {
				t.Fatalf("config returned with error %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		checkFields(t, "defaults", cfg.Defaults)
		agents := []string{WildcardAgent, DefaultAgent, "fuzz-unknown"}
		for name, a := range cfg.Agents {
			agents = append(agents, name)
			checkFields(t, "agents."+name, a.PolicyFields)
			for _, e := range append(a.Allowlist, a.Denylist...) {
				if err := pattern.ValidatePattern(e.Pattern); err != nil {
					t.Fatalf("agent %q kept invalid pattern %q: %v", name, e.Pattern, err)
				}
			}
		}
		for _, name := range agents {
			p := cfg.Resolve(name).Policy
			if !p.Security.Valid() || !p.Ask.Valid() || !p.AskFallback.Valid() || p.TimeoutMs <= 0 || p.TimeoutMs > maxTimeoutMs {
				t.Fatalf("agent %q resolves to an invalid policy %+v", name, p)
			}
		}
	})
}

// checkFields fails unless every field of a level is unset or valid.
func checkFields(t *testing.T, level string, f PolicyFields) {
	t.Helper()
	if f.Security != "" && !f.Security.Valid() ||
		f.Ask != "" && !f.Ask.Valid() ||
		f.AskFallback != "" && !f.AskFallback.Valid() ||
		f.TimeoutMs != nil && (*f.TimeoutMs <= 0 || *f.TimeoutMs > maxTimeoutMs) {
		t.Fatalf("%s keeps an invalid value: %+v", level, f)
	}
}
