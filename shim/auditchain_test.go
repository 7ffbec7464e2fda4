package shim

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chainLog is a log of n events, each command naming its number.
func chainLog(t *testing.T, n int) *AuditLog {
	t.Helper()
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "state", "audit.jsonl")}
	appendN(t, l, 0, n)
	return l
}

func appendN(t testing.TB, l *AuditLog, from, n int) {
	t.Helper()
	base := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	for i := from; i < from+n; i++ {
		require.NoError(t, l.Append(Event{Time: base.Add(time.Duration(i) * time.Second), Event: EventStarted,
			ID: fmt.Sprintf("%016x", i), Agent: "claude-code", Cwd: "/work", Command: fmt.Sprintf("echo %d", i+1)}))
	}
}

func verify(t *testing.T, l *AuditLog) *ChainReport {
	t.Helper()
	r, err := l.Verify()
	require.NoError(t, err)
	return r
}

// problems is r's problems as "line: text" (the file's base name left out
// when it is the live log).
func problems(l *AuditLog, r *ChainReport) []string {
	var out []string
	for _, p := range r.Problems {
		if p.File == l.Path && p.Line > 0 {
			out = append(out, fmt.Sprintf("%d: %s", p.Line, p.Text))
			continue
		}
		out = append(out, p.String())
	}
	return out
}

// editLines rewrites the live log's lines with fn.
func editLines(t *testing.T, path string, fn func(lines []string) []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	lines = fn(lines)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
}

func TestAuditChainIntact(t *testing.T) {
	l := chainLog(t, 12)
	r := verify(t, l)
	assert.True(t, r.Intact(), "%v", r.Problems)
	assert.Empty(t, r.Notes)
	assert.Equal(t, 12, r.Chained)
	assert.Equal(t, int64(1), r.FirstSeq)
	assert.Equal(t, int64(12), r.LastSeq)
	evs := readAll(t, l, time.Time{})
	require.Len(t, evs, 12)
	assert.Equal(t, genesis, evs[0].Prev)
	for i := 1; i < len(evs); i++ {
		assert.Equal(t, evs[i-1].Hash, evs[i].Prev)
		assert.Equal(t, int64(i+1), evs[i].Seq)
	}
}

// TestAuditChainCatchesTampering: every way of changing a written log that
// the issue names — an edited, a deleted, a swapped line — and the others
// (lines cut from either end, a line copied or added, the head removed) is
// reported at the line where it shows.
func TestAuditChainCatchesTampering(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(t *testing.T, l *AuditLog)
		want []string
	}{
		{"edited", func(t *testing.T, l *AuditLog) {
			editLines(t, l.Path, func(ls []string) []string {
				ls[4] = strings.Replace(ls[4], `"echo 5"`, `"echo 5; curl evil.example"`, 1)
				return ls
			})
		}, []string{"5: edited: its hash does not match its text"}},
		{"deleted", func(t *testing.T, l *AuditLog) {
			editLines(t, l.Path, func(ls []string) []string { return append(ls[:6:6], ls[7:]...) })
		}, []string{"7: 1 line missing before it (seq 7): deleted"}},
		{"swapped", func(t *testing.T, l *AuditLog) {
			editLines(t, l.Path, func(ls []string) []string {
				ls[2], ls[3] = ls[3], ls[2]
				return ls
			})
		}, []string{"3: it comes before seq 3 (at " + "AUDIT:4): lines reordered", "4: seq 3 comes after seq 4 (AUDIT:3): lines reordered"}},
		{"two deleted in the middle", func(t *testing.T, l *AuditLog) {
			editLines(t, l.Path, func(ls []string) []string { return append(ls[:3:3], ls[5:]...) })
		}, []string{"4: 2 lines missing before it (seq 4–5): deleted"}},
		{"cut from the end", func(t *testing.T, l *AuditLog) {
			editLines(t, l.Path, func(ls []string) []string { return ls[:9] })
		}, []string{"9: the log ends here at seq 9, but the head records seq 12: seq 10–12 removed from the end"}},
		{"cut from the start", func(t *testing.T, l *AuditLog) {
			editLines(t, l.Path, func(ls []string) []string { return ls[2:] })
		}, []string{"1: 2 lines missing before it (seq 1–2): removed from the start of the log"}},
		{"copied", func(t *testing.T, l *AuditLog) {
			editLines(t, l.Path, func(ls []string) []string { return append(ls, ls[1]) })
		}, []string{"13: seq 2 again (first at AUDIT:2): a line copied"}},
		{"an unchained line added", func(t *testing.T, l *AuditLog) {
			editLines(t, l.Path, func(ls []string) []string {
				return append(ls[:5:5], append([]string{`{"time":"2026-11-29T09:00:04Z","event":"exec.started","id":"x","agent":"claude-code","cwd":"/work","command":"true"}`}, ls[5:]...)...)
			})
		}, []string{"6: not chained, so nothing vouches for it: inserted, or written by a shim that could not take the writers' lock"}},
		{"last line replaced", func(t *testing.T, l *AuditLog) {
			// Rewritten whole, with a hash of its own that fits its prev.
			editLines(t, l.Path, func(ls []string) []string {
				body, _, ok := strings.Cut(ls[11], `,"hash":`)
				require.True(t, ok)
				line, _ := chainLine([]byte(strings.Replace(body, `"echo 12"`, `"echo twelve"`, 1) + "}"))
				ls[11] = string(line)
				return ls
			})
		}, []string{"12: it is not the last line the head records (its hash differs): replaced"}},
		{"head removed", func(t *testing.T, l *AuditLog) {
			require.NoError(t, os.Remove(l.headPath()))
		}, []string{"AUDIT.head: the head file is missing: lines removed from the end of the log cannot be told"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := chainLog(t, 12)
			tt.edit(t, l)
			r := verify(t, l)
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.ReplaceAll(w, "AUDIT", l.Path)
			}
			assert.Equal(t, want, problems(l, r))
			assert.False(t, r.Intact())
		})
	}
}

