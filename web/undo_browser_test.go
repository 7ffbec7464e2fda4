package web

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/checkpoint"
)

// TestBrowserUndo: the undo view lists the checkpoints, shows what undoing
// one would change and changes nothing until "Undo it"; then it undoes it
// as execgate undo does, in the same words, and a refused undo is shown as
// the refusal, with nothing to confirm.
func TestBrowserUndo(t *testing.T) {
	ctx := context.Background()
	state, work := t.TempDir(), t.TempDir()
	write := func(name, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(work, name), []byte(data), 0o644))
	}
	write("a", "a0\n")
	write("b", "b0\n")
	st, err := checkpoint.Open(state, work, checkpoint.Limits{})
	require.NoError(t, err)
	_, err = st.Take(ctx, "edit a <b>", "")
	require.NoError(t, err)
	write("a", "a1\n")
	_, err = st.Take(ctx, "rm b; edit a", "")
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(work, "b")))
	write("a", "a2\n") // a changed again: undoing "edit a" alone is refused

	e := startEnv(t, func(o *Options) {
		o.Checkpoints = func(context.Context) ([]Checkpoint, error) {
			infos, err := checkpoint.Recent(state, 50)
			var out []Checkpoint
			for _, i := range infos {
				out = append(out, Checkpoint{Root: i.Root, Seq: i.Seq, Time: i.Time, Command: i.Command, Changes: i.Changes})
			}
			return out, err
		}
		o.Undo = func(ctx context.Context, root string, seq uint64, preview bool) ([]string, error) {
			rep, err := checkpoint.UndoIn(ctx, state, root, seq, preview)
			if err != nil {
				return nil, err
			}
			return append(rep.Paths(20), rep.Summary()), nil
		}
	})
	tab := e.newTab(t, browser(t))
	row := func(seq string) string { return `#checkpoints tr[data-key$="-` + seq + `"]` }
	run(t, tab, chromedp.Click(css(`.tab[data-view="undo"]`)), chromedp.WaitVisible(css(row("2"))))
	require.Contains(t, text(t, tab, row("1")), "edit a <b>")
	require.Zero(t, value(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('#checkpoints td b').length`)), "command text never becomes HTML")

	run(t, tab, chromedp.Click(css(row("1")+" button.undo")))
	waitFor(t, tab, `document.querySelector("#undo-error").textContent.includes("refused to undo checkpoint 1: later changes touch the same paths (a)")`)
	require.False(t, value(t, tab, chromedp.Evaluate[bool](`!document.querySelector("#undo-confirm").hidden`)), "nothing to confirm")

	run(t, tab, chromedp.Click(css(row("2")+" button.undo")), chromedp.WaitVisible(css("#undo-confirm")))
	require.Equal(t, "restored a\nrecreated b\nundo checkpoint 2 would restore 1, recreate 1 and remove 0 paths", text(t, tab, "#undo-preview"))
	run(t, tab, chromedp.Click(css("#undo-cancel")), chromedp.WaitNotVisible(css("#undo-confirm")))
	require.NoFileExists(t, filepath.Join(work, "b"), "a preview and a cancel change nothing")

	run(t, tab, chromedp.Click(css(row("2")+" button.undo")), chromedp.WaitVisible(css("#undo-confirm")),
		chromedp.Click(css("#undo-go")), chromedp.WaitVisible(css("#undo-result")))
	require.Equal(t, "restored a\nrecreated b\nundid checkpoint 2: 1 restored, 1 recreated, 0 removed (execgate undo 3 takes this back)", text(t, tab, "#undo-result"))
	data, err := os.ReadFile(filepath.Join(work, "b"))
	require.NoError(t, err)
	require.Equal(t, "b0\n", string(data))

	data, err = os.ReadFile(filepath.Join(work, "a"))
	require.NoError(t, err)
	require.Equal(t, "a1\n", string(data))
	run(t, tab, chromedp.WaitVisible(css(row("3"))))
}

// TestUndoUnknownKey: the page can only name a checkpoint the server
// lists; any other key undoes nothing.
func TestUndoUnknownKey(t *testing.T) {
	called := false
	s := &Server{o: Options{
		Checkpoints: func(context.Context) ([]Checkpoint, error) { return []Checkpoint{{Root: "/w", Seq: 1}}, nil },
		Undo: func(context.Context, string, uint64, bool) ([]string, error) {
			called = true
			return nil, nil
		},
	}}
	for _, key := range []string{"", checkpointKey("/w", 2), checkpointKey("/other", 1), "../../etc"} {
		_, err := s.undo(context.Background(), key, false)
		require.Error(t, err, key)
	}
	require.False(t, called)
	_, err := s.undo(context.Background(), checkpointKey("/w", 1), true)
	require.NoError(t, err)
	require.True(t, called)
}
