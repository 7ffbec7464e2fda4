package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/sandbox"
)

// TestConfinedToolsInFreshHome: a confined tool in a home where its cache
// directory does not exist yet behaves as under bash. Before, in a fresh
// home, `go test` failed ("failed to initialize build cache at
// ~/.cache/go-build: mkdir ~/.cache: permission denied"), npm could not
// write its log, and pip warned that its cache directory "or its parent
// directory is not owned or is not writable" (TestShimTransparency's old
// flake on `pip3 show numpy`): the sandbox keeps ~/.cache and the home
// unwritable, and a path that does not exist cannot be granted.
func TestConfinedToolsInFreshHome(t *testing.T) {
	bash := realBash(t)
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("this machine cannot confine commands (%s): tools run unconfined here", st.Reason)
	}
	cases := []struct {
		name, tool, prog string
		files            map[string]string
		made             []string // under the home, made by the shim
	}{
		{name: "pip", tool: "pip3", prog: "pip3 show execgate-no-such-package", made: []string{".cache/pip"}},
		{name: "go test", tool: "go", prog: "go test ./...", files: map[string]string{
			"go.mod":    "module fresh\n\ngo 1.21\n",
			"x_test.go": "package fresh\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
		}, made: []string{".cache/execgate/go-build"}},
		{name: "npm script fails", tool: "npm", prog: "npm run nope", files: map[string]string{
			"package.json": `{"name":"fresh","version":"1.0.0","scripts":{"test":"exit 3"}}`,
		}, made: []string{".npm/_logs"}},
	}
	// What differs from run to run whatever runs it: the home, npm's log
	// file's time stamp, go's timing.
	volatile := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d_\d\d_\d\d_\d+Z|\t\d+\.\d+s|\(cached\)`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := exec.LookPath(c.tool); err != nil {
				t.Skipf("needs %s", c.tool)
			}
			run := func(path string, e *shimEnv) outcome {
				home := t.TempDir()
				work := t.TempDir()
				for name, body := range c.files {
					require.NoError(t, os.WriteFile(filepath.Join(work, name), []byte(body), 0o644))
				}
				var env []string
				for _, kv := range e.env {
					switch name, _, _ := strings.Cut(kv, "="); name {
					case "HOME", "GOCACHE", "GOPATH", "GOMODCACHE", "GOENV", "npm_config_cache", "PIP_CACHE_DIR":
						continue
					}
					env = append(env, kv)
				}
				env = append(env, "HOME="+home, "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local",
					// Their update checks need the network, which bash has.
					"npm_config_update_notifier=false", "PIP_DISABLE_PIP_VERSION_CHECK=1")
				ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
				defer cancel()
				cmd := e.command(ctx, path, "bash", "-c", c.prog)
				cmd.Env, cmd.Dir = env, work
				o := runOutcome(t, cmd, "")
				for _, s := range []*string{&o.stdout, &o.stderr} {
					*s = volatile.ReplaceAllString(strings.ReplaceAll(strings.ReplaceAll(*s, home, "HOME"), work, "WORK"), "…")
				}
				for _, m := range c.made {
					if path == bash {
						break
					}
					_, err := os.Stat(filepath.Join(home, m))
					assert.NoError(t, err, "the shim made ~/%s", m)
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
			assert.NotEmpty(t, last.Confined, "ran confined: %+v", last)
		})
	}
}
