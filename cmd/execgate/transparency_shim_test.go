package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/policy"
)

// TestShimTransparency is the differential test of issue 22 item 1: a
// command the shim lets through behaves byte for byte as under bash. Every
// command of the classification corpora (testdata/corpus/*.tsv) that the
// default policy allows, and the generated programs of
// testdata/shim/transparency.txt (globs, tildes, braces, quotes,
// parameters, escapes, names with spaces and unicode), run as `bash -c
// PROGRAM` under the real bash and under the built shim, the way an agent
// calls it, in a fixture tree with a fixture HOME, rebuilt whenever a run
// changed it: stdout, stderr and exit status must be identical.
//
// Rules, never a list of entries, leave a command out, counted and logged:
//   - its outcome depends on when or in which process it runs (time, pids,
//     inode numbers, random names): when the shim's outcome differs, bash
//     runs again, and if bash does not repeat its own outcome the
//     difference says nothing about the shim. A difference must also hold
//     over transparencyRetries more runs of both (`time ls`).
//   - bash does not finish it within transparencyTimeout, prints more than
//     transparencyMaxOutput, or uses more than transparencyMaxCPU of
//     processor time: it would measure the limits, or the program. The
//     other commands of a program (the first word) found that slow are left
//     out without running.
//
// Fewer than four fifths compared fails the test, so that it cannot quietly
// become empty. The fixture world has no network: every proxy variable
// names a closed port, so that clients fail at once rather than reach out.
func TestShimTransparency(t *testing.T) {
	bash := realBash(t)
	if testing.Short() {
		t.Skip("runs some 1,300 programs under bash and the shim; skipped with -short")
	}
	fx := newTransparencyFixture(t)
	envs := map[string]*shimEnv{
		"default":          newShimEnv(t, ""),
		"default-uncapped": newShimEnv(t, `{"version": 1, "output": {"maxBytes": 0}}`),
		"full":             newShimEnv(t, fullConfig),
		"full-uncapped":    newShimEnv(t, `{"version": 1, "defaults": {"security": "full", "ask": "off"}, "output": {"maxBytes": 0}}`),
	}
	allowed := defaultAllows(t, fx)
	var cases []transparencyCase
	corpus := readTransparencyCorpus(t)
	for _, c := range corpus {
		if allowed(c.src) {
			c.env = "default"
			cases = append(cases, c)
		}
	}
	corpusCases := len(cases)
	// Generated programs run with and without capped output (a child of
	// the shim, or the shim exec'ing it); under security=full when the
	// default policy would ask about them (a later rule may), since they
	// are written to be harmless in the fixture.
	for _, c := range readTransparencyGenerated(t) {
		level := "default"
		if !allowed(c.src) {
			level = "full"
		}
		for _, mode := range []string{"", "-uncapped"} {
			c.env = level + mode
			cases = append(cases, c)
		}
	}
	t.Logf("%d corpus commands, %d allowed by the default policy; %d runs in all", len(corpus), corpusCases, len(cases))
	require.Greater(t, corpusCases, 300, "the corpora's allowed commands are the point of this test")

	slots := newFixtureSlots(t)
	var compared, unstable, outOfBounds atomic.Int64
	// The first words of commands that took bash more than
	// transparencyMaxCPU: that program's other commands are not run.
	var slowPrograms sync.Map
	t.Run("run", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name+"/"+c.env, func(t *testing.T) {
				t.Parallel()
				e := envs[c.env]
				slot := <-slots
				defer func() { slots <- slot }()
				run := fx.runner(t, e, slot)
				program := strings.Fields(c.src + " ?")[0]
				if _, slow := slowPrograms.Load(program); slow {
					outOfBounds.Add(1)
					t.Logf("left out: %s took bash more than %v of processor time before: %q", program, transparencyMaxCPU, c.src)
					return
				}
				if readsClock(c.src) {
					unstable.Add(1)
					t.Logf("left out: `time` and `times` print how long things took, which no two runs share: %q", c.src)
					return
				}
				want := run(bash, c.src, transparencyTimeout)
				if want.cpu > transparencyMaxCPU {
					slowPrograms.Store(program, true)
				}
				if want.timedOut || want.overflow || want.cpu > transparencyMaxCPU {
					outOfBounds.Add(1)
					t.Logf("left out: bash took more than %v (%v of processor time) or printed more than %d bytes: %q",
						transparencyTimeout, transparencyMaxCPU, transparencyMaxOutput, c.src)
					return
				}
				shim := func() outcome {
					got := run(e.shim("bash"), c.src, 4*transparencyTimeout)
					if !strings.HasSuffix(c.env, "-uncapped") {
						// A capped command is told so, so that a shim inside
						// it does not cap again: the one variable the shim
						// adds.
						got.stdout = strings.ReplaceAll(got.stdout, "EXECGATE_CAPPED=1\n", "")
					}
					return got.outcome
				}
				got := shim()
				// A difference counts when it holds: bash and the shim again,
				// a few times. If bash does not repeat its own outcome, the
				// difference says nothing about the shim (time, pids); if
				// the shim meets bash once, it was the clock (`time ls`).
				for try := 0; got != want.outcome && try < transparencyRetries; try++ {
					if again := run(bash, c.src, 4*transparencyTimeout); again.outcome != want.outcome {
						unstable.Add(1)
						t.Logf("left out: bash's output differs from one run to the next: %q", c.src)
						return
					}
					if again := shim(); again == want.outcome {
						got = again
					}
				}
				compared.Add(1)
				assert.Equal(t, want.outcome, got, "%s: %q", c.where, c.src)
			})
		}
	})
	n, left := compared.Load(), unstable.Load()+outOfBounds.Load()
	t.Logf("compared %d, left out %d (unstable %d, out of bounds %d)", n, left, unstable.Load(), outOfBounds.Load())
	assert.GreaterOrEqual(t, n*10, int64(len(cases))*8, "fewer than four fifths of the programs were compared")
}

