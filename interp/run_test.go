package interp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunMatchesBash runs each program through Run and through bash
// directly: stdout, stderr and exit status must be identical.
func TestRunMatchesBash(t *testing.T) {
	sh := bash(t)
	type tc struct {
		name  string
		argv  []string
		stdin string
	}
	c := func(name, script string) tc { return tc{name: name, argv: []string{"bash", "-c", script}} }
	cases := []tc{
		c("echo", "echo hello"),
		c("no trailing newline", "printf 'no newline'"),
		c("both streams", "echo out; echo err >&2; echo out2; printf e2 >&2"),
		c("exit 300", "exit 300"),
		c("syntax error", "if then fi"),
		c("unterminated quote", `echo "abc`),
		c("command not found", "no_such_command_execgate_test; echo after $?"),
		c("kill -9 self", "echo before; kill -9 $$"),
		c("kill -TERM self", "kill -TERM $$"),
		c("binary bytes", `printf '\x00\x01\xff\xfe\n\x00'`),
		c("10000 lines", "seq 1 10000; seq 1 5000 >&2"),
		c("set -e", "set -e; false; echo not reached"),
		c("exit trap", "trap 'echo bye >&2' EXIT; exit 3"),
		c("version and login", `echo "$BASH_VERSION"; shopt -q login_shell; echo $?; echo "$0"`),
		{name: "argv0 sh is posix mode", argv: []string{"sh", "-c", "no_such_command_execgate_test; set -o | grep posix"}},
		{name: "positional args", argv: []string{"bash", "-c", `echo "$0|$1|$#"; nope`, "name", "a b"}},
		{name: "stdin", argv: []string{"bash", "-c", `read -r x; echo "[$x]"; cat`}, stdin: "first line\nrest\nof it"},
	}
	for _, code := range []int{0, 1, 2, 42, 126, 127, 128, 200, 255} {
		cases = append(cases, c(fmt.Sprintf("exit %d", code), fmt.Sprintf("echo x; exit %d", code)))
	}
	for _, tt := range cases {
		// A reader stdin is copied by os/exec; a file (or none) is handed
		// to a shell that spawn starts without it (spawn_linux.go).
		for _, stdinKind := range []string{"reader", "file"} {
			t.Run(tt.name+"/"+stdinKind, func(t *testing.T) {
				runMatchesBash(t, sh, tt.argv, tt.stdin, stdinKind == "file")
			})
		}
	}
}

// runMatchesBash runs argv through bash directly and through Run, with
// stdin given as a reader or as a file, and compares what a caller sees.
func runMatchesBash(t *testing.T, sh string, argv []string, stdin string, stdinFile bool) {
	in := func() io.Reader {
		if !stdinFile {
			return strings.NewReader(stdin)
		}
		path := filepath.Join(t.TempDir(), "stdin")
		require.NoError(t, os.WriteFile(path, []byte(stdin), 0o600))
		f, err := os.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	var wantOut, wantErr bytes.Buffer
	direct := &exec.Cmd{Path: sh, Args: argv, Stdin: in(), Stdout: &wantOut, Stderr: &wantErr}
	err := direct.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		require.NoError(t, err)
	}

	var gotOut, gotErr bytes.Buffer
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: argv, Stdin: in(), Stdout: &gotOut, Stderr: &gotErr,
		MaxBytes: 1 << 20, TailBytes: DefaultTailBytes,
	})
	require.NoError(t, err)
	assert.Equal(t, wantOut.String(), gotOut.String(), "stdout")
	assert.Equal(t, wantErr.String(), gotErr.String(), "stderr")
	assert.Equal(t, status(direct.ProcessState), res.ExitStatus, "exit status")
	assert.Equal(t, direct.ProcessState.Sys().(interface{ Signaled() bool }).Signaled(), res.Signaled)
	assert.Equal(t, int64(wantOut.Len()+wantErr.Len()), res.Bytes)
	assert.Zero(t, res.Omitted)
	assert.Empty(t, res.SpillPath)
}

