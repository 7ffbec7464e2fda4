package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	throwaway "github.com/execgate/execgate/internal/world"
)

// A parse that differs from bash is a bypass: the analysis judges one
// program while bash runs another. The parser differential runs each
// program twice — through the analysis, and through the real bash with
// every program it would start replaced by a recorder — and requires every
// program bash starts, with its arguments, to be one the analysis judged.
//
// bash runs confined (throwaway.Confined): it may write only in a throwaway
// directory and execute only the recorders and the shells, so that a
// corpus line such as `echo x > /etc/passwd` or `/bin/rm -rf /` harms
// nothing.

// bashWorld is a throwaway directory where programs run under the real
// bash with recorders on PATH.
type bashWorld struct {
	dir, rec, recorder, prelude string
	zsh, zdotdir                string // the real zsh, and its start-up directory ("" without zsh)
	bash, dash                  string
	mu                          sync.Mutex
	names                       map[string]bool
	wrappers                    []string // real programs on PATH
}

// realWrappers run for real in the differential: they start another
// program named in their arguments, so how they read their own options
// decides what runs.
var realWrappers = []string{"env", "nice", "nohup", "timeout", "stdbuf", "setsid", "xargs", "ionice", "chrt", "taskset", "flock", "time"}

// recorderScript writes its name and arguments to a file of its own in
// $RECLOG (processes of a pipeline record at once) as a count then
// NUL-terminated strings, and succeeds (false fails, so that `false ||`
// and `if false` go the way they would).
const recorderScript = `#!/bin/sh
# bash finds a recorder on PATH for "bash NAME" too, and reads it as a
# script: what a script does is not the analysis's to see.
case ${BASH_VERSION-} in ?*) exit 0 ;; esac
n=${REC_NAME-${0##*/}}
{ printf '%d\0' $(($# + 1)); printf '%s\0' "$n" "$@"; } >>"$RECLOG/$$"
[ "$n" = false ] && exit 1
exit 0
`

// bashPrelude is read by every bash through BASH_ENV: builtins that only
// compute or print are switched off so that calls to them are recorded
// too, and a name nothing on PATH has is recorded by the handler.
const bashPrelude = `enable -n echo printf test [ true false pwd kill type hash times ulimit umask jobs disown help logout suspend
command_not_found_handle() { REC_NAME=$1 "$RECORDER" "${@:2}"; }
`

// zshPrelude is the same for zsh, read from $ZDOTDIR/.zshenv.
const zshPrelude = `disable echo printf test [ true false pwd kill type hash times ulimit umask jobs disown logout suspend print
command_not_found_handler() { REC_NAME=$1 "$RECORDER" "${@:2}"; }
`

