package redact

import (
	"io"
	"strings"
	"testing"
)

// benchStream pushes size bytes of text through a Writer in 64 KiB writes,
// as the spill file receives a command's output.
func benchStream(b *testing.B, line string) {
	const size = 16 << 20
	text := []byte(strings.Repeat(line, size/len(line)))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		w := NewWriter(io.Discard)
		for i := 0; i < len(text); i += 64 << 10 {
			w.Write(text[i:min(i+64<<10, len(text))])
		}
		w.Close()
	}
}

// BenchmarkWriterPlain: a build log, no secret and no hint.
func BenchmarkWriterPlain(b *testing.B) {
	benchStream(b, "ok  \tgithub.com/example/project/internal/pkg\t0.123s\tcoverage: 81.2% of statements\n")
}

// BenchmarkWriterHints: every line holds hints (sk-, ghp_, authorization)
// but no secret, so every rule's expression runs.
func BenchmarkWriterHints(b *testing.B) {
	benchStream(b, "task-sk-1 ghp_x glpat-y the Authorization header; AKIA? private key docs\n")
}

// BenchmarkWriterSecrets: a token on every line.
func BenchmarkWriterSecrets(b *testing.B) {
	benchStream(b, "export GITHUB_TOKEN=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 # and more text\n")
}

// BenchmarkBinary: random-looking bytes without newlines.
func BenchmarkWriterBinary(b *testing.B) {
	var sb strings.Builder
	for i := range 4096 {
		sb.WriteByte(byte(i*7919 + i>>3))
	}
	benchStream(b, sb.String())
}

// BenchmarkStringCommand is what every audit event pays: a typical
// command, with nothing to redact.
func BenchmarkStringCommand(b *testing.B) {
	const cmd = "git status --short && npm run test -- --watch=false"
	for b.Loop() {
		_ = String(cmd)
	}
}
