package shim

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlainWord: the words bash passes on as written run directly; any
// word bash would expand, unquote or split goes to bash.
func TestPlainWord(t *testing.T) {
	for _, w := range []string{
		"ls", "-la", "--color=auto", "README.md", "src/main.go", "HEAD~1", "HEAD^", "a,b", "a:b", "x=y",
		"+x", "%1", "user@host", "ünïcode.md", "x~", "--", "-", "/usr/bin/git", "1.2.3",
	} {
		assert.True(t, plainWord(w), "%q is left alone by bash", w)
	}
	for _, w := range []string{
		"", "*.md", "?", "[a-c]*", "a]", "~", "~/x", "~root", "~+", "~-", "a=~/x", "a=x:~/y", "x:~/y",
		"--opt=~", "{a,b}", "a{b", "'a'", `"a"`, `a\b`, "$HOME", "a$", "`x`", "$(x)", "a b", "a\tb",
		"a\nb", "a;b", "a&b", "a|b", "a<b", "a>b", "(x)", "@(x)", "!x", "a!b", "#x", "a#b", "a\x00b",
		"a\rb", "a\x7fb", "a\x01b",
	} {
		assert.False(t, plainWord(w), "%q may change under bash", w)
	}
	cl := CommandLine{Source: FromString, Plain: true}
	_, ok := planDirect(cl, []string{"ls", "*.md"}, []string{"PATH=/usr/bin:/bin"}, "/")
	assert.False(t, ok, "a glob leaves the command to bash")
	_, ok = planDirect(cl, []string{"true", "~"}, []string{"PATH=/usr/bin:/bin"}, "/")
	assert.False(t, ok, "even a do-nothing builtin's words go to bash")
}

// TestPlainWordsAreLiteral is the property behind plainWord, checked on
// the real bash: every word it accepts, among many generated ones that mix
// plain bytes with every special one, bash passes on unchanged, in a
// directory where a glob would match and with a HOME a tilde would show.
func TestPlainWordsAreLiteral(t *testing.T) {
	bash := lookBash(t)
	rng := rand.New(rand.NewPCG(22, 1))
	var words []string
	for len(words) < 3000 {
		if w := randomWord(rng); plainWord(w) {
			words = append(words, w)
		}
	}
	for len(words) > 0 {
		n := min(len(words), 500)
		checkLiteral(t, bash, words[:n])
		words = words[n:]
	}
}

// FuzzPlainWord: a word plainWord accepts comes out of bash as it went in.
func FuzzPlainWord(f *testing.F) {
	for _, seed := range []string{"HEAD~1", "a=b", "x:y", "ü", "a,b", "%@+^", "~x", "a=~"} {
		f.Add(seed)
	}
	bash := lookBash(f)
	f.Fuzz(func(t *testing.T, w string) {
		if plainWord(w) {
			checkLiteral(t, bash, []string{w})
		}
	})
}

// checkLiteral runs `printf '%s\0' WORDS` under bash and requires each word
// back as written.
func checkLiteral(t *testing.T, bash string, words []string) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"a", "b.md", ".hidden", "x=y"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	cmd := exec.Command(bash, "-c", `printf '%s\0' `+strings.Join(words, " "))
	cmd.Dir = dir
	cmd.Env = []string{"HOME=/home-of-the-test", "PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "OLDPWD=/old", "PWD=" + dir}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i, w := range words {
		require.Less(t, i, len(got), "bash printed %d words for %d", len(got), len(words))
		require.Equal(t, w, got[i], "bash changed the word %q", w)
	}
	require.Len(t, got, len(words))
}

// randomWord mixes plain bytes with every byte bash may treat specially,
// and a few multibyte characters.
func randomWord(rng *rand.Rand) string {
	const plain = "abcXYZ019-_./,+%@=:^"
	const special = "~~~*?[]{}!#$'\"\\`;&|<>() \t\n\r\x01\x7f"
	multi := []string{"ü", "ï", "中", "\xff"}
	var b strings.Builder
	for range 1 + rng.IntN(8) {
		switch r := rng.IntN(20); {
		case r < 15:
			b.WriteByte(plain[rng.IntN(len(plain))])
		case r < 19:
			b.WriteByte(special[rng.IntN(len(special))])
		default:
			b.WriteString(multi[rng.IntN(len(multi))])
		}
	}
	return b.String()
}

func lookBash(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/bin/bash", "/usr/bin/bash"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("bash is not installed")
	return ""
}
