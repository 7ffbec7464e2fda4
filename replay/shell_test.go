package replay

import (
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/policy"
)

func TestFromArgv(t *testing.T) {
	for _, tc := range []struct {
		argv    []string
		text    string
		dialect policy.Dialect
	}{
		{[]string{"bash", "-lc", "git status"}, "git status", policy.DialectBash},
		{[]string{"/bin/bash", "-c", "ls | wc -l", "arg0"}, "ls | wc -l", policy.DialectBash},
		{[]string{"sh", "-c", "make"}, "make", policy.DialectBash},
		{[]string{"bash", "-e", "-o", "pipefail", "-c", "go test ./..."}, "go test ./...", policy.DialectBash},
		{[]string{"zsh", "-lc", "ls *(.)"}, "ls *(.)", policy.DialectZsh},
		{[]string{"/usr/bin/zsh", "-c", "print -l a"}, "print -l a", policy.DialectZsh},
		// Not a command string: the argv itself, as bash needs it written.
		{[]string{"ls", "-la"}, "ls -la", policy.DialectBash},
		{[]string{"git", "commit", "-m", "it's done; rm -rf ~"}, `git commit -m "it's done; rm -rf ~"`, policy.DialectBash},
		{[]string{"bash", "script.sh"}, "bash script.sh", policy.DialectBash},
		{[]string{"bash"}, "bash", policy.DialectBash},
		{[]string{"python3", "-c", "print(1)"}, "python3 -c 'print(1)'", policy.DialectBash},
	} {
		text, dialect, err := fromArgv(tc.argv)
		require.NoError(t, err, "%q", tc.argv)
		assert.Equal(t, tc.text, text, "%q", tc.argv)
		assert.Equal(t, tc.dialect, dialect, "%q", tc.argv)
	}
	_, _, err := fromArgv(nil)
	assert.Error(t, err)
	_, _, err = fromArgv([]string{"echo", "a\x00b"})
	assert.Error(t, err, "a NUL cannot reach a program")
}

// TestFromArgvAgainstBash: a plain argv, written as a command, is the
// same argv when bash reads it — the command judged is the one that ran.
func TestFromArgvAgainstBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	printf, err := exec.LookPath("printf")
	if err != nil {
		t.Skip("printf is not installed")
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab $'\"\\`!*?[]{}~#;&|<>()\n\t=%^-é✓")
	for i := 0; i < 200; i++ {
		argv := []string{printf, "%s\\0"}
		for w := r.IntN(4) + 1; w > 0; w-- {
			var b strings.Builder
			for n := r.IntN(8); n > 0; n-- {
				b.WriteRune(alphabet[r.IntN(len(alphabet))])
			}
			argv = append(argv, b.String())
		}
		text, _, err := fromArgv(argv)
		require.NoError(t, err)
		out, err := exec.Command(bash, "-c", text).Output()
		require.NoError(t, err, "%q → %q", argv, text)
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if len(argv) == 2 {
			got = nil
		}
		want := argv[2:]
		assert.Equal(t, want, got, "%q → %q", argv, text)
	}
}

func TestIsApplyPatch(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
	for _, tc := range []struct {
		argv    []string
		program string
		want    bool
	}{
		{[]string{"apply_patch", patch}, "", true},
		{[]string{"applypatch", patch}, "", true},
		{nil, "apply_patch <<'EOF'\n" + patch + "\nEOF", true},
		{nil, "apply_patch <<EOF\n" + patch + "\nEOF\n", true},
		{nil, "cd src && apply_patch <<'EOF'\n" + patch + "\nEOF", true},
		// Anything more is a shell program, which a shell runs.
		{nil, "apply_patch <<'EOF'\n" + patch + "\nEOF\nrm -rf ~", false},
		{nil, "rm -rf ~ && apply_patch <<'EOF'\n" + patch + "\nEOF", false},
		{nil, "cd src; apply_patch <<'EOF'\n" + patch + "\nEOF", false},
		{nil, "apply_patch < patch.txt", false},
		{nil, "apply_patch x <<'EOF'\n" + patch + "\nEOF", false},
		{nil, "X=1 apply_patch <<'EOF'\n" + patch + "\nEOF", false},
		{nil, "apply_patch <<'EOF' &\n" + patch + "\nEOF", false},
		{[]string{"apply_patch"}, "apply_patch", false},
		{[]string{"apply_patch", patch, "x"}, "", false},
		{nil, "git apply fix.patch", false},
	} {
		assert.Equal(t, tc.want, isApplyPatch(tc.argv, tc.program), "%q %q", tc.argv, tc.program)
	}
}
