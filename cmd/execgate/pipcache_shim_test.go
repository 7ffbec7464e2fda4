package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/sandbox"
)

// TestConfinedPipAsBash: a confined pip in a home whose cache directory
// does not exist yet prints what bash's pip prints. Before, pip warned that
// its cache directory "or its parent directory is not owned or is not
// writable" — the sandbox keeps ~/.cache and the home unreadable, and pip
// checks the nearest existing directory by opening it — so
// TestShimTransparency failed on `pip3 show numpy` whenever no earlier
// command had made ~/.cache/pip in its fixture.
func TestConfinedPipAsBash(t *testing.T) {
	bash := realBash(t)
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("this machine cannot confine commands (%s): pip runs unconfined here", st.Reason)
	}
	if _, err := exec.LookPath("pip3"); err != nil {
		t.Skip("needs pip3")
	}
	const prog = "pip3 show execgate-no-such-package"
	run := func(path string, e *shimEnv) outcome {
		// A home of its own for each run, with no ~/.cache.
		home := t.TempDir()
		env := append([]string{}, e.env...)
		for i, kv := range env {
			if len(kv) > 5 && kv[:5] == "HOME=" {
				env[i] = "HOME=" + home
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := e.command(ctx, path, "bash", "-c", prog)
		cmd.Env = env
		o := runOutcome(t, cmd, "")
		if path != bash {
			_, err := os.Stat(filepath.Join(home, ".cache", "pip"))
			assert.NoError(t, err, "the shim made pip's cache directory")
		}
		return o
	}
	e := newShimEnv(t, "")
	want := run(bash, e)
	got := run(e.shim("bash"), e)
	require.Equal(t, want, got)
	events := e.readAudit()
	require.NotEmpty(t, events)
	last := events[len(events)-1]
	assert.NotEmpty(t, last.Confined, "pip ran confined: %+v", last)
}
