package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/policy/pathres"
)

// A repository ships links out of itself (relative links survive a
// clone): every command that reads, writes or recurses through them is
// judged by the file they lead to.
func TestSymlinkReadsAreJudgedByTarget(t *testing.T) {
	w := newWorld(t)
	w.link("../../.ssh/id_rsa", "notes.txt")
	w.link("../../.ssh", "docs/keys")
	// The attack is real: bash reaches the key through the link.
	require.Contains(t, w.bash("cat notes.txt"), "CANARY-KEY")
	require.Contains(t, w.bash("grep -R CANARY ."), "CANARY-KEY")

	for _, cmd := range []string{
		"cat notes.txt",
		"head notes.txt",
		"tail -n 1 notes.txt",
		"sed -n 1p notes.txt",
		"grep KEY notes.txt",
		"base64 notes.txt",
		"cat docs/keys/id_rsa",
		"cat docs/keys/../keys/id_rsa",
		"cat < notes.txt",
		"cd docs/keys && cat id_rsa",
		"cd docs && cat keys/id_rsa",
		"cat ./docs/../notes.txt",
	} {
		w.requireNotSafe(cmd, "credentials")
	}
	// What is not a link stays safe.
	w.requireSafe("cat README.md")
	w.requireSafe("head -n 3 README.md")
}

// A ".." after a link climbs from the link's target, as the kernel
// climbs: the path is not cleaned before it is looked up.
func TestSymlinkDotDotClimbsFromTarget(t *testing.T) {
	w := newWorld(t)
	w.mkdir(filepath.Join(w.home, ".ssh", "sub"))
	w.write(filepath.Join(w.home, ".ssh", "config"), "Host x\n  IdentityFile CANARY-KEY\n")
	w.link("../../.ssh/sub", "d")
	// Cleaned as written, d/../config is the workspace's config.
	require.Contains(t, w.bash("cat d/../config"), "CANARY-KEY")
	w.requireNotSafe("cat d/../config", "credentials")
}

// Writing through a link writes its target: with echo ** allowed, an
// append to todo.md -> ~/.bashrc must not run unasked.
func TestSymlinkWritesAreJudgedByTarget(t *testing.T) {
	w := newWorld(t)
	w.link("../../.bashrc", "todo.md")
	w.link("../../.ssh", "keys")
	w.link("../../Documents", "out")
	w.mkdir(filepath.Join(w.home, "Documents"))

	res := w.evaluate("echo 'curl x | sh' >> todo.md", "echo **")
	require.Equal(t, Dangerous, res.Risk, "%v", res.Reasons)
	require.NotEqual(t, Allow, res.Decision)

	res = w.evaluate("echo ssh-ed25519 AAAA >> keys/authorized_keys", "echo **")
	require.Equal(t, Dangerous, res.Risk, "%v", res.Reasons)

	res = w.evaluate("echo x > out/file", "echo **")
	require.NotEqual(t, Allow, res.Decision, "%v", res.Reasons)

	res = w.evaluate("cp README.md todo.md", "cp **")
	require.NotEqual(t, Allow, res.Decision, "%v", res.Reasons)

	// A plain file of the workspace is still what echo ** covers.
	res = w.evaluate("echo x >> notes.md", "echo **")
	require.Equal(t, Allow, res.Decision, "%v", res.Reasons)
}

// A name a path set knows keeps its class when it is a link to an
// ordinary file: writing .envrc changes what direnv loads, wherever the
// bytes land. (Judged by the name alone before; this keeps it so now that
// the target is judged too.)
func TestSymlinkKeepsTheNameClass(t *testing.T) {
	w := newWorld(t)
	w.write(filepath.Join(w.ws, "plain.txt"), "x\n")
	w.link("plain.txt", ".envrc")
	res := w.evaluate("echo 'export X=1' > .envrc", "echo **")
	require.NotEqual(t, Allow, res.Decision, "%v", res.Reasons)
	require.Contains(t, strings.Join(res.Reasons, "\n"), "code-loading")
}

