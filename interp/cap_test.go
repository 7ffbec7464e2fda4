package interp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// piece is one write the caller received: which stream and what.
type piece struct {
	stream int
	b      []byte
}

// recorder keeps every write to either stream in order, so tests can check
// both the per-stream bytes and the interleaving.
type recorder struct{ pieces []piece }

type streamWriter struct {
	r *recorder
	s int
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.r.pieces = append(w.r.pieces, piece{w.s, bytes.Clone(p)})
	return len(p), nil
}

func (r *recorder) writers() [2]io.Writer {
	return [2]io.Writer{streamWriter{r, 0}, streamWriter{r, 1}}
}

// flat returns the merged output and each stream's output.
func flat(ps []piece) (merged string, streams [2]string) {
	var m strings.Builder
	var s [2]strings.Builder
	for _, p := range ps {
		m.Write(p.b)
		s[p.stream].Write(p.b)
	}
	return m.String(), [2]string{s[0].String(), s[1].String()}
}

// model computes, one byte at a time and without any ring, what the caller
// must receive for the given writes under a cap of max with a tail of tail.
func model(chunks []piece, max, tail int) []piece {
	type tb struct {
		s int
		b byte
	}
	var all []tb
	for _, c := range chunks {
		for _, b := range c.b {
			all = append(all, tb{c.stream, b})
		}
	}
	var out []piece
	emit := func(bs []tb) {
		for _, x := range bs {
			out = append(out, piece{x.s, []byte{x.b}})
		}
	}
	if max == 0 || len(all) <= max {
		emit(all)
		return out
	}
	head, omitted, last := all[:max-tail], all[max-tail:len(all)-tail], all[len(all)-tail:]
	emit(head)
	ms := 1
	for _, x := range omitted {
		if x.s == 0 {
			ms = 0
		}
	}
	_, before := flat(out)
	m := fmt.Sprintf("… [execgate: %d bytes omitted; full output not saved] …\n", len(omitted))
	if before[ms] != "" && !strings.HasSuffix(before[ms], "\n") {
		m = "\n" + m
	}
	out = append(out, piece{ms, []byte(m)})
	emit(last)
	return out
}

// TestCapperModel feeds the capper chunk sequences around every boundary
// (total just under, at and over the cap; tail 0 and tail = cap; chunks of
// one byte and chunks larger than the tail) and compares with model.
func TestCapperModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(total, maxChunk int) []piece {
		var cs []piece
		for n := 0; n < total; {
			k := min(1+rng.IntN(maxChunk), total-n)
			b := make([]byte, k)
			for i := range b {
				b[i] = "ab\ncd\nxyz"[rng.IntN(9)]
			}
			cs = append(cs, piece{rng.IntN(2), b})
			n += k
		}
		return cs
	}
	for _, max := range []int{0, 1, 2, 10, 100} {
		for _, tail := range []int{0, 1, max / 3, max - 1, max} {
			if tail < 0 || (max > 0 && tail > max) {
				continue
			}
			for _, total := range []int{0, 1, max - 1, max, max + 1, max + tail + 1, 3*max + 7} {
				for _, maxChunk := range []int{1, 3, max + 5} {
					if total < 0 {
						continue
					}
					chunks := gen(total, maxChunk)
					name := fmt.Sprintf("max%d/tail%d/total%d/chunk%d", max, tail, total, maxChunk)
					t.Run(name, func(t *testing.T) {
						var rec recorder
						c := newCapper(rec.writers(), int64(max), int64(tail), nil, slog.New(slog.DiscardHandler))
						for _, ch := range chunks {
							require.NoError(t, c.write(ch.stream, ch.b))
						}
						var res Result
						c.finish(&res)
						wantM, wantS := flat(model(chunks, max, tail))
						gotM, gotS := flat(rec.pieces)
						require.Equal(t, wantM, gotM, "merged")
						require.Equal(t, wantS, gotS, "per stream")
						all, _ := flat(chunks)
						assert.Equal(t, int64(total), res.Bytes)
						assert.Equal(t, all[len(all)-min(tail, len(all)):], string(res.Tail))
						if max > 0 && total > max {
							assert.Equal(t, int64(total-max), res.Omitted)
						} else {
							assert.Zero(t, res.Omitted)
						}
					})
				}
			}
		}
	}
}

