package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchRepo makes a git repository of files files in 100 directories
// (about 2 KB each), with a .gitignore and an ignored node_modules.
func benchRepo(b *testing.B, files int) string {
	b.Helper()
	dir := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		b.Skipf("git init: %v %s", err, out)
	}
	content := make([]byte, 2048)
	for i := range files {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%100))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		copy(content, fmt.Sprintf("file %d\n", i))
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.go", i)), content, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n*.o\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "node_modules", "dep"), 0o755)
	os.WriteFile(filepath.Join(dir, "node_modules", "dep", "index.js"), content, 0o644)
	return dir
}

// BenchmarkTake is the cost added before a writing command: a checkpoint
// of a 10,000-file git repository in which 10 files changed since the
// last one (docs/BENCHMARKS.md).
func BenchmarkTake(b *testing.B) {
	dir := benchRepo(b, 10_000)
	s, err := Open(b.TempDir(), dir, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Take(ctx, "first", ""); err != nil { // the baseline copy
		b.Fatal(err)
	}
	n := 0
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		for j := range 10 {
			p := filepath.Join(dir, fmt.Sprintf("pkg%02d", j), fmt.Sprintf("f%05d.go", j))
			if err := os.WriteFile(p, fmt.Appendf(nil, "changed %d %d\n", n, j), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		n++
		b.StartTimer()
		c := cpuTime()
		if _, err := s.Take(ctx, "cmd", ""); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - c
	}
	// CPU time is what a loaded machine (other builds, tests) does not
	// inflate as it does the wall clock's.
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTakeFirst is the first checkpoint of the same repository: it
// copies every file once.
func BenchmarkTakeFirst(b *testing.B) {
	dir := benchRepo(b, 10_000)
	ctx := context.Background()
	var cpu time.Duration
	for b.Loop() {
		s, err := Open(b.TempDir(), dir, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		c := cpuTime()
		if _, err := s.Take(ctx, "first", ""); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - c
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkTakeFirstCommitted is the first checkpoint of the same
// repository once its files are committed: they are kept as the index's
// blobs, and nothing is copied.
func BenchmarkTakeFirstCommitted(b *testing.B) {
	dir := benchRepo(b, 10_000)
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	ctx := context.Background()
	var cpu time.Duration
	for b.Loop() {
		s, err := Open(b.TempDir(), dir, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		c := cpuTime()
		info, err := s.Take(ctx, "first", "")
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - c
		if info.Copied > 1<<20 {
			b.Fatalf("copied %d bytes of a committed repository", info.Copied)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
