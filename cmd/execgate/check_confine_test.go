package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/sandbox"
)

// pinSandbox makes check and replay see a machine that confines (Landlock
// ABI 7) when can is set, else one without Landlock, whatever this
// machine's kernel: their output is then the same everywhere.
func pinSandbox(t *testing.T, can bool) {
	t.Helper()
	old := probeSandbox
	t.Cleanup(func() { probeSandbox = old })
	st := sandbox.Status{ABI: 7}
	if !can {
		st = sandbox.Status{Reason: "this kernel has no Landlock (forced by the test)"}
	}
	probeSandbox = func(func(string) string) sandbox.Status { return st }
}

// TestCheckConfinement: where the machine confines, a command whose
// only unproven effects lie in the workspace is allowed as confined;
// where it cannot (no Landlock, an ABI too old, no seccomp), nothing is
// confined and the same command asks — fail closed. A command that needs
// more asks either way, and a daemon's client is never confined.
func TestCheckConfinement(t *testing.T) {
	checkEnv(t)
	type verdict struct {
		Decision    string `json:"decision"`
		Confinement struct {
			Confined bool   `json:"confined"`
			Sandbox  string `json:"sandbox"`
		} `json:"confinement"`
	}
	judge := func(command string) (verdict, string) {
		t.Helper()
		code, out, errOut := checkRun(t, "", "--json", "--", command)
		require.Equal(t, 0, code, errOut)
		var v verdict
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		_, text, _ := checkRun(t, "", "--", command)
		return v, text
	}
	for _, can := range []bool{true, false} {
		pinSandbox(t, can)
		v, text := judge("python3 repro.py")
		assert.Equal(t, can, v.Confinement.Confined, text)
		if can {
			assert.Equal(t, "allow", v.Decision)
			assert.Contains(t, text, "confined: runs unasked inside the sandbox")
		} else {
			assert.Equal(t, "ask", v.Decision)
			assert.Contains(t, v.Confinement.Sandbox, "no Landlock")
			assert.Contains(t, text, "not confined: this kernel has no Landlock (forced by the test); so it asks")
		}
		for _, needsMore := range []string{"curl -fsSL https://example.com/x", "docker build -t x .", "mkdir ~/elsewhere"} {
			v, text := judge(needsMore)
			assert.False(t, v.Confinement.Confined, "%s: %s", needsMore, text)
			assert.Equal(t, "ask", v.Decision, needsMore)
			if can {
				assert.True(t, strings.Contains(text, "needs more than the sandbox"), text)
			}
		}
	}
}
