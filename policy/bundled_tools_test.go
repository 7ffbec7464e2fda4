package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Claude Code's shell snapshot makes grep and find functions that run the
// ugrep and bfs it bundles (bundledTools): the payload `grep …` or
// `find …` runs those, and execgate's verdict must describe them. Each
// case is shown on the real tool first (Debian's ugrep and bfs; the test
// skips without them), then judged.

// lookTool finds a real tool or skips.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (apt-get install %s): the bundled tool's behaviour cannot be shown", name, name)
	}
	return p
}

// ugrep -S follows every link it meets with -r, as -R does: a link out of
// the workspace is read through.
func TestBundledUgrepFollowsLinks(t *testing.T) {
	ugrep := lookTool(t, "ugrep")
	w := newWorld(t)
	w.link("../../../.ssh", "vendor/keys")
	out, _ := exec.Command(ugrep, "-rS", "CANARY", w.ws).Output()
	require.Contains(t, string(out), "CANARY-KEY", "ugrep -rS reads through the link")
	out, _ = exec.Command(ugrep, "-r", "CANARY", w.ws).Output()
	require.NotContains(t, string(out), "CANARY-KEY", "ugrep -r does not")
	for _, cmd := range []string{"grep -rS CANARY .", "grep -r -S CANARY .", "grep -r --dereference CANARY ."} {
		w.requireNotSafe(cmd, "credentials")
	}
	w.requireSafe("grep -r CANARY .")
}

// ugrep's options that run programs or read a configuration: Claude Code's
// function hands most to the real grep, but execgate does not rely on
// that (an alias or another release may not).
func TestBundledUgrepOptionsThatRun(t *testing.T) {
	ugrep := lookTool(t, "ugrep")
	w := newWorld(t)
	// The pager runs (ugrep starts it when its output is a terminal;
	// --help shows it takes a command either way).
	out, _ := exec.Command(ugrep, "--help").CombinedOutput()
	for _, opt := range []string{"--filter=COMMANDS", "--pager[=COMMAND]", "--view[=COMMAND]", "--query", "--config[=FILE]", "--save-config"} {
		require.Contains(t, string(out), opt, "ugrep has %s", opt)
	}
	for _, c := range []string{
		"grep -Q x", "grep --query x .", "grep --filter='*:sh -c id' x .", "grep --pager=less x",
		"grep --view=vim x .", "grep --config x .", "grep ---.ugrep x .", "grep --save-config",
	} {
		w.requireNotSafe(c, "ugrep")
	}
}

// bfs -rm deletes what it finds, like -delete: `find . -rm` is an error to
// GNU find, and deletes the workspace under Claude Code's find.
func TestBundledBfsRm(t *testing.T) {
	bfs := lookTool(t, "bfs")
	w := newWorld(t)
	victim := filepath.Join(w.ws, "victim")
	w.write(filepath.Join(victim, "f"), "x")
	require.NoError(t, exec.Command(bfs, victim, "-rm").Run())
	_, err := os.Stat(victim)
	require.True(t, os.IsNotExist(err), "bfs -rm deleted it")
	res := w.analyze("find . -rm")
	require.Equal(t, Dangerous, res.Risk, "%v", res.Reasons)
	w.requireNotSafe("find ./build -rm", "deletes")
}
