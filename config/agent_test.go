package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDetectAgent(t *testing.T) {
	tests := []struct {
		name    string
		flag    string
		env     map[string]string
		environ []string
		want    string
	}{
		{"flag wins", "mine", map[string]string{"EXECGATE_AGENT": "env"}, []string{"CLAUDECODE=1"}, "mine"},
		{"EXECGATE_AGENT next", "", map[string]string{"EXECGATE_AGENT": "env"}, []string{"CLAUDECODE=1"}, "env"},
		{"claude code", "", nil, []string{"PATH=/bin", "CLAUDECODE=1"}, "claude-code"},
		{"claude code needs 1", "", nil, []string{"CLAUDECODE=0"}, DefaultAgent},
		{"gemini", "", nil, []string{"GEMINI_CLI=1"}, "gemini-cli"},
		{"codex any CODEX_ variable", "", nil, []string{"CODEX_SANDBOX=seatbelt"}, "codex"},
		{"codex empty value", "", nil, []string{"CODEX_HOME="}, "codex"},
		{"CODEX alone is not codex", "", nil, []string{"CODEX=1", "MY_CODEX_X=1"}, DefaultAgent},
		{"table order decides", "", nil, []string{"CODEX_X=1", "GEMINI_CLI=1", "CLAUDECODE=1"}, "claude-code"},
		{"malformed entries ignored", "", nil, []string{"CLAUDECODE", "=1"}, DefaultAgent},
		{"nothing", "", nil, nil, DefaultAgent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			assert.Equal(t, tt.want, DetectAgent(tt.flag, getenv, tt.environ))
		})
	}
}