// TestRunStdinFile checks that an *os.File stdin reaches the shell as is.
func TestRunStdinFile(t *testing.T) {
	sh := bash(t)
	f, err := os.CreateTemp(t.TempDir(), "in")
	require.NoError(t, err)
	_, err = f.WriteString("one\ntwo\n")
	require.NoError(t, err)
	_, err = f.Seek(0, io.SeekStart)
	require.NoError(t, err)
	var out bytes.Buffer
	// /proc/self/fd/0 resolves to the file only if the shell got it directly.
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", "readlink /proc/$$/fd/0; cat"},
		Stdin: f, Stdout: &out, MaxBytes: DefaultMaxBytes, TailBytes: DefaultTailBytes,
	})
	require.NoError(t, err)
	assert.Equal(t, f.Name()+"\none\ntwo\n", out.String())
	assert.Equal(t, 0, res.ExitStatus)
}

// TestRunUncapped checks MaxBytes 0: files are handed to the shell directly,
// other writers get every byte.
func TestRunUncapped(t *testing.T) {
	sh := bash(t)
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "out"))
	require.NoError(t, err)
	var errB bytes.Buffer
	script := "readlink /proc/$$/fd/1; head -c 300000 /dev/zero | tr '\\0' o; head -c 250000 /dev/zero | tr '\\0' e >&2"
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", script},
		Stdout: outF, Stderr: &errB, TailBytes: 10,
	})
	require.NoError(t, err)
	require.NoError(t, outF.Close())
	got, err := os.ReadFile(outF.Name())
	require.NoError(t, err)
	assert.Equal(t, outF.Name()+"\n"+strings.Repeat("o", 300000), string(got))
	assert.Equal(t, strings.Repeat("e", 250000), errB.String())
	assert.Equal(t, int64(250000), res.Bytes, "only the copied stream is counted")
	assert.Equal(t, "eeeeeeeeee", string(res.Tail))
	assert.Zero(t, res.Omitted)
}

// TestRunDirect checks Options.Direct: a stream marked direct gets the
// shell's own file and every byte while the other stream is capped.
func TestRunDirect(t *testing.T) {
	sh := bash(t)
	errF, err := os.Create(filepath.Join(t.TempDir(), "err"))
	require.NoError(t, err)
	var out bytes.Buffer
	script := "readlink /proc/$$/fd/2 >&2; head -c 300000 /dev/zero | tr '\\0' o; head -c 250000 /dev/zero | tr '\\0' e >&2"
	res, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", script},
		Stdout: &out, Stderr: errF, MaxBytes: 1000, TailBytes: 100, Direct: [2]bool{false, true},
	})
	require.NoError(t, err)
	require.NoError(t, errF.Close())
	got, err := os.ReadFile(errF.Name())
	require.NoError(t, err)
	assert.Equal(t, errF.Name()+"\n"+strings.Repeat("e", 250000), string(got))
	assert.Equal(t, int64(300000), res.Bytes, "only the captured stream is counted")
	assert.Equal(t, int64(300000-1000), res.Omitted)
	assert.Contains(t, out.String(), "bytes omitted")
}

// TestRunEnvDir checks that Env and Dir reach the shell.
func TestRunEnvDir(t *testing.T) {
	sh := bash(t)
	dir := t.TempDir()
	var out bytes.Buffer
	_, err := Run(context.Background(), Options{
		Shell: sh, Argv: []string{"bash", "-c", `pwd; echo "$FOO"; echo "${HOME-unset}"`},
		Env: []string{"FOO=bar baz"}, Dir: dir, Stdout: &out, MaxBytes: 1000,
	})
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	assert.Equal(t, real+"\nbar baz\nunset\n", out.String())
}

