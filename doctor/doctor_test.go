package doctor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMissingProgram(t *testing.T) {
	assert.Equal(t, "/nonexistent/execgate", missingProgram("/nonexistent/execgate hook claude"))
	assert.Equal(t, "/nonexistent/my exe", missingProgram("'/nonexistent/my exe' hook claude"))
	assert.Empty(t, missingProgram("/bin/sh -c true"))
	assert.Empty(t, missingProgram("execgate hook claude"), "a PATH lookup is the agent's business")
	assert.Empty(t, missingProgram("'unterminated"))
}

// The probe speaks for no agent and cannot be loosened or re-aimed by the
// caller's own execgate variables; the configuration file stays.
func TestProbeEnviron(t *testing.T) {
	got := probeEnviron([]string{"PATH=/bin", "EXECGATE_SECURITY=full", "EXECGATE_AGENT=x", "EXECGATE_CONFIG=/c.json",
		"CLAUDECODE=1", "GEMINI_CLI=1", "CODEX_SANDBOX=1", "CODEX_HOME=/h"})
	assert.Equal(t, []string{"PATH=/bin", "EXECGATE_CONFIG=/c.json", "CODEX_HOME=/h"}, got)
}

func TestFailed(t *testing.T) {
	assert.False(t, Failed([]Check{{Status: OK}, {Status: Warn}, {Status: Info}}))
	assert.True(t, Failed([]Check{{Status: OK}, {Status: Fail}}))
}