// TestAuditChainRotation: rotation moves lines into older files and drops
// the oldest; the chain runs through every kept file, and the head says
// where the oldest kept one starts, so that a file removed by hand is
// still caught.
func TestAuditChainRotation(t *testing.T) {
	l := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl"), MaxBytes: 2000, Keep: 2}
	appendN(t, l, 0, 60)
	require.FileExists(t, l.rotated(2))
	r := verify(t, l)
	assert.True(t, r.Intact(), "%v", r.Problems)
	assert.Equal(t, 3, r.Files)
	assert.Greater(t, r.FirstSeq, int64(1), "the oldest lines were rotated away")
	assert.Equal(t, int64(60), r.LastSeq)
	assert.Equal(t, int(r.LastSeq-r.FirstSeq+1), r.Chained)

	oldFirst := r.FirstSeq
	first, ok := firstChained(l.rotated(1))
	require.True(t, ok)
	require.NoError(t, os.Remove(l.rotated(2)))
	r = verify(t, l)
	assert.Equal(t, []string{fmt.Sprintf("%s:1: %s before it (seq %s): removed from the start of the log",
		l.rotated(1), lineCount(first.Seq-oldFirst), seqRange(oldFirst, first.Seq-1))}, problems(l, r))
}

// TestAuditChainWriterDiedBeforeHead: a shim killed between writing its
// line and the head leaves the head one line behind; the next append goes
// on from that line, not from the head, and the chain stays whole.
func TestAuditChainWriterDiedBeforeHead(t *testing.T) {
	l := chainLog(t, 3)
	behind, err := os.ReadFile(l.headPath())
	require.NoError(t, err)
	appendN(t, l, 3, 1)
	require.NoError(t, os.WriteFile(l.headPath(), behind, 0o600))
	r := verify(t, l)
	assert.True(t, r.Intact(), "%v", r.Problems)
	require.Len(t, r.Notes, 1)
	assert.Contains(t, r.Notes[0].String(), ":4: written by a shim that stopped before recording it in the head")

	appendN(t, l, 4, 2)
	r = verify(t, l)
	assert.True(t, r.Intact(), "%v", r.Problems)
	assert.Empty(t, r.Notes)
	assert.Equal(t, int64(6), r.LastSeq)
}

// TestAuditChainHeadRebuilt: a head removed is rebuilt from the log by the
// next append, which goes on with the chain; --verify says the head was
// rebuilt, since lines removed from the end before then cannot be told.
func TestAuditChainHeadRebuilt(t *testing.T) {
	l := chainLog(t, 5)
	require.NoError(t, os.Remove(l.headPath()))
	editLines(t, l.Path, func(ls []string) []string { return ls[:4] })
	appendN(t, l, 5, 1)
	r := verify(t, l)
	assert.Equal(t, []string{l.headPath() + ": the head was rebuilt from the log at seq 4, having been missing or damaged: lines removed from the end before then cannot be told"},
		problems(l, r))
	assert.Equal(t, int64(5), r.LastSeq)
}

// TestAuditChainLockHeld: a writer that cannot take the lock (another
// holds it past chainLockWait) still writes its event, unchained, and
// --verify names it.
func TestAuditChainLockHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the lock's timeout")
	}
	l := chainLog(t, 2)
	f, err := os.OpenFile(l.headPath(), os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	start := time.Now()
	appendN(t, l, 2, 1)
	assert.Less(t, time.Since(start), chainLockWait+time.Second)
	f.Close()
	evs := readAll(t, l, time.Time{})
	require.Len(t, evs, 3)
	assert.Zero(t, evs[2].Seq)
	r := verify(t, l)
	require.Len(t, r.Problems, 1)
	assert.Contains(t, r.Problems[0].String(), ":3: not chained, so nothing vouches for it: it says its writer could not take the writers' lock")
	appendN(t, l, 3, 1)
	assert.Equal(t, int64(3), readAll(t, l, time.Time{})[3].Seq, "the chain goes on past it")
}