// TestRunBackgroundJob checks that Run returns once the shell exits, even
// when a background job holds the output pipes open or keeps writing.
func TestRunBackgroundJob(t *testing.T) {
	sh := bash(t)
	cases := []struct{ name, script, out string }{
		{"redirected", "sleep 30 >/dev/null 2>&1 & echo started $!", "started"},
		{"holds pipes", "sleep 30 & echo started $!", "started"},
		{"keeps writing", "(while :; do echo tick >&2; sleep 0.01; done) & echo started $!", "started"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			start := time.Now()
			res, err := Run(context.Background(), Options{
				Shell: sh, Argv: []string{"bash", "-c", tt.script},
				Stdout: &out, Stderr: io.Discard, MaxBytes: DefaultMaxBytes, TailBytes: DefaultTailBytes,
			})
			elapsed := time.Since(start)
			require.NoError(t, err)
			var pid int
			_, err = fmt.Sscanf(out.String(), tt.out+" %d\n", &pid)
			require.NoError(t, err, "output %q", out.String())
			killLater(t, pid)
			assert.Equal(t, 0, res.ExitStatus)
			assert.Less(t, elapsed, 2*time.Second)
			if tt.name != "keeps writing" {
				assert.False(t, gone(pid), "background job must keep running")
			}
		})
	}
}

// TestRunCancel checks that a cancelled context stops the whole command.
func TestRunCancel(t *testing.T) {
	sh := bash(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	res, err := Run(ctx, Options{
		Shell: sh, Argv: []string{"bash", "-c", "sleep 30 & echo $!; sleep 30; echo not reached"},
		Stdout: &out, MaxBytes: 1000,
	})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Equal(t, 128+15, res.ExitStatus)
	assert.True(t, res.Signaled)
	var pid int
	_, err = fmt.Sscanf(out.String(), "%d\n", &pid)
	require.NoError(t, err)
	killLater(t, pid)
	assert.True(t, eventually(time.Second, func() bool { return gone(pid) }), "the background job is in the group and gets SIGTERM too")

	_, err = Run(ctx, Options{Shell: sh, Argv: []string{"bash", "-c", "true"}})
	require.ErrorIs(t, err, context.DeadlineExceeded, "a done context runs nothing")
}

// failWriter fails every write, like a pipe whose reader went away.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("reader gone") }

// TestRunReaderGone checks that a command whose output nobody reads gets
// SIGPIPE, as under bash, instead of running forever.
func TestRunReaderGone(t *testing.T) {
	sh := bash(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := Run(ctx, Options{
		Shell: sh, Argv: []string{"bash", "-c", "yes"},
		Stdout: failWriter{}, MaxBytes: DefaultMaxBytes, TailBytes: DefaultTailBytes,
	})
	require.NoError(t, err)
	require.NoError(t, ctx.Err())
	assert.Equal(t, 128+13, res.ExitStatus)
}

// TestRunBadOptions checks that bad options are refused before anything runs.
func TestRunBadOptions(t *testing.T) {
	sh := bash(t)
	self, err := os.Executable()
	require.NoError(t, err)
	mark := filepath.Join(t.TempDir(), "ran")
	argv := []string{"bash", "-c", "touch " + mark}
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"no shell", Options{Argv: argv}, "no shell"},
		{"relative shell", Options{Shell: "bash", Argv: argv}, "must be absolute"},
		{"missing shell", Options{Shell: "/nonexistent/bash", Argv: argv}, "no such file"},
		{"directory", Options{Shell: "/", Argv: argv}, "not a regular file"},
		{"self", Options{Shell: self, Argv: argv}, "execgate itself"},
		{"empty argv", Options{Shell: sh}, "empty argv"},
		{"negative max", Options{Shell: sh, Argv: argv, MaxBytes: -1}, "negative"},
		{"tail over max", Options{Shell: sh, Argv: argv, MaxBytes: 10, TailBytes: 11}, "exceed"},
		{"negative spill", Options{Shell: sh, Argv: argv, SpillMaxBytes: -1}, "negative"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), tt.o)
			require.ErrorContains(t, err, tt.want)
			assert.NotContains(t, err.Error(), "\n")
			assert.NoFileExists(t, mark)
		})
	}
}

// TestRunStatusLost: when the shell's status cannot be collected (here the
// kernel reaps it because SIGCHLD is ignored), Run says so and reports a
// failure, never the 0 a caller would take for success.
func TestRunStatusLost(t *testing.T) {
	out, err := helper(t, "nochild", scriptEnv+"=exit 0").Output()
	require.NoError(t, err)
	require.Equal(t, "lost=true status=255\n", string(out))
}