// readsClock reports whether a program reports its own timing — the time
// keyword or the times builtin — whose millisecond figures a loaded machine
// changes between any two runs, bash's or the shim's.
func readsClock(src string) bool {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return false
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.TimeClause:
			found = true
		case *syntax.CallExpr:
			found = found || len(n.Args) > 0 && n.Args[0].Lit() == "times"
		}
		return !found
	})
	return found
}

// transparencyTimeout bounds each run; transparencyMaxOutput each stream;
// transparencyMaxCPU the processor time of bash's run of a command that is
// compared: a program that takes more (a cloud CLI written in Python,
// npm, pip) is left out, as its run measures the program, not the shim,
// whose part of it is what it is for any other program.
const (
	transparencyTimeout   = 3 * time.Second
	transparencyMaxOutput = 256 << 10
	transparencyMaxCPU    = 200 * time.Millisecond
	transparencyRetries   = 3
)

// transparencyCase is one program to run under bash and the shim.
type transparencyCase struct {
	name  string // the subtest's name
	where string // where it comes from, for the failure message
	src   string
	env   string // which shimEnv runs it
}

// readTransparencyCorpus returns every command of testdata/corpus/*.tsv
// (column 2, a JSON string), once each, in file order.
func readTransparencyCorpus(t *testing.T) []transparencyCase {
	t.Helper()
	files, err := filepath.Glob("../../testdata/corpus/*.tsv")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	seen := map[string]bool{}
	var out []transparencyCase
	for _, path := range files {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		base := strings.TrimSuffix(filepath.Base(path), ".tsv")
		for n, line := range strings.Split(string(data), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			cols := strings.Split(line, "\t")
			require.GreaterOrEqual(t, len(cols), 2, "%s:%d", path, n+1)
			var src string
			require.NoError(t, json.Unmarshal([]byte(cols[1]), &src), "%s:%d", path, n+1)
			// A NUL cannot be passed in an argument at all.
			if seen[src] || strings.ContainsRune(src, 0) {
				continue
			}
			seen[src] = true
			where := base + ":" + strconv.Itoa(n+1)
			out = append(out, transparencyCase{name: where, where: where, src: src})
		}
	}
	return out
}

