package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// builtBinary builds execgate once for the process benchmarks, the way
// install.sh does (static, trimmed).
var builtBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "execgate-bench-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "execgate")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	return bin, cmd.Run()
})

func benchProcess(b *testing.B, name string, args ...string) {
	b.Helper()
	cfg := filepath.Join(b.TempDir(), "exec-approvals.json")
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "EXECGATE_CONFIG="+cfg)
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProcessBashTrue is the yardstick: bash -c true.
func BenchmarkProcessBashTrue(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("bash not installed")
	}
	benchProcess(b, bash, "-c", "true")
}

// BenchmarkProcessCheckGitStatus is `execgate check -- 'git status'` as a
// whole process; the budget is about twice BenchmarkProcessBashTrue.
func BenchmarkProcessCheckGitStatus(b *testing.B) {
	bin, err := builtBinary()
	if err != nil {
		b.Fatal(err)
	}
	benchProcess(b, bin, "check", "--", "git status")
}
