package replay

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunInOrder: with several workers judging at once, the commands,
// problems and progress still come in the order they were read.
func TestRunInOrder(t *testing.T) {
	dir, home := materialize(t)
	judge := testJudge(t, "", home)
	one := replayPaths(t, judge, dir)
	for _, workers := range []int{1, 2, 7} {
		var got []string
		var progress []Progress
		r, err := Run(context.Background(), Options{Paths: []string{dir}, Judge: judge, Workers: workers, ProgressEvery: time.Nanosecond,
			Each:     func(c Command, v Verdict) error { got = append(got, c.Where()); return nil },
			Progress: func(p Progress) { progress = append(progress, p) }})
		require.NoError(t, err)
		var want []string
		for _, c := range one.commands {
			want = append(want, c.Where())
		}
		assert.Equal(t, want, got, "%d workers", workers)
		assert.Equal(t, one.report, r, "%d workers", workers)
		require.NotEmpty(t, progress)
		last := progress[len(progress)-1]
		assert.Equal(t, Progress{Files: r.Files, Commands: r.Commands, Asks: r.Outcomes.Ask, Done: true}, last)
	}
}

// TestRunStops: the error of Each, or the context's end, stops the
// replay and is returned.
func TestRunStops(t *testing.T) {
	dir, home := materialize(t)
	judge := testJudge(t, "", home)
	stop := errors.New("stop here")
	n := 0
	_, err := Run(context.Background(), Options{Paths: []string{dir}, Judge: judge,
		Each: func(Command, Verdict) error {
			n++
			if n == 3 {
				return stop
			}
			return nil
		}})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 3, n, "Each was called after its error")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, Options{Paths: []string{dir}, Judge: judge})
	assert.ErrorIs(t, err, context.Canceled)
}

// TestNeverWritesOrRuns: replaying a history leaves its files as they
// were, and runs none of its commands — here a history whose commands
// would create files in a directory that exists.
func TestNeverWritesOrRuns(t *testing.T) {
	home := testHome(t)
	work := filepath.Join(home, "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	canary := filepath.Join(work, "CANARY")
	transcript := filepath.Join(t.TempDir(), "s.jsonl")
	line := `{"type":"assistant","cwd":"` + work + `","sessionId":"s","message":{"content":[` +
		`{"type":"tool_use","id":"a","name":"Bash","input":{"command":"touch ` + canary + `"}},` +
		`{"type":"tool_use","id":"b","name":"Bash","input":{"command":"echo x > ` + canary + `2"}}]}}` + "\n"
	require.NoError(t, os.WriteFile(transcript, []byte(line), 0o444))
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	require.NoError(t, os.Chtimes(transcript, old, old))

	f := replayPaths(t, testJudge(t, "", home), transcript)
	assert.Equal(t, []string{"touch " + canary, "echo x > " + canary + "2"}, f.texts())
	assert.NoFileExists(t, canary)
	assert.NoFileExists(t, canary+"2")
	raw, err := os.ReadFile(transcript)
	require.NoError(t, err)
	assert.Equal(t, line, string(raw))
	st, err := os.Stat(transcript)
	require.NoError(t, err)
	assert.True(t, st.ModTime().Equal(old), "the transcript was modified")
	entries, err := os.ReadDir(work)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
