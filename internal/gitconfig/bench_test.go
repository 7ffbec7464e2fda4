package gitconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkStatusLookup: what judging `git status` adds to the shim's
// path — discovery, the configuration files, the hooks directory — in a
// repository of 200 files with an ordinary configuration.
func BenchmarkStatusLookup(b *testing.B) {
	env := newTestEnvB(b)
	repo := b.TempDir()
	env.mustGitB(b, repo, "init", "-q")
	for i := range 200 {
		p := filepath.Join(repo, fmt.Sprintf("d%d/f%d.txt", i%10, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env.mustGitB(b, repo, "add", ".")
	sub := filepath.Join(repo, "d3")
	b.ResetTimer()
	for b.Loop() {
		c, err := Load(Options{Dir: sub, Getenv: env.get})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Programs(Invocation{Sub: "status"}); err != nil {
			b.Fatal(err)
		}
	}
}

func newTestEnvB(b *testing.B) testEnv {
	return testEnv{"HOME": b.TempDir(), "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.Getenv("PATH")}
}

func (e testEnv) mustGitB(b *testing.B, dir string, args ...string) {
	b.Helper()
	if out, err := e.git(b, dir, args...); err != nil {
		b.Fatalf("git %v: %v: %s", args, err, out)
	}
}
