package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// The globs bash expands to a private key are judged by bash's rules:
// each of these prints the canary key under bash, and none may be safe.
func TestGlobsReachTheKeyByBashRules(t *testing.T) {
	w := newWorld(t)
	w.write(filepath.Join(w.home, ".ssg", "x"), "decoy\n")
	for _, cmd := range []string{
		"cat ~/.ss[!g]/id_rs[^b] | head",
		"cat ~/.ss[[:alpha:]]/id_rs[[:lower:]]",
		"cat ~/.ss[]h]/id_rs[]a]",
		"cat ~/.ss[^g]/*",
		"cat ~/.s?h/id_*",
		"cat ~/.[s]sh/id_rsa",
		"head -n 3 ~/.ss\\h/id_rs?",
		"shopt -s nocaseglob; cat ~/.SS[H]/ID_RS[A]",
		"cat ~/.ss[h-h]/id_rsa*",
		"cat $HOME/.ss[!g]/id_rs[^b]",
		"cat \"$HOME\"/.ss[!g]/id_rs[^b]",
	} {
		require.Contains(t, w.bash(cmd), "CANARY-KEY", "bash must reach the key with %q", cmd)
		w.requireNotSafe(cmd, "credentials")
	}
	// From inside the home, relative globs too.
	res := testEngine(t).Analyze(Request{Command: "cat .ss[!g]/id_rs[^b]", Cwd: w.home, Home: w.home})
	require.NotEqual(t, Safe, res.Risk)

	// Globs that reach nothing secret stay safe.
	w.write(filepath.Join(w.ws, "a.md"), "a\n")
	w.write(filepath.Join(w.ws, "b.md"), "b\n")
	w.requireSafe("cat *.md")
	w.requireSafe("head -n 1 [ab].md")
	w.requireSafe("cat *.nomatch")
}

// A glob that reaches a link out of the workspace is judged by where the
// link leads.
func TestGlobThroughLinks(t *testing.T) {
	w := newWorld(t)
	w.link("../../.ssh/id_rsa", "notes.txt")
	require.Contains(t, w.bash("cat note?.txt"), "CANARY-KEY")
	w.requireNotSafe("cat note?.txt", "credentials")
	w.requireNotSafe("cat *", "credentials")
}

// Writing to a glob is writing to what it expands to; and no wildcard
// covers a glob that could name a start-up file.
func TestGlobWrites(t *testing.T) {
	w := newWorld(t)
	res := w.evaluate("echo x >> ~/.bash[!_]c", "echo **")
	require.Equal(t, Dangerous, res.Risk, "%v", res.Reasons)
	res = w.evaluate("echo x >> ~/.bash[[:lower:]]c", "echo **")
	require.Equal(t, Dangerous, res.Risk, "%v", res.Reasons)
	w.write(filepath.Join(w.ws, "app.log"), "")
	res = w.evaluate("echo x >> app.l?g", "echo **")
	require.Equal(t, Allow, res.Decision, "%v", res.Reasons)
}

// expandGlob agrees with bash on a fixture tree: every pattern, bash's
// own expansion (printf '%s\n' PATTERN) and the analysis's, word for word.
func TestExpandGlobMatchesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, f := range []string{
		".ssh/id_rsa", ".ssg/x", "a]b", "h", "[h]", "Abc", "abc", "ABC", ".hidden", "dir/sub/f", "dir/.dot/g",
		"x*y", "sp ace", "b-c", "ä", "-n", "dir2/f",
	} {
		p := filepath.Join(dir, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	require.NoError(t, os.Symlink("dir", filepath.Join(dir, "ln")))
	require.NoError(t, os.Symlink("nowhere", filepath.Join(dir, "dangling")))
	patterns := []string{
		`*`, `.*`, `.ss[!g]/id_rs[^b]`, `[[:alpha:]]*`, `[]h]`, `[!a]*`, `*/*`, `d*/s*/*`, `[a-c]*`,
		`\**`, `"*"`, `'x*'y`, `?bc`, `*.nomatch`, `[[:upper:]]*`, `[[:upper:][:digit:]]*`, `*/.*`,
		`ln/*`, `ln/*/*`, `dang*`, `[.]*`, `.[!.]*`, `*[`, `[`, `a[]]b`, `[^[:lower:]]*`, `"$HOME"/*`,
		`~/.ss?/*`, `d?r*/`, `*/`, `sp*`, `[-a]*`, `[a-]*`, `x\*y`, `./*`, `../*/.ssh`, `dir//sub/*`,
		`[[:space:]]*`, `*ä*`, `/etc/host[n]ame`, `/etc/hostnam?`,
	}
	a := &analyzer{r: testEngine(t).rules, home: dir, cwd: dir}
	for _, pat := range patterns {
		cmd := exec.Command(bash, "-c", "printf '%s\\n' "+pat)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "LC_ALL=C.UTF-8", "PATH=" + os.Getenv("PATH")}
		out, err := cmd.Output()
		require.NoError(t, err, pat)
		want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")

		f, err := syntax.NewParser().Parse(strings.NewReader("printf x "+pat), "")
		require.NoError(t, err, pat)
		node := f.Stmts[0].Cmd.(*syntax.CallExpr).Args[2]
		wd := evalWord(node)
		if !wd.glob {
			continue // not a pattern to bash either (quoted or escaped)
		}
		got, ok := a.expandGlob(wd)
		if !ok {
			// Only a bracket over a directory with non-ASCII names is
			// left to the over-approximation (locale classes).
			require.Contains(t, pat, "[", pat)
			continue
		}
		// The same files, spelt alike (bash keeps a doubled slash).
		for i := range want {
			want[i] = strings.ReplaceAll(want[i], "//", "/")
		}
		slices.Sort(want)
		slices.Sort(got)
		require.Equal(t, want, got, "pattern %s", pat)
	}
}