// writeFile writes content to a new file in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// text returns n bytes of numbered lines, so that any misplaced byte shows.
func text(n int, tag string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s%d\n", tag, i)
	}
	return b.String()[:n]
}

// spillFiles lists the spill files in dir.
func spillFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, spillPrefix+"*"+spillSuffix))
	require.NoError(t, err)
	return m
}

// TestRunCapExact runs real commands around the cap and checks every byte
// the caller gets, the marker line and the spill file.
func TestRunCapExact(t *testing.T) {
	sh := bash(t)
	const max, tail = 1000, 300
	for _, stream := range []string{"stdout", "stderr"} {
		for _, n := range []int{max - 1, max, max + 1, max + 2, 5000, 300000} {
			t.Run(fmt.Sprintf("%s/%d", stream, n), func(t *testing.T) {
				dir := t.TempDir()
				spillDir := filepath.Join(dir, "spill")
				content := text(n, "line")
				in := writeFile(t, dir, "in", content)
				redir := ""
				if stream == "stderr" {
					redir = " >&2"
				}
				var out, errOut bytes.Buffer
				res, err := Run(context.Background(), Options{
					Shell: sh, Argv: []string{"bash", "-c", "cat " + in + redir},
					Stdout: &out, Stderr: &errOut, MaxBytes: max, TailBytes: tail,
					SpillDir: spillDir, SpillMaxBytes: 1 << 20,
				})
				require.NoError(t, err)
				got, other := out.String(), errOut.String()
				if stream == "stderr" {
					got, other = other, got
				}
				assert.Empty(t, other)
				assert.Equal(t, int64(n), res.Bytes)
				assert.Equal(t, content[n-min(n, tail):], string(res.Tail))
				if n <= max {
					assert.Equal(t, content, got)
					assert.Zero(t, res.Omitted)
					assert.Empty(t, res.SpillPath)
					assert.Empty(t, spillFiles(t, spillDir), "no spill kept when nothing was cut")
					return
				}
				head := content[:max-tail]
				sep := ""
				if !strings.HasSuffix(head, "\n") {
					sep = "\n"
				}
				want := head + sep + fmt.Sprintf("… [execgate: %d bytes omitted; full output: %s] …\n", n-max, res.SpillPath) + content[n-tail:]
				assert.Equal(t, want, got)
				assert.Equal(t, int64(n-max), res.Omitted)
				require.Equal(t, []string{res.SpillPath}, spillFiles(t, spillDir))
				spilled, err := os.ReadFile(res.SpillPath)
				require.NoError(t, err)
				assert.Equal(t, content, string(spilled))
				fi, err := os.Stat(res.SpillPath)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
				di, err := os.Stat(spillDir)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())
			})
		}
	}
}

// TestRunCapMixed checks a command that writes both streams past the cap:
// each stream gets its own bytes, the marker goes to stdout (which lost
// bytes) and the spill has both, in order.
func TestRunCapMixed(t *testing.T) {
	sh := bash(t)
	const max, tail = 2000, 500
	dir := t.TempDir()
	a, b := text(1800, "out"), text(1700, "err")
	pa, pb := writeFile(t, dir, "a", a), writeFile(t, dir, "b", b)
	// The pause lets the stdout reader take all of a before b arrives, so
	// the order of the combined stream is known.
	var out, errOut bytes.Buffer
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", fmt.Sprintf("cat %s; sleep 0.2; cat %s >&2", pa, pb)},
		Stdout: &out, Stderr: &errOut, MaxBytes: max, TailBytes: tail,
		SpillDir: dir, SpillMaxBytes: 1 << 20,
	})
	require.NoError(t, err)
	all := a + b
	head := a[:max-tail]
	sep := ""
	if !strings.HasSuffix(head, "\n") {
		sep = "\n"
	}
	assert.Equal(t, head+sep+fmt.Sprintf("… [execgate: %d bytes omitted; full output: %s] …\n", len(all)-max, res.SpillPath), out.String(),
		"stdout: its first 1500 bytes are the head, the rest is omitted, and no tail byte is from stdout")
	assert.Equal(t, b[len(b)-tail:], errOut.String(), "stderr: only the tail")
	spilled, err := os.ReadFile(res.SpillPath)
	require.NoError(t, err)
	assert.Equal(t, all, string(spilled))
}

