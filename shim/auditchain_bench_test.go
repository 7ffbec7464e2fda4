package shim

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAuditAppend is what one audit event costs the shim: the shim
// appends two or three per command (docs/BENCHMARKS.md, issue 27).
func BenchmarkAuditAppend(b *testing.B) {
	l := &AuditLog{Path: filepath.Join(b.TempDir(), "audit.jsonl"), MaxBytes: 1 << 30}
	ev := Event{Time: time.Now(), Event: EventFinished, ID: "0123456789abcdef", Agent: "claude-code",
		Cwd: "/home/dev/project", Command: "git status --short", Risk: "safe", Decision: "allow", DecidedBy: ByPolicy}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Append(ev); err != nil {
			b.Fatal(err)
		}
	}
}
