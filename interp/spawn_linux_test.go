package interp

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spawnOutcome is what a child leaves behind: its output and wait status.
type spawnOutcome struct {
	out    string
	status syscall.WaitStatus
}

// runChild starts o's shell through start, its stdout a file, and waits.
func runChild(t *testing.T, o Options, start func(o *Options, stdout *os.File) (child, error)) spawnOutcome {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out")
	out, err := os.Create(path)
	require.NoError(t, err)
	c, err := start(&o, out)
	require.NoError(t, err)
	out.Close()
	ws, err := c.wait()
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return spawnOutcome{string(b), ws}
}

func viaSpawn(o *Options, stdout *os.File) (child, error) {
	in, _ := o.Stdin.(*os.File)
	c, ok, err := spawn(o, in, stdout, nil)
	if !ok {
		panic("spawn declined on Linux")
	}
	return c, err
}

func viaExec(o *Options, stdout *os.File) (child, error) {
	// A reader that is not a file makes startChild use os/exec.
	o.Stdin = struct{ *os.File }{nil}
	return startChild(o, stdout, nil, DefaultGrace)
}

// TestSpawnMatchesExec: the shell spawn starts sees what os/exec would
// have given it — argv, environment (PWD for Dir, duplicates resolved as
// os/exec resolves them), directory, descriptors — and its status,
// including death by a signal, is collected the same way.
func TestSpawnMatchesExec(t *testing.T) {
	sh := bash(t)
	dir := t.TempDir()
	probe := `printf '%s|' "$0" "$@"; echo; pwd; env | LC_ALL=C sort | grep -v '^_='; set -- /proc/$$/fd/*; echo $#`
	cases := []struct {
		name string
		o    Options
	}{
		{"argv", Options{Argv: []string{"bash", "-c", probe, "zero", "a b", ""}}},
		{"env and dir", Options{Argv: []string{"sh", "-c", probe}, Dir: dir,
			Env: []string{"A=1", "B=2", "A=3", "PWD=/elsewhere", "PATH=/usr/bin:/bin"}}},
		{"exit 42", Options{Argv: []string{"bash", "-c", "exit 42"}}},
		{"killed by SIGTERM", Options{Argv: []string{"bash", "-c", "kill -TERM $$"}}},
		{"killed by SIGKILL", Options{Argv: []string{"bash", "-c", "kill -KILL $$"}}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Shell = sh
			got := runChild(t, tt.o, viaSpawn)
			want := runChild(t, tt.o, viaExec)
			assert.Equal(t, want, got)
		})
	}
}

// TestSpawnWaitWithoutPidfd: before Linux 5.3 there is no pidfd, and wait
// reaps the shell with wait4 alone.
func TestSpawnWaitWithoutPidfd(t *testing.T) {
	o := Options{Shell: bash(t), Argv: []string{"bash", "-c", "sleep 0.05; exit 7"}}
	c, _, err := spawn(&o, nil, nil, nil)
	require.NoError(t, err)
	pc := c.(*pidfdChild)
	require.NotNil(t, pc.fd, "this kernel has pidfds; the other path is what the test is for")
	pc.fd.Close()
	pc.fd = nil
	ws, err := c.wait()
	require.NoError(t, err)
	assert.Equal(t, 7, ws.ExitStatus())
}

// TestSpawnLeavesNothing: no descriptor and no zombie outlives a run.
func TestSpawnLeavesNothing(t *testing.T) {
	sh := bash(t)
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(ents)
	}
	before := fds()
	for range 20 {
		o := Options{Shell: sh, Argv: []string{"bash", "-c", "exit 3"}}
		c, _, err := spawn(&o, nil, nil, nil)
		require.NoError(t, err)
		ws, err := c.wait()
		require.NoError(t, err)
		require.Equal(t, 3, ws.ExitStatus())
	}
	assert.Equal(t, before, fds(), "descriptors leaked")
	_, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
	assert.ErrorIs(t, err, syscall.ECHILD, "a child was left unreaped")
}

// TestSpawnErrors: a shell that cannot be started, or a directory that
// does not exist, fails with the error os/exec gives.
func TestSpawnErrors(t *testing.T) {
	sh := bash(t)
	for _, o := range []Options{
		{Shell: filepath.Join(t.TempDir(), "nope"), Argv: []string{"bash"}},
		{Shell: "/etc/passwd", Argv: []string{"bash"}},
		{Shell: sh, Argv: []string{"bash"}, Dir: filepath.Join(t.TempDir(), "gone")},
	} {
		_, _, got := spawn(&o, nil, nil, nil)
		_, want := viaExec(&o, nil)
		require.Error(t, got)
		require.Error(t, want)
		assert.Equal(t, want.Error(), got.Error())
	}
}
