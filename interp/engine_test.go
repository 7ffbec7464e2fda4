package interp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// engineHelperEnv makes the test binary run one program under RunEngine
// with ForwardSignals, as the shim would, and exit with its status: the
// signal test needs a separate process to signal. TestMain belongs to
// helper_test.go, so this hooks in through init, which runs before it.
const engineHelperEnv = "EXECGATE_ENGINE_HELPER"

func init() {
	if prog := os.Getenv(engineHelperEnv); prog != "" {
		res, err := RunEngine(context.Background(), EngineOptions{
			Program: prog, Stdout: os.Stdout, Stderr: os.Stderr,
			MaxBytes: DefaultMaxBytes, TailBytes: DefaultTailBytes, ForwardSignals: true,
			Check: allowAll,
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(250)
		}
		os.Exit(res.ExitStatus)
	}
}

func allowAll(context.Context, Command) error { return nil }

// engineProgram is one program of testdata/engine.
type engineProgram struct{ name, src string }

func readEnginePrograms(t *testing.T) []engineProgram {
	t.Helper()
	paths, err := filepath.Glob("testdata/engine/*.sh")
	require.NoError(t, err)
	var progs []engineProgram
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		progs = append(progs, engineProgram{strings.TrimSuffix(filepath.Base(p), ".sh"), string(b)})
	}
	return progs
}

// readDifferences reads testdata/engine/differences.txt: "name: reason"
// lines, where a reason starting with "refused:" says RunEngine must refuse
// the program.
func readDifferences(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("testdata/engine/differences.txt")
	require.NoError(t, err)
	defer f.Close()
	diffs := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, ok := strings.Cut(line, ":")
		require.True(t, ok, "differences.txt: %q has no reason", line)
		require.NotContains(t, diffs, name, "differences.txt lists %s twice", name)
		diffs[name] = strings.TrimSpace(reason)
	}
	require.NoError(t, sc.Err())
	return diffs
}

// engineOutcome is what a program did: its output with the directory it ran
// in replaced by DIR, and its status.
type engineOutcome struct {
	Stdout, Stderr string
	Status         int
}

// TestEngineMatchesBash runs every program of testdata/engine under bash
// (bash -c PROGRAM prog 'a b' c) and under RunEngine with a Checker that
// allows everything. Outcomes must be identical, except for the programs in
// differences.txt: those must differ (so the list cannot go stale), and
// those it says are refused must be refused with an *UnsupportedError.
func TestEngineMatchesBash(t *testing.T) {
	sh := bash(t)
	progs := readEnginePrograms(t)
	require.GreaterOrEqual(t, len(progs), 60)
	diffs := readDifferences(t)
	names := map[string]bool{}
	for _, p := range progs {
		names[p.name] = true
	}
	for name := range diffs {
		assert.True(t, names[name], "differences.txt lists %s, which is not a program", name)
	}
	args := []string{"a b", "c"}
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()

			dir := t.TempDir()
			var out, errb bytes.Buffer
			cmd := exec.CommandContext(ctx, sh, append([]string{"-c", p.src, "prog"}, args...)...)
			cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &errb
			err := cmd.Run()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				require.NoError(t, err)
			}
			want := engineOutcome{strings.ReplaceAll(out.String(), dir, "DIR"), strings.ReplaceAll(errb.String(), dir, "DIR"), status(cmd.ProcessState)}

			dir = t.TempDir()
			out.Reset()
			errb.Reset()
			res, err := RunEngine(ctx, EngineOptions{
				Program: p.src, Name: "prog", Args: args, Dir: dir, Env: os.Environ(),
				Stdout: &out, Stderr: &errb, MaxBytes: 1 << 20, TailBytes: DefaultTailBytes, Check: allowAll,
			})
			reason, listed := diffs[p.name]
			var ue *UnsupportedError
			if errors.As(err, &ue) {
				assert.True(t, strings.HasPrefix(reason, "refused:"), "refused but not listed as refused in differences.txt: %v", err)
				assert.Empty(t, out.String()+errb.String(), "a refused program must not run")
				return
			}
			require.NoError(t, err)
			assert.False(t, strings.HasPrefix(reason, "refused:"), "listed as refused but ran")
			got := engineOutcome{strings.ReplaceAll(out.String(), dir, "DIR"), strings.ReplaceAll(errb.String(), dir, "DIR"), res.ExitStatus}
			if listed {
				assert.NotEqual(t, want, got, "listed in differences.txt (%s) but the outcomes match", reason)
				return
			}
			assert.Equal(t, want, got)
		})
	}
}

