package interp

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFlatMemory pushes 200 MB through the cap in a separate process and
// checks that process's peak RSS: memory must not grow with the output.
func TestFlatMemory(t *testing.T) {
	bash(t)
	if testing.Short() {
		t.Skip("pushes 200 MB through a pipe")
	}
	const total = 200 << 20
	cmd := helper(t, "rss", arg1Env+fmt.Sprintf("=%d", total), scriptEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	// Linux reports ru_maxrss in KiB; it covers the helper and its reaped
	// children (bash, head), all of which must stay small.
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	t.Logf("peak RSS for %d MB of output: %.1f MB", total>>20, float64(peak)/(1<<20))
	require.Less(t, peak, int64(64<<20))
}

// BenchmarkCappedThroughput measures how fast output flows through the cap
// (head, ring, marker; spilling off).
func BenchmarkCappedThroughput(b *testing.B) {
	sh := bash(b)
	const n = 64 << 20
	b.SetBytes(n)
	for b.Loop() {
		res, err := Run(context.Background(), Options{
			Shell: sh, Argv: []string{"bash", "-c", fmt.Sprintf("head -c %d /dev/zero", n)},
			Stdout: io.Discard, MaxBytes: DefaultMaxBytes, TailBytes: DefaultTailBytes,
		})
		if err != nil || res.Bytes != n {
			b.Fatal(res.Bytes, err)
		}
	}
}

// BenchmarkRunTrue is the cost of Run for a command that does nothing;
// compare with BenchmarkBashTrue.
func BenchmarkRunTrue(b *testing.B) {
	sh := bash(b)
	for b.Loop() {
		res, err := Run(context.Background(), Options{
			Shell: sh, Argv: []string{"bash", "-c", "true"},
			Stdout: io.Discard, Stderr: io.Discard, MaxBytes: DefaultMaxBytes, TailBytes: DefaultTailBytes,
			Relay: StartRelay(),
		})
		if err != nil || res.ExitStatus != 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkBashTrue runs bash -c true directly, as a baseline.
func BenchmarkBashTrue(b *testing.B) {
	sh := bash(b)
	for b.Loop() {
		cmd := exec.Command(sh, "-c", "true")
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpillThroughput measures the cap with spilling on: every byte
// is also redacted and written to the spill file. Compare with
// BenchmarkCappedThroughput (spilling off).
func BenchmarkSpillThroughput(b *testing.B) {
	sh := bash(b)
	const n = 64 << 20
	for _, tc := range []struct{ name, source string }{
		{"zeros", "/dev/zero"},
		{"log", "<(yes 'ok  github.com/example/project/internal/pkg 0.123s coverage: 81.2% of statements')"},
		{"hints", "<(yes 'see the Authorization header docs; task-sk-1 and disk-sk-2 ghp_ AKIA?')"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				res, err := Run(context.Background(), Options{
					Shell: sh, Argv: []string{"bash", "-c", fmt.Sprintf("head -c %d %s", n, tc.source)},
					Stdout: io.Discard, MaxBytes: DefaultMaxBytes, TailBytes: DefaultTailBytes,
					SpillDir: b.TempDir(), SpillMaxBytes: n,
				})
				if err != nil || res.Bytes != n || res.SpillPath == "" {
					b.Fatal(res.Bytes, res.SpillPath, err)
				}
			}
		})
	}
}
