package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/execgate/execgate/config"
)

// benchOnDisk judges command in a real workspace of files files, the
// cost the shim pays to look paths up on disk.
func benchOnDisk(b *testing.B, command string, files int) {
	root := b.TempDir()
	ws := filepath.Join(root, "home", "src", "repo")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range files {
		p := filepath.Join(ws, "d"+itoa(i/100), "f"+itoa(i)+".go")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# x\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	e := testEngine(b)
	req := Request{Command: command, Cwd: ws, Home: filepath.Join(root, "home"), Policy: config.BuiltinPolicy()}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.Analyze(req)
	}
}

// BenchmarkAnalyzeCatOnDisk: cat README.md looks up each component of
// one path (no walk).
func BenchmarkAnalyzeCatOnDisk(b *testing.B) { benchOnDisk(b, "cat README.md", 0) }

// BenchmarkAnalyzeGlobOnDisk: head -n 1 d0/*.go expands the glob on disk.
func BenchmarkAnalyzeGlobOnDisk(b *testing.B) { benchOnDisk(b, "head -n 1 d0/*.go", 100) }

// BenchmarkAnalyzeGrepFollowOnDisk: grep -R walks a 1,000-file tree for
// links.
func BenchmarkAnalyzeGrepFollowOnDisk(b *testing.B) { benchOnDisk(b, "grep -R x .", 1000) }
