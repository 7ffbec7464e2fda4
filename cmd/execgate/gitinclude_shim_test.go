package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/sandbox"
)

// TestConfinedGitReadsIncludedConfig: a ~/.gitconfig that includes other
// files (dotfiles, includeIf for work) and names a global ignore file —
// before, every confined git command stopped with "fatal: bad config
// line" or "fatal: cannot use … as an exclude file" where bash's ran,
// those files being outside what the sandbox let it read. What the
// repository's own configuration includes is not granted: a repository
// chooses that, and may name any file.
func TestConfinedGitReadsIncludedConfig(t *testing.T) {
	bash := realBash(t)
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("this machine cannot confine commands (%s)", st.Reason)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	e := newShimEnv(t, "")
	home := e.home()
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"),
		[]byte("[include]\n\tpath = ~/.gitconfig.local\n[includeIf \"gitdir:/nowhere/\"]\n\tpath = dotfiles/work.inc\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig.local"), []byte("[user]\n\temail = me@example.com\n[core]\n\texcludesFile = ~/.gitignore_global\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitignore_global"), []byte("*.log\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(home, "dotfiles"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, "dotfiles", "work.inc"), []byte("[user]\n\tname = Me\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, "secret.txt"), []byte("CANARY\n"), 0o600))
	git := exec.Command("git", "init", "-q", e.work)
	git.Env = e.env
	require.NoError(t, git.Run())
	for _, f := range []string{"debug.log", "notes.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(e.work, f), nil, 0o600))
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const prog = "git status --short; git config user.email; git config user.name"
	want := runOutcome(t, e.command(ctx, bash, "bash", "-c", prog), "")
	got := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", prog), "")
	require.Equal(t, want, got)
	assert.Equal(t, "?? notes.txt\nme@example.com\n", got.stdout, "the global ignore file applies; includeIf's user.name does not")
	assert.NotEmpty(t, lastDecision(t, e).Confined, "ran confined")

	// The repository's own include names a secret: not granted.
	require.NoError(t, os.WriteFile(filepath.Join(e.work, ".git", "config"),
		[]byte("[core]\n\tbare = false\n[include]\n\tpath = "+filepath.Join(home, "secret.txt")+"\n"), 0o600))
	got = runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "python3 -c \"print(open('"+filepath.Join(home, "secret.txt")+"').read())\""), "")
	assert.NotContains(t, got.stdout, "CANARY")
	assert.NotEqual(t, 0, got.status, "%+v", got)
}

// TestSigningCommitAsks: with commit.gpgSign in the user's configuration a
// commit needs the signing key and its agent, outside any sandbox. Before,
// it ran confined and failed ("gpg failed to sign the data"); now it asks
// (here nobody answers: refused, saying why), and an approval runs it
// with the key.
func TestSigningCommitAsks(t *testing.T) {
	realBash(t)
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("this machine cannot confine commands (%s)", st.Reason)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	e := newShimEnv(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(e.home(), ".gitconfig"),
		[]byte("[user]\n\tname = Me\n\temail = me@example.com\n[commit]\n\tgpgSign = true\n"), 0o600))
	git := exec.Command("git", "init", "-q", e.work)
	git.Env = e.env
	require.NoError(t, git.Run())
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "a.txt"), []byte("a\n"), 0o600))
	o := runOutcome(t, e.command(t.Context(), e.shim("bash"), "bash", "-c", "git add a.txt && git commit -qm first"), "")
	assert.Equal(t, 126, o.status, "%+v", o)
	assert.Contains(t, o.stderr, "signs with your key")
	assert.NotContains(t, o.stderr, "gpg failed")
}