// checkLog is a Checker that records every command and refuses those whose
// argv[0] base name is in deny.
type checkLog struct {
	mu   sync.Mutex
	cmds []Command
	deny map[string]bool
}

func (r *checkLog) check(_ context.Context, c Command) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = append(r.cmds, c)
	if r.deny[filepath.Base(c.Argv[0])] {
		return fmt.Errorf("execgate: denied: %s\nsecond line", strings.Join(c.Argv, " "))
	}
	return nil
}

func (r *checkLog) argvs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.cmds {
		out = append(out, strings.Join(c.Argv, " "))
	}
	return out
}

// runProgram runs a program in dir with the given checker and returns its
// outcome.
func runProgram(t *testing.T, dir, prog string, check Checker, mod ...func(*EngineOptions)) (engineOutcome, Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	o := EngineOptions{Program: prog, Name: "bash", Dir: dir, Stdout: &out, Stderr: &errb, Check: check}
	for _, m := range mod {
		m(&o)
	}
	res, err := RunEngine(ctx, o)
	require.NoError(t, err)
	return engineOutcome{out.String(), errb.String(), res.ExitStatus}, res
}

// tagDir returns a directory holding an executable `tag`, which does
// nothing, for programs to run as a marker of where they are.
func tagDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tag"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	return dir
}

func withPath(dir string) func(*EngineOptions) {
	return func(o *EngineOptions) {
		o.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	}
}

// TestEngineRefusedCommand: a refused command gets 126 and the reason on
// one line of stderr; the program goes on, except under set -e.
func TestEngineRefusedCommand(t *testing.T) {
	tags := tagDir(t)
	r := &checkLog{deny: map[string]bool{"tag": true}}
	got, _ := runProgram(t, t.TempDir(), `echo before; tag rm -rf /; echo "after $?"; tag x 2>/dev/null || echo "quiet $?"`, r.check, withPath(tags))
	assert.Equal(t, "before\nafter 126\nquiet 126\n", got.Stdout)
	assert.Equal(t, "execgate: denied: tag rm -rf / second line\n", got.Stderr)
	assert.Equal(t, 0, got.Status)

	got, _ = runProgram(t, t.TempDir(), "set -e; echo before; tag x; echo never", r.check, withPath(tags))
	assert.Equal(t, "before\n", got.Stdout)
	assert.Equal(t, 126, got.Status)

	got, _ = runProgram(t, t.TempDir(), "tag x", r.check, withPath(tags), func(o *EngineOptions) { o.Set = []string{"-errexit"} })
	assert.Equal(t, 126, got.Status)
}