// readTransparencyGenerated expands testdata/shim/transparency.txt into
// its programs: every "word" after every "each" program, and every "cmd".
func readTransparencyGenerated(t *testing.T) []transparencyCase {
	t.Helper()
	f, err := os.Open("../../testdata/shim/transparency.txt")
	require.NoError(t, err)
	defer f.Close()
	var each, words, cmds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, text, ok := strings.Cut(line, " ")
		require.True(t, ok && text != "", "line %q", line)
		switch kind {
		case "each":
			each = append(each, text)
		case "word":
			words = append(words, text)
		case "cmd":
			cmds = append(cmds, text)
		default:
			t.Fatalf("line %q: want each, word or cmd", line)
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, each)
	var out []transparencyCase
	for _, p := range each {
		for _, w := range words {
			src := p + " " + w
			out = append(out, transparencyCase{name: src, where: "transparency.txt", src: src})
		}
	}
	for _, src := range cmds {
		out = append(out, transparencyCase{name: src, where: "transparency.txt", src: src})
	}
	return out
}

// defaultAllows returns whether the built-in default policy allows a
// program run for agent test-agent in a fixture world: the corpora's
// commands it does not allow are not run at all (they were not written to
// be harmless).
func defaultAllows(t *testing.T, fx *transparencyFixture) func(string) bool {
	t.Helper()
	engine, err := policy.NewEngine()
	require.NoError(t, err)
	root := t.TempDir()
	require.NoError(t, fx.build(root))
	env := fx.environ(root, "", "")
	getenv := func(name string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v
			}
		}
		return ""
	}
	return func(src string) (ok bool) {
		defer func() {
			if r := recover(); r != nil {
				// The shim would crash on it too: run it, and see.
				t.Logf("the policy panics on %q: %v", src, r)
				ok = false
			}
		}()
		req := policy.NewRequest(&config.Config{Version: 1}, "test-agent", filepath.Join(root, "w"), getenv("HOME"), nil)
		req.Dialect, req.Getenv, req.Command = policy.DialectBash, getenv, src
		return engine.Evaluate(req).Decision == policy.Allow
	}
}

// transparencyFixture is the world every program runs in: a template tree
// copied afresh before each run, so that what one run changes is not seen
// by the next, and every time stamp set to one instant, so that long
// listings do not differ by when the copy was made.
type transparencyFixture struct {
	template string
	stamp    time.Time
}

// The fixture's files: w/ is the workspace, h/ the home directory.
var transparencyFiles = []struct{ path, content string }{
	{"w/README.md", "# fixture\nA project for the transparency test.\n"},
	{"w/notes.md", "notes\nfixture notes, second line\n"},
	{"w/CHANGELOG.md", "## 1.0\n"},
	{"w/.hidden.md", "hidden\n"},
	{"w/a b.md", "a name with a space\n"},
	{"w/ünïcode.md", "ünïcode\n"},
	{"w/x", "x\n"},
	{"w/b", "b\n"},
	{"w/c", ""},
	{"w/main.go", "package main\n\nfunc main() {}\n"},
	{"w/policy/doc.go", "// Package policy is a fixture.\npackage policy\n"},
	{"w/policy/rules.go", "package policy\n\nconst rules = 1\n"},
	{"w/shim/doc.go", "// Package shim is a fixture.\npackage shim\n"},
	{"w/abc/.keep", ""},
	{"h/.bashrc", "# fixture bashrc\nexport FIXTURE=1\n"},
	{"h/.profile", "# fixture profile\n"},
	{"h/notes.txt", "home notes\nline two\n"},
	{"h/.config/app/settings.json", "{}\n"},
	{"h/old/.keep", ""},
}

