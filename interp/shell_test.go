package interp

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyFile copies src to dst with mode 0755.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// TestFindShell covers the configured path and the default list, with the
// running executable reachable under several disguises.
func TestFindShell(t *testing.T) {
	sh := bash(t)
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	link := filepath.Join(dir, "bash-symlink")
	require.NoError(t, os.Symlink(self, link))
	hard := filepath.Join(dir, "bash-hardlink")
	if os.Link(self, hard) != nil {
		hard = link // other file system: the symlink stands in
	}
	noexec := writeFile(t, dir, "noexec", "#!/bin/sh\n")
	missing := filepath.Join(dir, "missing")

	cases := []struct {
		name       string
		configured string
		candidates []string
		want       string
		err        string
	}{
		{name: "configured", configured: sh, want: sh},
		{name: "configured wins over defaults", configured: sh, candidates: []string{"/bin/sh"}, want: sh},
		{name: "configured self", configured: self, candidates: []string{sh}, err: "execgate itself"},
		{name: "configured symlink to self", configured: link, candidates: []string{sh}, err: "execgate itself"},
		{name: "configured hard link to self", configured: hard, candidates: []string{sh}, err: "execgate itself"},
		{name: "configured relative", configured: "bash", err: "must be absolute"},
		{name: "configured missing", configured: missing, candidates: []string{sh}, err: "no such file"},
		{name: "configured directory", configured: dir, err: "not a regular file"},
		{name: "configured not executable", configured: noexec, err: "not executable"},
		{name: "default skips self", candidates: []string{link, hard, self, missing, noexec, sh}, want: sh},
		{name: "default first usable", candidates: []string{missing, sh, "/bin/sh"}, want: sh},
		{name: "none usable", candidates: []string{missing, link, "relative"}, err: "no usable shell found"},
		{name: "no candidates", err: "no usable shell found"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findShell(tt.configured, tt.candidates, self)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				assert.NotContains(t, err.Error(), "\n")
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestFindShellDefault checks the real default list on this machine: some
// shell is found, and it is not the test binary.
func TestFindShellDefault(t *testing.T) {
	got, err := FindShell("")
	if err != nil {
		t.Skipf("no default shell here: %v", err)
	}
	assert.Contains(t, defaultShells(), got)
	self, err := os.Executable()
	require.NoError(t, err)
	a, err := os.Stat(got)
	require.NoError(t, err)
	b, err := os.Stat(self)
	require.NoError(t, err)
	assert.False(t, os.SameFile(a, b))
}

// TestFindShellCopy runs a copy of the test binary installed as "bash": it
// must refuse itself and a symlink to itself as its shell, and Run must
// refuse it too, while a real bash is accepted.
func TestFindShellCopy(t *testing.T) {
	sh := bash(t)
	if testing.Short() {
		t.Skip("copies the test binary")
	}
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	fake := filepath.Join(dir, "bash")
	copyFile(t, self, fake)
	link := filepath.Join(dir, "sh")
	require.NoError(t, os.Symlink(fake, link))
	for _, tt := range []struct{ configured, want string }{
		{fake, `findshell "" shell ` + fake + " is execgate itself"},
		{link, `findshell "" shell ` + link + " is execgate itself"},
		{sh, `findshell "` + sh + `" <nil>`},
	} {
		cmd := helper(t, "findshell", arg1Env+"="+tt.configured)
		cmd.Path = fake
		out, err := cmd.Output()
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.Len(t, lines, 2)
		assert.Equal(t, tt.want, lines[0])
		assert.Equal(t, "runself shell "+fake+" is execgate itself", lines[1])
	}
}