// TestEngineChecksEveryContext checks that commands reach the Checker from
// everywhere the interpreter runs them, with their expanded argv.
func TestEngineChecksEveryContext(t *testing.T) {
	tags := tagDir(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lib.sh"), []byte("tag sourced\n"), 0o644))
	for _, f := range []string{"one.txt", "two words.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644))
	}
	prog := `
f() { tag function "$@"; }
f arg
(tag subshell)
echo | tag pipeline | cat
x=$(tag substitution)
while read -r l; do :; done < <(tag procsubst)
tag background & wait
eval 'tag eval'
. ./lib.sh
command tag command
trap 'tag trap' EXIT
for f in *.txt; do tag loop "$f"; done
cmd=$(type -P tag); "$cmd" dynamic
name=tag; $name variable
if tag condition; then tag then; fi
exec tag exec
tag never
`
	r := &checkLog{}
	got, _ := runProgram(t, dir, prog, r.check, withPath(tags))
	assert.Equal(t, engineOutcome{}, got)
	tagPath := filepath.Join(tags, "tag")
	want := []string{
		"tag function arg", "tag subshell", "tag pipeline", "cat", "tag substitution", "tag procsubst",
		"tag background", "tag eval", "tag sourced", "tag command", "tag loop one.txt", "tag loop two words.txt",
		tagPath + " dynamic", "tag variable", "tag condition", "tag then", "tag exec", "tag trap",
	}
	assert.ElementsMatch(t, want, r.argvs())
	for _, c := range r.cmds {
		if c.Argv[0] == "tag" {
			assert.Equal(t, tagPath, c.Path)
		}
		assert.Equal(t, dir, c.Dir)
	}
}

// TestEngineCommandFields checks Dir, Env and Path as the Checker sees them.
func TestEngineCommandFields(t *testing.T) {
	tags := tagDir(t)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	r := &checkLog{}
	prog := `tag plain; X=1 tag prefixed; export Y=2; unset HOME; cd sub; tag moved; ./../sub/../../` + filepath.Base(dir) + `/sub/../sub/.. 2>/dev/null; echo $?`
	got, _ := runProgram(t, dir, prog, r.check, func(o *EngineOptions) {
		o.Env = []string{"PATH=" + tags + ":/usr/bin:/bin", "HOME=/nowhere", "KEEP=1"}
	})
	assert.Equal(t, "126\n", got.Stdout, "a directory is not run")
	require.Len(t, r.cmds, 3)
	assert.Nil(t, r.cmds[0].Env)
	assert.Equal(t, dir, r.cmds[0].Dir)
	assert.Equal(t, []string{"X=1"}, r.cmds[1].Env)
	assert.Equal(t, []string{"HOME", "OLDPWD=" + dir, "PWD=" + filepath.Join(dir, "sub"), "Y=2"}, r.cmds[2].Env)
	assert.Equal(t, filepath.Join(dir, "sub"), r.cmds[2].Dir)
	assert.Equal(t, filepath.Join(tags, "tag"), r.cmds[2].Path)
}

// TestEngineNoChecker: without a Checker nothing external runs.
func TestEngineNoChecker(t *testing.T) {
	dir := t.TempDir()
	got, _ := runProgram(t, dir, `touch made; echo "rc=$?"; ls`, nil)
	assert.Equal(t, "rc=126\n", got.Stdout)
	assert.Equal(t, strings.Repeat("execgate: denied: no checker is configured for the interp engine\n", 2), got.Stderr)
	assert.Equal(t, 126, got.Status)
	assert.NoFileExists(t, filepath.Join(dir, "made"))
}

// TestEngineCheckOpen: redirections go through CheckOpen.
func TestEngineCheckOpen(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var seen []string
	checkOpen := func(_ context.Context, path string, flag int) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s %t", filepath.Base(path), flag&(os.O_WRONLY|os.O_RDWR) != 0))
		if filepath.Base(path) == ".bashrc" {
			return errors.New("execgate: denied: writes .bashrc")
		}
		return nil
	}
	got, _ := runProgram(t, dir, `echo x > .bashrc; echo "rc=$?"; echo y > ok; cat < ok`, allowAll, func(o *EngineOptions) { o.CheckOpen = checkOpen })
	assert.Equal(t, "rc=1\ny\n", got.Stdout)
	assert.Equal(t, "open .bashrc: execgate: denied: writes .bashrc\n", got.Stderr)
	assert.NoFileExists(t, filepath.Join(dir, ".bashrc"))
	assert.Equal(t, []string{".bashrc true", "ok true", "ok false"}, seen)
}

// TestEngineCheckerCancelled: a Checker that gives up because ctx is done
// stops the program.
func TestEngineCheckerCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	check := func(ctx context.Context, c Command) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	var out bytes.Buffer
	res, err := RunEngine(ctx, EngineOptions{Program: "ls; echo after", Stdout: &out, Check: check, Dir: t.TempDir()})
	require.NoError(t, err)
	assert.Equal(t, 130, res.ExitStatus)
	assert.Empty(t, out.String())
}