func newBashWorld(t *testing.T) *bashWorld {
	t.Helper()
	throwaway.SkipUnlessConfinable(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH")
	}
	dash, _ := exec.LookPath("dash")
	dir := t.TempDir()
	w := &bashWorld{
		dir: dir, rec: filepath.Join(dir, "rec"),
		recorder: filepath.Join(dir, "recorder"), prelude: filepath.Join(dir, "prelude.bash"),
		names: map[string]bool{},
	}
	w.bash, _ = filepath.EvalSymlinks(bash)
	if dash != "" {
		w.dash, _ = filepath.EvalSymlinks(dash)
	}
	if err := os.MkdirAll(w.rec, 0o755); err != nil {
		t.Fatal(err)
	}
	if zsh, err := exec.LookPath("zsh"); err == nil {
		w.zsh, _ = filepath.EvalSymlinks(zsh)
		w.zdotdir = filepath.Join(dir, "zdotdir")
		if err := os.MkdirAll(w.zdotdir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.zdotdir, ".zshenv"), []byte(zshPrelude), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, body := range map[string]string{w.recorder: recorderScript, w.prelude: bashPrelude} {
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The shells run for real (what they run is recorded in turn), less
	// the system's login files, which the analysis trusts as the user's
	// own; sh is dash where there is one, as on Debian. So do the wrappers
	// whose reading of their own options the analysis models.
	shells := map[string]string{"bash": "#!/bin/sh\nexec " + w.bash + " --noprofile --norc \"$@\"\n"}
	if w.dash != "" {
		shells["sh"] = "#!/bin/sh\nexec " + w.dash + " \"$@\"\n"
		shells["dash"] = shells["sh"]
	}
	for name, script := range shells {
		if err := os.WriteFile(filepath.Join(w.rec, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		w.names[name] = true
	}
	for _, name := range realWrappers {
		if p, err := exec.LookPath(name); err == nil {
			p, _ = filepath.EvalSymlinks(p)
			if err := os.Symlink(p, filepath.Join(w.rec, name)); err != nil {
				t.Fatal(err)
			}
			w.names[name] = true
			w.wrappers = append(w.wrappers, p)
		}
	}
	// The harness must see what bash runs, or every comparison passes.
	fx := w.fixture(t)
	defer os.RemoveAll(fx.dir)
	if got := w.run(t, fx, DialectBash, "selftest a 'b c' ''"); fmt.Sprintf("%q", got.execs) != `[["selftest" "a" "b c" ""]]` {
		t.Fatalf("the recorders do not work: bash ran %q", got.execs)
	}
	if w.zsh != "" {
		got := w.run(t, fx, DialectZsh, "selftest a 'b c' ''; echo x")
		sort.Slice(got.execs, func(i, j int) bool { return got.execs[i][0] < got.execs[j][0] })
		if fmt.Sprintf("%q", got.execs) != `[["echo" "x"] ["selftest" "a" "b c" ""]]` {
			t.Fatalf("the recorders do not work: zsh ran %q", got.execs)
		}
	}
	return w
}

// fixture is a fresh home directory with a workspace in it, for one
// program: programs write and remove files.
type fixture struct{ dir, home, work string }

func (w *bashWorld) fixture(t testing.TB) fixture {
	dir, err := os.MkdirTemp(w.dir, "run")
	if err != nil {
		t.Fatal(err)
	}
	fx := fixture{dir: dir, home: filepath.Join(dir, "home")}
	fx.work = filepath.Join(fx.home, "project")
	for _, d := range []string{filepath.Join(fx.home, ".ssh"), filepath.Join(fx.work, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Not executable: what a file of the workspace would run is not the
	// analysis's to see.
	for name, body := range map[string]string{
		".ssh/id_rsa":             "CANARY PRIVATE KEY\n",
		".bashrc":                 "# rc\n",
		"project/README.md":       "# readme\n",
		"project/src/main.go":     "package main\n",
		"project/src/lib_test.go": "package main\n",
		"project/src/helper.py":   "print(1)\n",
		"project/notes.txt":       "notes\n",
		"project/.hidden":         "hidden\n",
		"project/Makefile":        "all:\n\ttrue\n",
		"project/package.json":    "{}\n",
	} {
		if err := os.WriteFile(filepath.Join(fx.home, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

// commandToken is a word that may be a command name.
var commandToken = regexp.MustCompile(`[A-Za-z0-9_][A-Za-z0-9_.+:@%,-]*`)

// addRecorders puts a recorder on PATH for every word of program that may
// be a command name, so that a program started by a program (env rm, xargs
// rm) is recorded too; a name none covers reaches the handler.
func (w *bashWorld) addRecorders(t testing.TB, program string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, name := range commandToken.FindAllString(program, -1) {
		if w.names[name] || len(name) > 200 {
			continue
		}
		w.names[name] = true
		if err := os.Symlink(w.recorder, filepath.Join(w.rec, name)); err != nil && !errors.Is(err, os.ErrExist) {
			t.Fatal(err)
		}
	}
}

// bashRun is what bash started for one program.
type bashRun struct {
	execs    [][]string
	timedOut bool
}

// run runs program with bash -c in the world's workspace and returns the
// programs it started, in order.
func (w *bashWorld) run(t testing.TB, fx fixture, d Dialect, program string) bashRun {
	t.Helper()
	w.addRecorders(t, program)
	scratch, err := os.MkdirTemp(fx.dir, "tmp")
	if err != nil {
		t.Fatal(err)
	}
	logDir, err := os.MkdirTemp(scratch, "log")
	if err != nil {
		t.Fatal(err)
	}
	execs := append([]string{w.rec, w.recorder, w.bash, "/bin/sh", "/usr/bin/sh"}, w.wrappers...)
	argv := []string{w.bash, "--norc", "--noprofile", "-c", program}
	if d == DialectZsh {
		argv = []string{w.zsh, "-c", program}
		execs = append(execs, w.zsh)
	}
	if w.dash != "" {
		execs = append(execs, w.dash)
	}
	// Writes: the home (with the workspace) and a scratch directory; the
	// log lies in the world's directory, which the recorders append to.
	cmd, err := throwaway.Confined([]string{fx.home, scratch, "/dev/null"}, execs, argv...)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, "PATH="+w.rec, "HOME="+fx.home, "BASH_ENV="+w.prelude, "RECLOG="+logDir,
		"RECORDER="+w.recorder, "ZDOTDIR="+w.zdotdir, "TMPDIR="+scratch, "LC_ALL=C.UTF-8")
	cmd.Dir = fx.work
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin = nil
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &errb
	defer func() {
		if testing.Verbose() && errb.Len() > 0 {
			t.Logf("stderr: %s", errb.String())
		}
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	var out bashRun
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		out.timedOut = true
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
	// Background jobs may still be recording.
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if syscall.Kill(-pgid, 0) != nil {
			break
		}
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	logs, err := os.ReadDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		b, err := os.ReadFile(filepath.Join(logDir, l.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out.execs = append(out.execs, parseRecords(b)...)
	}
	return out
}

// parseRecords reads the recorders' log: a count, then that many strings,
// each NUL-terminated. A torn record ends the list.
func parseRecords(b []byte) [][]string {
	var out [][]string
	for len(b) > 0 && len(out) < 10000 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			break
		}
		n, err := strconv.Atoi(string(b[:i]))
		b = b[i+1:]
		if err != nil || n < 1 || n > 1<<16 {
			break
		}
		argv := make([]string, 0, n)
		for range n {
			j := bytes.IndexByte(b, 0)
			if j < 0 {
				return out
			}
			argv = append(argv, string(b[:j]))
			b = b[j+1:]
		}
		out = append(out, argv)
	}
	return out
}

// judgedExec reports whether the analysis judged a segment that runs argv
// (argv[0] a bare name): one with that program and those arguments, where
// a word the analysis cannot know stands for any number of arguments; or,
// for a wrapper, one the wrapper was taken off.
func judgedExec(res Result, argv []string, home string) bool {
	for _, s := range res.Segments {
		for _, wr := range s.Wrappers {
			if first, _, _ := strings.Cut(wr, " "); first == argv[0] {
				return true
			}
		}
		if len(s.Argv) == 0 || programName(s.Argv[0]) != argv[0] && s.Argv[0] != argv[0] {
			continue
		}
		if argsMatch(segmentPatterns(s, home)[1:], argv[1:]) {
			return true
		}
	}
	return false
}

// argPattern is one word of a segment for matching: exact text, or any
// number of arguments.
type argPattern struct {
	text string
	any  bool
}

func segmentPatterns(s *Segment, home string) []argPattern {
	out := make([]argPattern, len(s.Argv))
	for i, a := range s.Argv {
		if i < len(s.words) {
			w := s.words[i]
			switch {
			case w.procSubst || w.glob || w.brace || !w.known || w.assignTilde:
				out[i] = argPattern{any: true}
			case w.tilde && (w.text == "~" || strings.HasPrefix(w.text, "~/")):
				out[i] = argPattern{text: home + w.text[1:]}
			case w.tilde:
				out[i] = argPattern{any: true}
			default:
				out[i] = argPattern{text: w.text}
			}
			continue
		}
		out[i] = argPattern{text: a, any: strings.Contains(a, unknownShape) || strings.HasPrefix(a, "~")}
	}
	return out
}

// argsMatch matches args against pats, an any pattern taking zero or more
// arguments.
func argsMatch(pats []argPattern, args []string) bool {
	if len(pats) == 0 {
		return len(args) == 0
	}
	if pats[0].any {
		for k := 0; k <= len(args); k++ {
			if argsMatch(pats[1:], args[k:]) {
				return true
			}
		}
		return false
	}
	return len(args) > 0 && args[0] == pats[0].text && argsMatch(pats[1:], args[1:])
}

// undecidable reports whether the analysis already refuses to let the
// program run on a wildcard allowlist entry: it did not parse, runs code it
// cannot see, runs a command it cannot name, or has a reason no wildcard
// waives (firm). What bash runs then is shown to a person as it is.
func undecidable(res Result) bool {
	if res.ParseError != "" || res.Opaque {
		return true
	}
	for _, s := range res.Segments {
		if s.Argv == nil || s.firm() {
			return true
		}
	}
	return false
}

// bashDiffEnv is the environment bash starts with, as the analysis reads
// it.
func bashDiffEnv(name string) string {
	if name == "LC_ALL" {
		return "C.UTF-8"
	}
	return ""
}

// differential is one program on which bash and the analysis disagree.
type differential struct {
	program string
	ran     []string
	judged  []string
}

func (d differential) String() string {
	return fmt.Sprintf("%q\n\tbash ran:       %q\n\texecgate judged: %s", d.program, d.ran, strings.Join(d.judged, " | "))
}

// compareWithBash runs each program through the analysis and through bash
// and returns the disagreements.
func compareWithBash(t *testing.T, w *bashWorld, d Dialect, programs []string, workers int) []differential {
	t.Helper()
	e := testEngine(t)
	var mu sync.Mutex
	var diffs []differential
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				fx := w.fixture(t)
				res := e.Analyze(Request{Command: p, Cwd: fx.work, Home: fx.home, Getenv: bashDiffEnv, Dialect: d})
				if undecidable(res) {
					os.RemoveAll(fx.dir)
					continue
				}
				run := w.run(t, fx, d, p)
				os.RemoveAll(fx.dir)
				for _, argv := range run.execs {
					if judgedExec(res, argv, fx.home) {
						continue
					}
					d := differential{program: p, ran: argv}
					for _, s := range res.Segments {
						d.judged = append(d.judged, fmt.Sprintf("%q", s.Argv))
					}
					mu.Lock()
					diffs = append(diffs, d)
					mu.Unlock()
					break
				}
			}
		}()
	}
	for _, p := range programs {
		jobs <- p
	}
	close(jobs)
	wg.Wait()
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].program < diffs[j].program })
	return diffs
}

var _ = context.Background

// TestParserMatchesBash is the parser differential: the corpora and
// generated mutations of them, through the analysis and through the real
// bash and zsh. EXECGATE_BASHDIFF_N sets how many mutations (default 1000,
// 200 with -short), EXECGATE_BASHDIFF_SEED their seed.
func TestParserMatchesBash(t *testing.T) {
	if raceEnabled {
		t.Skip("runs real shells, not code the race detector can check; run without -race")
	}
	w := newBashWorld(t)
	n := 1000
	if testing.Short() {
		n = 200
	}
	if v, err := strconv.Atoi(os.Getenv("EXECGATE_BASHDIFF_N")); err == nil {
		n = v
	}
	seed := uint64(1)
	if v, err := strconv.ParseUint(os.Getenv("EXECGATE_BASHDIFF_SEED"), 10, 64); err == nil {
		seed = v
	}
	programs := differentialPrograms(t, n, seed)
	for _, d := range []Dialect{DialectBash, DialectZsh} {
		t.Run(d.String(), func(t *testing.T) {
			if d == DialectZsh && w.zsh == "" {
				t.Skip("no zsh on PATH: the zsh differential needs it (.ci/run installs it)")
			}
			diffs := compareWithBash(t, w, d, programs, 4)
			for i, diff := range diffs {
				if i == 100 {
					t.Errorf("… and %d more", len(diffs)-i)
					break
				}
				t.Errorf("%s runs what execgate did not judge: %s", d, diff)
			}
			t.Logf("%d programs, %d differences", len(programs), len(diffs))
		})
	}
}
