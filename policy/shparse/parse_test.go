package shparse

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// TestParseRefusesDivergences: each class of text bash (or zsh) reads
// otherwise than the parser is refused with ErrReadsOtherwise, in the
// language where the difference lies; the policy corpora and the bash
// differential (policy/bashdiff_test.go) show the same through the whole
// analysis.
func TestParseRefusesDivergences(t *testing.T) {
	for _, c := range []struct {
		name, src string
		lang      syntax.LangVariant
	}{
		{"comment ending in a backslash", "ls # note \\\nrm -rf ~", syntax.LangBash},
		{"carriage return", "git status \\\r\nrm -rf ~", syntax.LangBash},
		{"NUL byte", "echo a\x00b", syntax.LangBash},
		{"continuation inside $(", "echo \"$\\\n(id)\"", syntax.LangBash},
		{"command substitution in an extended glob", "[[ a == @($(id)) ]]", syntax.LangBash},
		{"process substitution in a default word", "echo ${x:-<(id)}", syntax.LangBash},
		{"single quotes in a quoted default word", `echo "${x:-'$(id)'}"`, syntax.LangBash},
		{"here-document ending inside $(", "cat <<E\n$(\nE\nid\n)\nE\n", syntax.LangBash},
		{"coprocess of a simple command", "coproc rm -rf | cat", syntax.LangBash},
		{"zsh group in braces", "{id}", syntax.LangZsh},
		{"zsh trailing backslash", "echo a\\", syntax.LangZsh},
	} {
		_, err := Parse(c.src, c.lang)
		assert.ErrorIs(t, err, ErrReadsOtherwise, c.name)
	}
}

// TestParseAcceptsOrdinaryText: what bash reads as the parser does parses,
// comments kept.
func TestParseAcceptsOrdinaryText(t *testing.T) {
	for _, src := range []string{
		"ls -la # a comment",
		"echo \"$(date)\" 'a\\\nb'",
		"cat <<'E'\n$(\nE\n",
		"echo ${x:-'y'}",
		"git commit -m \\\n  msg",
		"coproc w { cat; }",
	} {
		f, err := Parse(src, syntax.LangBash)
		require.NoError(t, err, "%q", src)
		if strings.Contains(src, "#") {
			assert.NotEmpty(t, f.Stmts[0].Comments, "%q: comments kept", src)
		}
	}
}

// TestAsBash: for a comment that ends in a backslash, AsBash gives the text
// bash runs, in which the next line is a command of its own.
func TestAsBash(t *testing.T) {
	_, err := Parse("ls # note \\\nrm -rf ~", syntax.LangBash)
	require.ErrorIs(t, err, ErrReadsOtherwise)
	assert.Equal(t, "ls # note \nrm -rf ~", AsBash(err))

	_, err = Parse("echo a\x00b", syntax.LangBash)
	require.ErrorIs(t, err, ErrReadsOtherwise)
	assert.Empty(t, AsBash(err), "no text known for a NUL byte")
	assert.Empty(t, AsBash(errors.New("other")))
}

// TestParseTooDeep: Parse checks the nesting before the parser reads.
func TestParseTooDeep(t *testing.T) {
	_, err := Parse(strings.Repeat("(", MaxNesting), syntax.LangBash)
	assert.ErrorIs(t, err, ErrTooDeep)
}

// FuzzParse: Parse never panics; a text it refuses as read otherwise is one
// the parser reads, and what it accepts is within the nesting bound.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"ls # a \\\nb", "echo $\\\n(id)", "cat <<E\n$(\nE\n)\nE\n", "echo \"${x:-'$(id)'}\"",
		"a\r\nb", "coproc x { a; }", "[[ a == @($(b)) ]]", "echo ${x:-<(id)}",
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, src string, zsh bool) {
		lang := syntax.LangBash
		if zsh {
			lang = syntax.LangZsh
		}
		_, err := Parse(src, lang)
		switch {
		case err == nil:
			require.NoError(t, CheckNesting(src))
		case errors.Is(err, ErrReadsOtherwise):
			_, perr := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
			require.NoError(t, perr, "refused as read otherwise, yet the parser fails")
			_ = AsBash(err)
		}
	})
}