// TestEngineRefusesUnsupported: RunEngine refuses what it cannot run as
// bash would, before running anything.
func TestEngineRefusesUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    EngineOptions
		want string
	}{
		{"program", EngineOptions{Program: "touch made; kill -0 1"}, "uses the `kill` builtin"},
		{"set option", EngineOptions{Program: "touch made", Set: []string{"-noclobber"}}, "set -o noclobber"},
		{"shopt option", EngineOptions{Program: "touch made", Set: []string{"-O:failglob"}}, "shopt failglob"},
		{"environment", EngineOptions{Program: "touch made", Env: []string{"BASH_ENV=/etc/x", "PATH=/usr/bin:/bin"}}, "BASH_ENV is set"},
		{"exported function", EngineOptions{Program: "touch made", Env: []string{"BASH_FUNC_f%%=() { :; }"}}, "BASH_FUNC_"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.o.Dir, tc.o.Check = dir, allowAll
			_, err := RunEngine(context.Background(), tc.o)
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tc.want)
			assert.NoFileExists(t, filepath.Join(dir, "made"))
		})
	}
}

// TestEngineShellOptions: the supported command-line options take effect.
func TestEngineShellOptions(t *testing.T) {
	got, _ := runProgram(t, t.TempDir(), `false; echo never`, allowAll, func(o *EngineOptions) { o.Set = []string{"-errexit", "-O:extglob", "+xtrace"} })
	assert.Equal(t, engineOutcome{Status: 1}, got)
	got, _ = runProgram(t, t.TempDir(), `echo "$u"`, allowAll, func(o *EngineOptions) { o.Set = []string{"-nounset"} })
	assert.Equal(t, 1, got.Status)
	assert.Contains(t, got.Stderr, "u: unbound variable")
	got, _ = runProgram(t, t.TempDir(), `[[ aab == +(a)b ]] && echo glob`, allowAll, func(o *EngineOptions) { o.Set = []string{"-O:extglob", "-hashall"} })
	assert.Equal(t, "glob\n", got.Stdout)
}

// TestEngineSyntaxError: bash's status, one line, nothing run.
func TestEngineSyntaxError(t *testing.T) {
	dir := t.TempDir()
	got, _ := runProgram(t, dir, "touch made\nif then fi", allowAll)
	assert.Equal(t, 2, got.Status)
	assert.Regexp(t, "^bash: line 2: syntax error: .+\n$", got.Stderr)
	assert.NoFileExists(t, filepath.Join(dir, "made"))
}

// TestEngineStdin: a reader, a file and nothing.
func TestEngineStdin(t *testing.T) {
	prog := `read -r x; echo "[$x]"; cat; read -r y; echo "rc=$?"`
	got, _ := runProgram(t, t.TempDir(), prog, allowAll, func(o *EngineOptions) { o.Stdin = strings.NewReader("first\nrest\nof it") })
	assert.Equal(t, "[first]\nrest\nof itrc=1\n", got.Stdout)

	f, err := os.CreateTemp(t.TempDir(), "in")
	require.NoError(t, err)
	_, err = f.WriteString("from file\nmore\n")
	require.NoError(t, err)
	_, err = f.Seek(0, io.SeekStart)
	require.NoError(t, err)
	defer f.Close()
	got, _ = runProgram(t, t.TempDir(), prog, allowAll, func(o *EngineOptions) { o.Stdin = f })
	assert.Equal(t, "[from file]\nmore\nrc=1\n", got.Stdout)

	got, _ = runProgram(t, t.TempDir(), prog, allowAll)
	assert.Equal(t, "[]\nrc=1\n", got.Stdout)
}