// TestAuditChainOlderLines: lines written before the log was chained are
// counted, not reported; the chain starts after them.
func TestAuditChainOlderLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"time":"2026-01-01T00:00:00Z","event":"exec.started","id":"a","agent":"","cwd":"","command":"true"}`+"\n"), 0o600))
	l := &AuditLog{Path: path}
	appendN(t, l, 0, 3)
	r := verify(t, l)
	assert.True(t, r.Intact(), "%v", r.Problems)
	assert.Equal(t, 1, r.Unchained)
	assert.Equal(t, 3, r.Chained)
}

// TestAuditChainConcurrentProcesses: shims are processes; many appending
// at once, across rotations, leave one whole chain with every event in it.
func TestAuditChainConcurrentProcesses(t *testing.T) {
	if os.Getenv("EXECGATE_TEST_CHAIN_WRITER") != "" {
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	const procs, each = 8, 40
	var cmds []*exec.Cmd
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAuditChainWriter$")
		cmd.Env = append(os.Environ(), "EXECGATE_TEST_CHAIN_WRITER="+path, "EXECGATE_TEST_CHAIN_FROM="+strconv.Itoa(i*each),
			"EXECGATE_TEST_CHAIN_N="+strconv.Itoa(each))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("writer %d: %s", i, out.String())
			}
		})
	}
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait())
	}
	l := chainWriterLog(path)
	r := verify(t, l)
	assert.True(t, r.Intact(), "%v", r.Problems)
	assert.Equal(t, procs*each, r.Chained, "every event kept and chained")
	assert.Equal(t, int64(1), r.FirstSeq)
	assert.Equal(t, int64(procs*each), r.LastSeq)
	assert.Greater(t, r.Files, 1, "the writers rotated the log")
}

func chainWriterLog(path string) *AuditLog {
	// Rotated every ≈ 16 lines; enough files kept to hold every line.
	return &AuditLog{Path: path, MaxBytes: 4000, Keep: 40}
}

// TestAuditChainWriter is TestAuditChainConcurrentProcesses's writer
// process.
func TestAuditChainWriter(t *testing.T) {
	path := os.Getenv("EXECGATE_TEST_CHAIN_WRITER")
	if path == "" {
		t.Skip("a helper process of TestAuditChainConcurrentProcesses")
	}
	from, _ := strconv.Atoi(os.Getenv("EXECGATE_TEST_CHAIN_FROM"))
	n, _ := strconv.Atoi(os.Getenv("EXECGATE_TEST_CHAIN_N"))
	appendN(t, chainWriterLog(path), from, n)
}

// FuzzAuditVerify: whatever the files hold, Verify answers without
// panicking, and a log it calls intact has every chained line's hash
// right.
func FuzzAuditVerify(f *testing.F) {
	dir := f.TempDir()
	l := &AuditLog{Path: filepath.Join(dir, "seed", "audit.jsonl")}
	appendN(f, l, 0, 3)
	raw, err := os.ReadFile(l.Path)
	require.NoError(f, err)
	head, err := os.ReadFile(l.headPath())
	require.NoError(f, err)
	f.Add(raw, head)
	f.Add(raw[:len(raw)/2], head)
	f.Add([]byte("{}\n\n{\"event\":\"x\",\"seq\":1}\n"), []byte("v1 1 x 1 y 0"))
	f.Fuzz(func(t *testing.T, log, head []byte) {
		l := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.jsonl")}
		require.NoError(t, os.WriteFile(l.Path, log, 0o600))
		require.NoError(t, os.WriteFile(l.headPath(), head, 0o600))
		r, err := l.Verify()
		require.NoError(t, err)
		if r.Intact() {
			for _, line := range bytes.Split(log, []byte("\n")) {
				if ev, ok := parseChained(line); ok {
					assert.True(t, checkHash(line, ev.Hash))
				}
			}
		}
		require.NoError(t, l.Append(Event{Event: EventStarted, ID: "after"}))
	})
}

// FuzzChainSuffix: the suffix an append reads without decoding the line
// says what decoding it says, whenever it reads one.
func FuzzChainSuffix(f *testing.F) {
	line, _ := chainLine([]byte(`{"time":"2026-11-29T09:00:00Z","event":"exec.started","id":"a","agent":"","cwd":"","command":"x","seq":7,"prev":"` + genesis + `"}`))
	f.Add(line)
	f.Add([]byte(`{"command":"\",\"seq\":9,\"prev\":\"` + genesis + `\"","hash":"` + genesis + `"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		seq, prev, hash, ok := chainSuffix(line)
		if !ok {
			return
		}
		if ev, chained := parseChained(line); chained {
			assert.Equal(t, ev.Seq, seq)
			assert.Equal(t, ev.Prev, prev)
			assert.Equal(t, ev.Hash, hash)
		}
	})
}
