package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseShimSections(t *testing.T) {
	n := func(i int64) *int64 { return &i }
	tests := []struct {
		name     string
		raw      string
		shell    ShellConfig
		output   OutputConfig
		warnings []string
	}{
		{name: "absent", raw: `{}`},
		{name: "full",
			raw:    `{"shell":{"path":"/usr/bin/bash"},"output":{"maxBytes":1000,"tailBytes":100,"spillMaxBytes":0}}`,
			shell:  ShellConfig{Path: "/usr/bin/bash"},
			output: OutputConfig{MaxBytes: n(1000), TailBytes: n(100), SpillMaxBytes: n(0)}},
		{name: "interp engine", raw: `{"shell":{"engine":"interp"}}`, shell: ShellConfig{Engine: EngineInterp}},
		{name: "unknown engine", raw: `{"shell":{"engine":"zsh"}}`,
			warnings: []string{`shell.engine: want "bash" or "interp", got "zsh"; using "bash"`}},
		{name: "cap off", raw: `{"output":{"maxBytes":0}}`, output: OutputConfig{MaxBytes: n(0)}},
		{name: "wrong types",
			raw:      `{"shell":{"path":7,"engine":"bash","colour":1},"output":{"maxBytes":"big","tailBytes":-1,"spillMaxBytes":1.5}}`,
			shell:    ShellConfig{Engine: EngineBash},
			warnings: []string{"shell.path: want a string, got number 7; ignoring it", "shell.colour: unknown field; ignored", "output.maxBytes: want a number of bytes, got string \"big\"; using the default", "output.tailBytes: want a whole number from 0 to 1099511627776, got number -1; using the default", "output.spillMaxBytes: want a whole number from 0 to 1099511627776, got number 1.5; using the default"}},
		{name: "tail over max",
			raw:      `{"output":{"maxBytes":10,"tailBytes":20}}`,
			output:   OutputConfig{MaxBytes: n(10), TailBytes: n(10)},
			warnings: []string{"output.tailBytes: 20 exceeds maxBytes 10; using 10"}},
		{name: "not objects", raw: `{"shell":"bash","output":[]}`,
			warnings: []string{"shell: want an object, got string \"bash\"; ignoring it", "output: want an object, got an array; using the defaults"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings, err := ParseConfig([]byte(tt.raw))
			require.NoError(t, err)
			assert.Equal(t, tt.shell, cfg.Shell)
			assert.Equal(t, tt.output, cfg.Output)
			assert.Equal(t, tt.warnings, warnings)
		})
	}
}

// TestOutputFor: an agent's own output settings override "*"'s, which
// override the top-level section, field by field.
func TestOutputFor(t *testing.T) {
	n := func(i int64) *int64 { return &i }
	cfg, warnings, err := ParseConfig([]byte(`{"output":{"maxBytes":1000,"tailBytes":100},
		"agents":{"*":{"output":{"tailBytes":50}},"codex":{"output":{"maxBytes":0}},
		"gemini-cli":{"output":{"maxBytes":"lots","colour":1}}}}`))
	require.NoError(t, err)
	assert.Equal(t, []string{
		`agents.gemini-cli.output.maxBytes: want a number of bytes, got string "lots"; using the default`,
		"agents.gemini-cli.output.colour: unknown field; ignored",
	}, warnings)
	assert.Equal(t, OutputConfig{MaxBytes: n(1000), TailBytes: n(100)}, cfg.Output)
	assert.Equal(t, OutputConfig{MaxBytes: n(0), TailBytes: n(50)}, cfg.OutputFor("codex"))
	assert.Equal(t, OutputConfig{MaxBytes: n(1000), TailBytes: n(50)}, cfg.OutputFor("claude-code"))
	assert.Equal(t, OutputConfig{MaxBytes: n(1000), TailBytes: n(50)}, cfg.OutputFor("gemini-cli"))
	assert.Equal(t, OutputConfig{MaxBytes: n(1000), TailBytes: n(100)}, (&Config{Output: cfg.Output}).OutputFor("codex"))
}