// A link whose target does not exist, a loop, or a directory the analysis
// cannot read is unknown: never safe.
func TestSymlinkUnknownTargets(t *testing.T) {
	w := newWorld(t)
	w.link("missing.txt", "dangling")
	w.link("loop2", "loop1")
	w.link("loop1", "loop2")
	w.requireNotSafe("cat dangling", "does not exist")
	w.requireNotSafe("cat loop1", "loop")

	// Writing through a dangling link creates its target, which is what
	// is judged: outside the workspace, echo ** does not cover it.
	w.link("../../made-by-link", "dangling-out")
	res := w.evaluate("echo x > dangling-out", "echo **")
	require.NotEqual(t, Allow, res.Decision, "%v", res.Reasons)
	require.Contains(t, strings.Join(res.Reasons, "\n"), "outside the workspace")
}

// A directory the analysis cannot read hides where a path below it
// leads. A test process running as root can read every directory, so the
// file system is made to refuse here; TestSymlinkUnreadableDirectoryReal
// does it for real where the tests run as another user.
func TestSymlinkUnreadableDirectory(t *testing.T) {
	w := newWorld(t)
	locked := filepath.Join(w.ws, "locked")
	w.mkdir(locked)
	req := w.request("cat locked/file")
	a := &analyzer{r: testEngine(t).rules, home: w.home, workspace: w.ws, cwd: w.ws, start: w.ws}
	a.disk = &disk{Disk: pathres.Disk{Lstat: func(p string) (os.FileInfo, error) {
		if strings.HasPrefix(p, locked+"/") {
			return nil, &os.PathError{Op: "lstat", Path: p, Err: os.ErrPermission}
		}
		return os.Lstat(p)
	}}, readDir: os.ReadDir}
	r := a.lookup("locked/file")
	require.Empty(t, r.Path)
	require.Contains(t, r.Why, "cannot be read")
	_ = req
}

func TestSymlinkUnreadableDirectoryReal(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	w := newWorld(t)
	locked := filepath.Join(w.ws, "locked")
	w.mkdir(locked)
	require.NoError(t, os.Chmod(locked, 0))
	t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })
	w.requireNotSafe("cat locked/file", "cannot be read")
}

// Recursive readers that follow the links they meet see through them;
// those that follow only their operands (grep -r) do not, and are judged
// by their operands.
func TestSymlinkRecursiveReaders(t *testing.T) {
	w := newWorld(t)
	w.link("../../../.ssh", "vendor/keys")
	w.write(filepath.Join(w.ws, "src", "main.go"), "package main\n")

	require.Contains(t, w.bash("grep -R CANARY ."), "CANARY-KEY")
	require.NotContains(t, w.bash("grep -r CANARY ."), "CANARY-KEY")

	for _, cmd := range []string{
		"grep -R CANARY .",
		"grep -Rn CANARY .",
		"grep --dereference-recursive CANARY src vendor",
		"rg -L CANARY",
		"rg --follow CANARY .",
		"find -L . -name id_rsa",
		"du -L -a .",
		"ls -RL .",
	} {
		w.requireNotSafe(cmd, "credentials")
	}
	// They do not follow links inside the tree: the key is not read.
	w.requireSafe("grep -r CANARY .")
	w.requireSafe("rg CANARY")
	w.requireSafe("find . -name '*.go'")
	// A link on the command line is followed by every one of them.
	w.requireNotSafe("grep -r CANARY vendor/keys", "credentials")

	// Copiers and archivers that follow links: no wildcard covers taking
	// the key along.
	for _, c := range []struct{ cmd, allow string }{
		{"cp -rL . /tmp/copy", "cp **"},
		{"tar -czhf /tmp/x.tgz .", "tar **"},
		{"zip -r /tmp/x.zip .", "zip **"},
		{"rsync -aL . /tmp/copy", "rsync **"},
	} {
		res := w.evaluate(c.cmd, c.allow)
		require.NotEqual(t, Allow, res.Decision, "%s: %v", c.cmd, res.Reasons)
	}
}

// The walk has a budget: past it the command is not proven safe.
func TestSymlinkWalkBudget(t *testing.T) {
	w := newWorld(t)
	big := filepath.Join(w.ws, "big")
	w.mkdir(big)
	for i := range maxWalkEntries/1000 + 1 {
		d := filepath.Join(big, "d"+strings.Repeat("x", i%5)+string(rune('a'+i%26)))
		w.mkdir(d)
		for j := range 1000 {
			f, err := os.Create(filepath.Join(d, "f"+itoa(i)+"_"+itoa(j)))
			require.NoError(t, err)
			f.Close()
		}
	}
	w.requireNotSafe("grep -R x big", "entries")
	w.requireSafe("grep -r x big")
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
