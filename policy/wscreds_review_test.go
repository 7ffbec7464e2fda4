package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A listing's name tests are read as find reads them, and what it lists is
// what the command given the names may read: a directory whole (grep -r),
// the directory a link leads to; find's options before its starting points
// do not make it list the current directory. Each of these read a
// credential file unasked (xargs cat ran unconfined).
func TestListingNamesAsFindReadsThem(t *testing.T) {
	e := testEngine(t)
	home := t.TempDir()
	root := t.TempDir()
	ws := filepath.Join(root, "proj")
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	}
	write("proj/scripts/ci.sh", "set -e\n")
	write("proj/conf/.env", "TOKEN=canary\n")
	write("other/id_rsa", "KEY\n")
	require.NoError(t, os.Symlink("../conf", filepath.Join(ws, "scripts", "cfglink")))
	credentials := readsInputCredentials(t, e, ws, home)
	for _, c := range []string{
		// fnmatch's negation and classes (path.Match reads neither).
		"find . -name '.[!x]nv' -exec cat {} +",
		"find . -name '.[!x]nv' | xargs cat",
		"find . -name '.[[:alpha:]]nv' -exec cat {} +",
		"find . -iname '.[![:upper:]]NV' | xargs cat",
		// A listed directory is read whole by grep -r; so is a listed link's.
		"find . -name 'con*' -exec grep -r TOKEN {} +",
		"find . -name 'con*' | xargs grep -r TOKEN",
		"find . -name 'cfg*' -exec grep -r TOKEN {} +",
		// find -L ../other starts in ../other.
		"find -L ../other -name 'id_*' -exec cat {} +",
		"find -L ../other -name 'id_*' | xargs cat",
		"find -O3 -D stat ../other -name 'id_*' | xargs cat",
	} {
		assert.True(t, credentials(c), "may read conf/.env or ../other: %s", c)
	}
	for _, c := range []string{
		"find . -name '*.sh' -exec grep -l 'set -e' {} +",
		"find -L . -name '[!.]*.sh' | xargs grep -l 'set -e'",
		"find . -name '*.[ch]' -exec grep -n TODO {} +",
	} {
		assert.False(t, credentials(c), "cannot list conf/.env: %s", c)
	}
}

// find -exec's {} are what find lists, but the command's standard input is
// find's own: xargs run by -exec reads names from it, whatever the listing
// (echo conf/.env | find . -name ci.sh -exec xargs cat {} + printed it,
// unasked). find -files0-from takes its starting points from a file or its
// input, not from its words.
func TestFindExecInputIsNotTheListing(t *testing.T) {
	e := testEngine(t)
	home := t.TempDir()
	ws := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "scripts", "ci.sh"), []byte("set -e\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "list0"), []byte("/elsewhere\x00"), 0o644))
	credentials := readsInputCredentials(t, e, ws, home)
	for _, c := range []string{
		"echo conf/.env | find . -name ci.sh -exec xargs cat {} +",
		"find . -name ci.sh -exec xargs cat {} + < names.txt",
		"find . -name ci.sh -exec timeout 5 xargs cat \\;",
		"find . -name ci.sh -exec sh -c 'xargs cat' \\;",
		"find -files0-from list0 -name 'id_*' -exec cat {} +",
		"find -files0-from list0 -name 'id_*' | xargs cat",
		"find . -files0-from - -name 'id_*' | xargs cat",
	} {
		assert.True(t, credentials(c), "may read any file: %s", c)
	}
	for _, c := range []string{
		"find . -name '*.sh' -exec grep -l 'set -e' {} +",
		"find . -name '*.sh' | xargs grep -l 'set -e'",
		"find . -name '*.sh' -exec sh -c 'find . -name \"*.sh\" | xargs wc -l' \\;",
	} {
		assert.False(t, credentials(c), "the workspace holds no credentials: %s", c)
	}
}