// TestEngineCappedLikeRun writes 5 MB through RunEngine and through Run,
// from builtins and external commands on both streams: what the caller
// receives must be identical but for the spill file's name, and each spill
// file must hold the whole output. (stderr is written first, less than a
// pipe holds, and given time to be read, so that the order of the two
// pipes cannot differ: with 2 MB on stderr, reading it could outlast the
// pause under the race detector, and stdout's bytes took part of the head.)
func TestEngineCappedLikeRun(t *testing.T) {
	sh := bash(t)
	prog := `echo start; printf 'err\n' >&2; head -c 30000 /dev/zero | tr '\0' e >&2; sleep 0.2; head -c 4970000 /dev/zero | tr '\0' a; echo; echo end`
	const maxBytes, tail = 100000, 20000
	spills := t.TempDir()
	var eOut, eErr bytes.Buffer
	eres, err := RunEngine(context.Background(), EngineOptions{
		Program: prog, Dir: t.TempDir(), Stdout: &eOut, Stderr: &eErr, Check: allowAll,
		MaxBytes: maxBytes, TailBytes: tail, SpillDir: spills, SpillMaxBytes: 8 << 20,
	})
	require.NoError(t, err)
	var rOut, rErr bytes.Buffer
	rres, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", prog}, Dir: t.TempDir(), Stdout: &rOut, Stderr: &rErr,
		MaxBytes: maxBytes, TailBytes: tail, SpillDir: spills, SpillMaxBytes: 8 << 20,
	})
	require.NoError(t, err)

	assert.Equal(t, int64(5000015), eres.Bytes)
	assert.Equal(t, rres.Bytes, eres.Bytes)
	assert.Equal(t, rres.Omitted, eres.Omitted)
	assert.True(t, bytes.Equal(rres.Tail, eres.Tail), "tails differ")
	require.NotEmpty(t, eres.SpillPath)
	assert.NotEqual(t, rres.SpillPath, eres.SpillPath)
	same := func(r, e *bytes.Buffer) bool {
		return strings.ReplaceAll(r.String(), rres.SpillPath, "SPILL") == strings.ReplaceAll(e.String(), eres.SpillPath, "SPILL")
	}
	assert.True(t, same(&rOut, &eOut), "stdout differs from Run's")
	assert.True(t, same(&rErr, &eErr), "stderr differs from Run's")
	assert.True(t, strings.HasPrefix(eErr.String(), "err\neeee"))
	assert.True(t, strings.HasSuffix(eOut.String(), "aaaa\nend\n"))
	assert.Contains(t, eOut.String(), "… [execgate: 4900015 bytes omitted; full output: "+eres.SpillPath+"] …\n")
	fi, err := os.Stat(eres.SpillPath)
	require.NoError(t, err)
	assert.Equal(t, eres.Bytes, fi.Size())
}

// TestEngineUncapped: with MaxBytes 0, files are handed to commands as
// they are and other writers get every byte.
func TestEngineUncapped(t *testing.T) {
	dir := t.TempDir()
	outFile, err := os.Create(filepath.Join(dir, "out"))
	require.NoError(t, err)
	defer outFile.Close()
	var errb bytes.Buffer
	res, err := RunEngine(context.Background(), EngineOptions{
		Program: `echo builtin; readlink /proc/self/fd/1; seq 1 100000 >&2`, Dir: dir,
		Stdout: outFile, Stderr: &errb, Check: allowAll,
	})
	require.NoError(t, err)
	b, err := os.ReadFile(outFile.Name())
	require.NoError(t, err)
	assert.Equal(t, "builtin\n"+outFile.Name()+"\n", string(b), "the command writes to the file itself")
	assert.Equal(t, 588895, errb.Len())
	assert.Equal(t, int64(errb.Len()), res.Bytes)
	assert.Zero(t, res.ExitStatus)
}

// pidFromFile waits for a program to write a process id into path.
func pidFromFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.True(t, eventually(5*time.Second, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}), "no pid in %s", path)
	killLater(t, pid)
	return pid
}

// TestEngineCancel: cancelling ctx interrupts the running command (SIGINT,
// then SIGKILL for one that ignores it) and stops the program.
func TestEngineCancel(t *testing.T) {
	for _, tc := range []struct {
		name, trap string
		atLeast    time.Duration
	}{
		{"interrupted", "", 0},
		{"killed after the grace", `trap "" INT;`, killDelay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out bytes.Buffer
			type ret struct {
				res Result
				err error
			}
			done := make(chan ret, 1)
			go func() {
				res, err := RunEngine(ctx, EngineOptions{
					Program: fmt.Sprintf(`sh -c '%s echo $$ > %s; sleep 30; :'; echo after`, tc.trap, pidFile),
					Dir:     dir, Stdout: &out, Check: allowAll,
				})
				done <- ret{res, err}
			}()
			pid := pidFromFile(t, pidFile)
			start := time.Now()
			cancel()
			select {
			case r := <-done:
				require.NoError(t, r.err)
				assert.Equal(t, 130, r.res.ExitStatus)
			case <-time.After(killDelay + 5*time.Second):
				t.Fatal("RunEngine did not return after cancel")
			}
			assert.GreaterOrEqual(t, time.Since(start), tc.atLeast)
			assert.True(t, eventually(2*time.Second, func() bool { return gone(pid) }), "the command survived")
			assert.Empty(t, out.String())
		})
	}
}

