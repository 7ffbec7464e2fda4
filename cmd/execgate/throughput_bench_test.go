package main

import (
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
)

// The throughput benchmarks push EXECGATE_BENCH_BYTES (default 1 GiB) of
// output through a shell and measure MB/s (docs/BENCHMARKS.md, section
// Throughput). The producer is `head -c N /dev/zero`, the same on every
// side, so the figures differ only by what carries the bytes:
//
//   - to a file: stdout is a regular file. The shim is not in the data path
//     (the shell writes to the file itself), so it must match bash, and
//     bash must match the producer run with no shell at all;
//   - to an agent: stdout is a pipe and an agent is the caller, so the shim
//     caps: it pumps every byte through its capper and spill file.

func benchBytes(b *testing.B) int64 {
	if s := os.Getenv("EXECGATE_BENCH_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("EXECGATE_BENCH_BYTES=%q: want a positive number of bytes", s)
		}
		return n
	}
	return 1 << 30
}

// outputFile is where the file benchmarks write: tmpfs when there is one,
// so that the disk does not set the pace.
func outputFile(b *testing.B) *os.File {
	dir := b.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "execgate-bench-"); err == nil {
			b.Cleanup(func() { os.RemoveAll(d) })
			dir = d
		}
	}
	f, err := os.CreateTemp(dir, "out")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// benchToFile runs argv (path, then argv[0] onward) with stdout a regular
// file, truncated before each run.
func benchToFile(b *testing.B, e *shimEnv, env []string, path string, argv ...string) {
	n := benchBytes(b)
	out := outputFile(b)
	b.SetBytes(n)
	b.ResetTimer()
	for b.Loop() {
		if err := out.Truncate(0); err != nil {
			b.Fatal(err)
		}
		if _, err := out.Seek(0, io.SeekStart); err != nil {
			b.Fatal(err)
		}
		cmd := e.command(b.Context(), path, argv...)
		cmd.Env = env
		cmd.Stdout = out
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
	}
	b.StopTimer()
	if st, err := out.Stat(); err != nil || st.Size() != n {
		b.Fatalf("the file holds %v bytes, want %d (%v)", st.Size(), n, err)
	}
}

// benchToAgent runs argv with stdout a pipe the benchmark drains, as an
// agent reads a command's output.
func benchToAgent(b *testing.B, e *shimEnv, env []string, path string, argv ...string) {
	b.SetBytes(benchBytes(b))
	b.ResetTimer()
	for b.Loop() {
		cmd := e.command(b.Context(), path, argv...)
		cmd.Env = env
		r, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
	}
}

func produce(b *testing.B) string {
	return "head -c " + strconv.FormatInt(benchBytes(b), 10) + " /dev/zero"
}

// agentEnv names an agent caller.
func agentEnv(e *shimEnv) []string { return append(slices.Clone(e.env), "EXECGATE_AGENT=bench-agent") }

func BenchmarkThroughputFileHead(b *testing.B) {
	e := newShimEnv(b, "")
	head, err := exec.LookPath("head")
	if err != nil {
		b.Skip("head is not installed")
	}
	benchToFile(b, e, agentEnv(e), head, "head", "-c", strconv.FormatInt(benchBytes(b), 10), "/dev/zero")
}

func BenchmarkThroughputFileBash(b *testing.B) {
	e := newShimEnv(b, "")
	benchToFile(b, e, agentEnv(e), realBash(b), "bash", "-c", produce(b))
}

// BenchmarkThroughputFileShim: an agent's `sh -c … > file`: uncapped, the
// budget is bash's figure within 10%.
func BenchmarkThroughputFileShim(b *testing.B) {
	e := newShimEnv(b, "")
	benchToFile(b, e, agentEnv(e), e.shim("bash"), "bash", "-c", produce(b))
}

func BenchmarkThroughputAgentBash(b *testing.B) {
	e := newShimEnv(b, "")
	benchToAgent(b, e, agentEnv(e), realBash(b), "bash", "-c", produce(b))
}

// BenchmarkThroughputAgentShim: an agent reads the output from a pipe: the
// shim caps it, every byte passing through its capper.
func BenchmarkThroughputAgentShim(b *testing.B) {
	e := newShimEnv(b, "")
	benchToAgent(b, e, agentEnv(e), e.shim("bash"), "bash", "-c", produce(b))
}
