package replay

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/policy"
)

// fixtureHome is the home directory the kept transcripts name in place of
// the e2e world's (see e2e/transcripts_test.go and
// testdata/replay/README.md).
const fixtureHome = "/tmp/execgate-replay-fixture"

// fixtures is testdata/replay.
func fixtures(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "replay"))
	require.NoError(t, err)
	return dir
}

// materialize copies testdata/replay into a temporary directory with
// fixtureHome replaced by a real home in it, which has the workspace the
// transcripts ran in (work, work/sub, work/src): the commands' recorded
// directories exist. It returns the copy and the home.
func materialize(t testing.TB) (dir, home string) {
	t.Helper()
	home = testHome(t)
	dir = filepath.Join(t.TempDir(), "transcripts")
	for _, d := range []string{"work/sub", "work/src"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	src := fixtures(t)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		raw = bytes.ReplaceAll(raw, []byte(fixtureHome), []byte(home))
		out := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, raw, 0o644)
	})
	require.NoError(t, err)
	return dir, home
}

// testHome makes a home directory beside this package, not in /tmp:
// execgate judges deletions under a temporary directory more leniently
// than under a home.
func testHome(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	home, err := os.MkdirTemp(wd, ".home-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	return home
}

// testJudge judges under the configuration cfg (JSON; "" for none) for a
// user whose home is home, with an empty environment.
func testJudge(t testing.TB, cfg, home string) *Judge {
	t.Helper()
	path := filepath.Join(t.TempDir(), "exec-approvals.json")
	if cfg != "" {
		require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	}
	c, _, _, err := config.Load(path)
	require.NoError(t, err)
	engine, err := policy.NewEngine()
	require.NoError(t, err)
	getenv := func(name string) string {
		if name == "HOME" {
			return home
		}
		return ""
	}
	return &Judge{
		Engine: engine,
		Trust:  policy.NewTrust(c, home, getenv),
		Agent: func(a string) string {
			if a == "" {
				return config.DefaultAgent
			}
			return a
		},
		Request: func(agent string) policy.Request {
			req := policy.NewRequest(c, agent, "", home, policy.OwnFiles(path))
			req.Getenv = getenv
			return req
		},
	}
}

// found is what a replay found.
type found struct {
	commands []Command
	verdicts []Verdict
	problems []Problem
	report   Report
}

// replayPaths replays paths under judge.
func replayPaths(t testing.TB, judge *Judge, paths ...string) found {
	t.Helper()
	var f found
	report, err := Run(context.Background(), Options{Paths: paths, Judge: judge,
		Problem: func(p Problem) { f.problems = append(f.problems, p) },
		Each: func(c Command, v Verdict) error {
			f.commands = append(f.commands, c)
			f.verdicts = append(f.verdicts, v)
			return nil
		}})
	require.NoError(t, err)
	f.report = report
	return f
}

func (f found) texts() []string {
	out := make([]string, len(f.commands))
	for i, c := range f.commands {
		out[i] = c.Text
	}
	return out
}

// collect is a Sink that keeps everything.
type collect struct {
	commands []Command
	problems []Problem
	skipped  []string
}

func (c *collect) Command(cmd Command) error     { c.commands = append(c.commands, cmd); return nil }
func (c *collect) Problem(p Problem)             { c.problems = append(c.problems, p) }
func (c *collect) Skipped(cmd Command, w string) { c.skipped = append(c.skipped, cmd.Text) }

func mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

func removeFile(name string) error { return os.Remove(name) }