// TestRunCapMarkerStream checks that the marker goes to stderr when only
// stderr lost bytes, even if stdout was written.
func TestRunCapMarkerStream(t *testing.T) {
	sh := bash(t)
	dir := t.TempDir()
	b := text(5000, "err")
	pb := writeFile(t, dir, "b", b)
	var out, errOut bytes.Buffer
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", fmt.Sprintf("echo hi; sleep 0.2; cat %s >&2", pb)},
		Stdout: &out, Stderr: &errOut, MaxBytes: 1000, TailBytes: 100,
	})
	require.NoError(t, err)
	assert.Equal(t, "hi\n", out.String())
	assert.Equal(t, b[:897]+"\n… [execgate: 4003 bytes omitted; full output not saved] …\n"+b[len(b)-100:], errOut.String())
	assert.Empty(t, res.SpillPath)
}

// TestRunSpillBounded checks that the spill file stops at SpillMaxBytes and
// the marker says so.
func TestRunSpillBounded(t *testing.T) {
	sh := bash(t)
	dir := t.TempDir()
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", "seq 1 100000"},
		Stdout: &out, MaxBytes: 100, TailBytes: 10, SpillDir: dir, SpillMaxBytes: 3000,
	})
	require.NoError(t, err)
	var b strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	full := b.String()
	assert.Equal(t, full[:90]+fmt.Sprintf("… [execgate: %d bytes omitted; first 3000 bytes of output: %s] …\n", len(full)-100, res.SpillPath)+full[len(full)-10:], out.String())
	spilled, err := os.ReadFile(res.SpillPath)
	require.NoError(t, err)
	assert.Equal(t, full[:3000], string(spilled))
}

// TestRunSpillEagerRemoved checks output that is held past eagerSpill (so
// the file is created early) but fits the cap: nothing is cut, nothing kept.
func TestRunSpillEagerRemoved(t *testing.T) {
	sh := bash(t)
	dir := t.TempDir()
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", fmt.Sprintf("head -c %d /dev/zero", eagerSpill+5000)},
		Stdout: &out, MaxBytes: 2 * eagerSpill, TailBytes: 100, SpillDir: dir, SpillMaxBytes: 4 * eagerSpill,
	})
	require.NoError(t, err)
	assert.Equal(t, eagerSpill+5000, out.Len())
	assert.Empty(t, res.SpillPath)
	assert.Empty(t, spillFiles(t, dir))
}

// TestRunSpillPrune checks that only the newest SpillKeep spills remain and
// that other files in the directory are left alone.
func TestRunSpillPrune(t *testing.T) {
	sh := bash(t)
	dir := t.TempDir()
	other := writeFile(t, dir, "notes.txt", "mine")
	clock := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var paths []string
	for i := range 4 {
		res, err := Run(context.Background(), Options{
			Shell: sh, Argv: []string{"bash", "-c", "seq 1 1000"},
			Stdout: io.Discard, MaxBytes: 100, TailBytes: 10,
			SpillDir: dir, SpillMaxBytes: 1 << 20, SpillKeep: 2,
			Now: func() time.Time { return clock.Add(time.Duration(i) * time.Millisecond) },
		})
		require.NoError(t, err)
		require.NotEmpty(t, res.SpillPath)
		paths = append(paths, res.SpillPath)
	}
	assert.Equal(t, paths[2:], spillFiles(t, dir))
	assert.FileExists(t, other)
}

// TestRunSpillFailure checks that a spill directory that cannot be created
// costs only the saved copy: the marker says so, the diagnostic goes to the
// logger and never into the command's output.
func TestRunSpillFailure(t *testing.T) {
	sh := bash(t)
	blocker := writeFile(t, t.TempDir(), "file", "not a directory")
	var out, errOut, logs bytes.Buffer
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", "seq 1 100"},
		Stdout: &out, Stderr: &errOut, MaxBytes: 50, TailBytes: 10,
		SpillDir: filepath.Join(blocker, "spill"), SpillMaxBytes: 1 << 20,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	require.NoError(t, err)
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	full := b.String()
	head := full[:40]
	sep := ""
	if !strings.HasSuffix(head, "\n") {
		sep = "\n"
	}
	assert.Equal(t, head+sep+fmt.Sprintf("… [execgate: %d bytes omitted; full output not saved] …\n", len(full)-50)+full[len(full)-10:], out.String())
	assert.Empty(t, errOut.String())
	assert.Empty(t, res.SpillPath)
	assert.Contains(t, logs.String(), "create spill directory")
}