// newTransparencyFixture writes the template once; the workspace is a git
// repository with two commits made at fixed dates, so that its hashes are
// the same for every run (skipped without git: git's commands then fail
// the same way under bash and the shim).
func newTransparencyFixture(t *testing.T) *transparencyFixture {
	t.Helper()
	fx := &transparencyFixture{template: t.TempDir(), stamp: time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC)}
	for _, f := range transparencyFiles {
		p := filepath.Join(fx.template, f.path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(f.content), 0o644))
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return fx
	}
	work := filepath.Join(fx.template, "w")
	gitEnv := []string{"HOME=" + fx.template, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Fixture", "GIT_AUTHOR_EMAIL=fixture@example.com", "GIT_COMMITTER_NAME=Fixture",
		"GIT_COMMITTER_EMAIL=fixture@example.com", "GIT_AUTHOR_DATE=2024-03-04T05:06:07Z", "GIT_COMMITTER_DATE=2024-03-04T05:06:07Z"}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", "--template="},
		{"add", "README.md", "notes.md", "main.go", "policy"},
		{"commit", "-q", "-m", "first"},
		{"add", "-A"},
		{"commit", "-q", "-m", "second"},
		{"gc", "-q"}, // a few packed files to copy rather than loose objects
	} {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = work, gitEnv
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	// One change not committed, for status and diff to show.
	require.NoError(t, os.WriteFile(filepath.Join(work, "notes.md"), []byte("notes\nchanged\n"), 0o644))
	return fx
}

// build copies the template to root and sets every time stamp.
func (fx *transparencyFixture) build(root string) error {
	for _, d := range []string{"w", "h", "tmp"} {
		if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o755); err != nil {
		return err
	}
	var dirs []string
	err := filepath.WalkDir(fx.template, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(fx.template, path)
		if err != nil || rel == "." {
			return err
		}
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			dirs = append(dirs, dst)
			return os.Mkdir(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
			return err
		}
		return os.Chtimes(dst, fx.stamp, fx.stamp)
	})
	if err != nil {
		return err
	}
	// Directories last, deepest first: writing into one changes its time;
	// root too, which `ls -la` shows as "..".
	dirs = append([]string{root}, dirs...)
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chtimes(dirs[i], fx.stamp, fx.stamp); err != nil {
			return err
		}
	}
	return nil
}

// environ is the whole environment of a run in root: nothing of the test
// process's own, so that the outcome depends only on the fixture.
func (fx *transparencyFixture) environ(root, config, state string) []string {
	return []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + filepath.Join(root, "h"),
		"PWD=" + filepath.Join(root, "w"),
		"OLDPWD=" + filepath.Join(root, "h", "old"),
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"LC_ALL=C.UTF-8", "TZ=UTC",
		// Port 9 (discard) on the loopback: nothing listens, so a client
		// that honours the variables fails at once.
		"http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "all_proxy=http://127.0.0.1:9",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9",
		"EXECGATE_CONFIG=" + config, "XDG_STATE_HOME=" + state, "EXECGATE_AGENT=test-agent",
	}
}

// transparencyRun is one run's outcome and whether a bound cut it short.
type transparencyRun struct {
	outcome
	timedOut, overflow bool
	// cpu is the processor time of the shell and the children it waited
	// for (wait4's accounting), which load changes far less than the time
	// on the clock.
	cpu time.Duration
}

// fixtureSlot is a fixture tree one subtest at a time uses, and the state
// directory of the shims run in it.
type fixtureSlot struct {
	root, state string
	built       map[string]string // its snapshot when last built
}

