package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// TestManagedProtectedPaths: a path the managed policy protects is as
// dangerous to write as execgate's own files, beneath it too, and no
// allowlist wildcard covers the write.
func TestManagedProtectedPaths(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	protected := []string{"/srv/deploy", testHome + "/infra"}
	for _, tt := range []struct {
		command   string
		dangerous bool
	}{
		{"echo x > /srv/deploy", true},
		{"echo x >> /srv/deploy/keys/a", true},
		{"cp notes.txt ~/infra/main.tf", true},
		{"cd /srv && tee deploy/x < /dev/null", true},
		{"echo x > /srv/deployed", false},
		{"cat /srv/deploy/a", false}, // reading is not writing
	} {
		t.Run(tt.command, func(t *testing.T) {
			res := e.Evaluate(Request{
				Command: tt.command, Cwd: testWorkspace, Home: testHome, Policy: pol,
				Allow:            pattern.NewMatcher(entries("echo **", "cp **", "tee **", "cat **"), fakePath),
				ManagedProtected: protected,
			})
			reasons := strings.Join(res.Reasons, "; ")
			if tt.dangerous {
				assert.Equal(t, Dangerous, res.Risk, explain(res))
				assert.NotEqual(t, Allow, res.Decision)
				assert.Contains(t, reasons, "which the managed policy protects")
			} else {
				assert.NotContains(t, reasons, "managed policy")
			}
		})
	}
}
