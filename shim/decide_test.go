package shim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/prompt"
)

// askerFunc adapts a function to prompt.Asker.
type askerFunc func(context.Context, prompt.Request) (prompt.Answer, error)

func (f askerFunc) Ask(ctx context.Context, r prompt.Request) (prompt.Answer, error) {
	return f(ctx, r)
}

// TestAskFailureFailsClosed: when a channel breaks while asking (a hub
// killed mid-request), the command is refused even though askFallback
// would allow it had nobody been there to ask; an absent channel applies
// askFallback.
func TestAskFailureFailsClosed(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "full"}}`), 0o600))
	env := map[string]string{"EXECGATE_CONFIG": config, "XDG_STATE_HOME": filepath.Join(dir, "state"), "PATH": os.Getenv("PATH"), "EXECGATE_AGENT": "test"}
	tests := []struct {
		name   string
		err    error
		status int
		stdout string
		stderr string
	}{
		{"hub died", errors.New("hub: connection lost"), ExitDenied, "", "execgate: denied: "},
		{"nobody there", prompt.ErrUnavailable, 0, "ran\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, err := os.CreateTemp(dir, "out")
			require.NoError(t, err)
			stderr, err := os.CreateTemp(dir, "err")
			require.NoError(t, err)
			status := Main(t.Context(), Options{
				Argv:  []string{"bash", "-c", "echo ran; : 2>/dev/null >/dev/tcp/127.0.0.1/1 || true"}, // the network: asks, confined or not
				Stdin: nil, Stdout: stdout, Stderr: stderr,
				Getenv:  func(k string) string { return env[k] },
				Environ: []string{"PATH=" + env["PATH"]},
				Asker: askerFunc(func(context.Context, prompt.Request) (prompt.Answer, error) {
					return prompt.Answer{}, tt.err
				}),
			})
			out, _ := os.ReadFile(stdout.Name())
			errOut, _ := os.ReadFile(stderr.Name())
			assert.Equal(t, tt.status, status)
			assert.Equal(t, tt.stdout, string(out))
			assert.True(t, strings.HasPrefix(string(errOut), tt.stderr), "stderr %q", errOut)
			if tt.status == ExitDenied {
				assert.Contains(t, string(errOut), "asking failed")
			}
		})
	}
}