// newFixtureSlots makes as many slots as subtests run at once; a subtest
// takes one from the channel and puts it back.
func newFixtureSlots(t *testing.T) chan *fixtureSlot {
	n := runtime.GOMAXPROCS(0)
	if f := flag.Lookup("test.parallel"); f != nil {
		if p, err := strconv.Atoi(f.Value.String()); err == nil && p > 0 {
			n = p
		}
	}
	slots := make(chan *fixtureSlot, n)
	for range n {
		slots <- &fixtureSlot{root: t.TempDir(), state: t.TempDir()}
	}
	return slots
}

// runner returns a function that runs one program as `bash -c PROGRAM`
// with the shell at path, in e's configuration, in slot's fixture, rebuilt
// first when a run before changed it (rebuilding every time costs more
// than the programs: deleting files is slow on some disks). Both runs of a
// comparison use one slot, so that paths in the output agree.
func (fx *transparencyFixture) runner(t *testing.T, e *shimEnv, slot *fixtureSlot) func(path, src string, limit time.Duration) transparencyRun {
	root := slot.root
	env := fx.environ(root, e.config, slot.state)
	return func(path, src string, limit time.Duration) transparencyRun {
		t.Helper()
		if slot.built == nil || !maps.Equal(slot.built, snapshot(root)) {
			require.NoError(t, fx.build(root))
			slot.built = snapshot(root)
		}
		ctx, cancel := context.WithTimeout(t.Context(), limit)
		defer cancel()
		cmd := exec.CommandContext(ctx, path, "-c", src)
		cmd.Args[0] = "bash"
		cmd.Dir, cmd.Env = filepath.Join(root, "w"), env
		// Its own session, no terminal: nobody to prompt; the whole group
		// is killed at the time limit.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		// Pipes of its own, so that Wait returns when the shell ends even
		// if something it started in the background still holds them.
		var out, errb boundedBuffer
		wait, err := out.attach(&cmd.Stdout)
		require.NoError(t, err)
		waitErr, err := errb.attach(&cmd.Stderr)
		require.NoError(t, err)
		err = cmd.Start()
		closeWriters(cmd)
		require.NoError(t, err)
		err = cmd.Wait()
		// A caller reads to the end of the output, which comes after the
		// shell's exit when a job it left in the background writes it
		// (`git status &`); within the time limit, then the whole session
		// is killed (`sleep 100 & disown`).
		eof := make(chan struct{})
		go func() {
			wait()
			waitErr()
			close(eof)
		}()
		select {
		case <-eof:
		case <-ctx.Done():
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-eof
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) && ctx.Err() == nil {
			require.NoError(t, err)
		}
		r := transparencyRun{timedOut: ctx.Err() != nil, overflow: out.full || errb.full,
			cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
		r.stdout, r.stderr = out.String(), errb.String()
		if cmd.ProcessState != nil {
			r.status = cmd.ProcessState.ExitCode()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				r.signal = ws.Signal().String()
			}
		}
		return r
	}
}

// snapshot lists what a run could change under root and a later one could
// see: every name, with its mode, size and modification time.
// A tree it cannot walk has no snapshot: the fixture is rebuilt.
func snapshot(root string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fmt.Sprint(info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return nil
	}
	return out
}

// boundedBuffer keeps up to transparencyMaxOutput bytes of one stream and
// closes the pipe past that, so that an endless writer ends on EPIPE.
type boundedBuffer struct {
	bytes.Buffer
	full bool
}

// attach makes a pipe, sets *w to its write end and reads the other end
// into b until EOF or the limit; the returned function waits for that.
func (b *boundedBuffer) attach(w *io.Writer) (func(), error) {
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	*w = pw
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer r.Close()
		_, err := io.Copy(b, io.LimitReader(r, transparencyMaxOutput+1))
		b.full = err == nil && b.Len() > transparencyMaxOutput
	}()
	return func() { <-done }, nil
}

// closeWriters closes this process's copies of the pipes' write ends once
// the child has its own.
func closeWriters(cmd *exec.Cmd) {
	for _, w := range []io.Writer{cmd.Stdout, cmd.Stderr} {
		if f, ok := w.(*os.File); ok {
			f.Close()
		}
	}
}
