package config

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gobwas/glob"
)

// EnvelopeConfig is one entry of the "envelopes" section.
type EnvelopeConfig struct {
	// TrustedSources are globs of the absolute paths the agent's envelope
	// may source (its shell snapshots); "~/" is the home directory and
	// `*` stays within one directory. When set they replace the defaults.
	TrustedSources []string `json:"trustedSources,omitempty"`
}

// parseEnvelopes reads the "envelopes" section: by agent id, an object
// with trustedSources, a list of absolute (or "~/") globs.
func (p *parser) parseEnvelopes(v any) map[string]EnvelopeConfig {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.warnf("envelopes", "want an object, got %s; using the defaults", describe(v))
		return nil
	}
	out := map[string]EnvelopeConfig{}
	for _, agent := range sortedKeys(m) {
		path := joinPath("envelopes", agent)
		e, ok := m[agent].(map[string]any)
		if !ok {
			p.warnf(path, "want an object, got %s; using the defaults", describe(m[agent]))
			continue
		}
		p.unknownFields(path, e, []string{"trustedSources"})
		list, ok := e["trustedSources"].([]any)
		if !ok {
			if e["trustedSources"] != nil {
				p.warnf(path+".trustedSources", "want a list of globs, got %s; using the defaults", describe(e["trustedSources"]))
			}
			continue
		}
		c := EnvelopeConfig{TrustedSources: []string{}}
		for i, item := range list {
			g, ok := item.(string)
			abs := ok && (filepath.IsAbs(g) || strings.HasPrefix(g, "~/"))
			if _, err := glob.Compile(g, '/'); !abs || err != nil {
				p.warnf(fmt.Sprintf("%s.trustedSources[%d]", path, i), "want an absolute path glob, got %s; ignoring it", describe(item))
				continue
			}
			c.TrustedSources = append(c.TrustedSources, g)
		}
		out[agent] = c
	}
	return out
}