// TestEngineBackgroundSurvives: a background job outlives the program and a
// later cancel of the caller's ctx, as it would outlive bash.
func TestEngineBackgroundSurvives(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	res, err := RunEngine(ctx, EngineOptions{Program: "sh -c 'sleep 1; touch marker' &\necho started", Dir: dir, Check: allowAll})
	require.NoError(t, err)
	assert.Zero(t, res.ExitStatus)
	assert.Less(t, time.Since(start), 800*time.Millisecond, "RunEngine waited for the job")
	assert.NoFileExists(t, filepath.Join(dir, "marker"))
	cancel()
	assert.True(t, eventually(5*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, "marker"))
		return err == nil
	}), "the background job was stopped")
}

// TestEngineForwardSignals runs the engine in a separate process, as the
// shim would, and sends it SIGTERM: the running command must be stopped and
// the process must exit as bash would, with 128+15.
func TestEngineForwardSignals(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command(self)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), engineHelperEnv+"="+fmt.Sprintf(`sh -c 'echo $$ > %s; exec sleep 30'; echo after`, pidFile))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out bytes.Buffer
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	killLater(t, cmd.Process.Pid)
	pid := pidFromFile(t, pidFile)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 143, status(cmd.ProcessState))
	assert.True(t, eventually(2*time.Second, func() bool { return gone(pid) }), "the command survived")
	assert.Empty(t, out.String())
}

// TestEngineSignalStatus: a command killed by a signal gives 128+n, and the
// program goes on, as under bash.
func TestEngineSignalStatus(t *testing.T) {
	got, res := runProgram(t, t.TempDir(), `sh -c 'kill -TERM $$'; echo "rc=$?"; sh -c 'kill -KILL $$'`, allowAll)
	assert.Equal(t, "rc=143\n", got.Stdout)
	assert.Equal(t, 137, got.Status)
	assert.False(t, res.Signaled, "the engine itself was not killed")
}

// TestEnginePipelineSubshell: the last command of a pipeline runs in a
// subshell, so it cannot change or end the shell.
func TestEnginePipelineSubshell(t *testing.T) {
	got, _ := runProgram(t, t.TempDir(), `v=0; echo 1 | read -r v; echo x | { v=2; exit 3; }; echo "v=$v rc=$?"; ! echo | false && echo negated`, allowAll)
	assert.Equal(t, engineOutcome{Stdout: "v=0 rc=3\nnegated\n"}, got)
}

// TestEngineBadOptions: invalid output settings are errors.
func TestEngineBadOptions(t *testing.T) {
	for _, o := range []EngineOptions{{MaxBytes: -1}, {MaxBytes: 10, TailBytes: 20}, {SpillMaxBytes: -1}} {
		o.Program = "true"
		_, err := RunEngine(context.Background(), o)
		assert.Error(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := RunEngine(ctx, EngineOptions{Program: "true", Check: allowAll})
	assert.ErrorIs(t, err, context.Canceled)
}

// TestEngineRecoversPanic: a panic in the interpreter's goroutine (here
// from the Checker) stops the program with a message and status 1 instead
// of crashing the shim.
func TestEngineRecoversPanic(t *testing.T) {
	check := func(context.Context, Command) error { panic("checker bug") }
	got, _ := runProgram(t, t.TempDir(), "echo before; ls; echo after", check)
	assert.Equal(t, engineOutcome{"before\n", "bash: internal error: checker bug\n", 1}, got)
}
