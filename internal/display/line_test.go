package display

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestLine(t *testing.T) {
	cases := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain", "rm -rf ~", 0, "rm -rf ~"},
		{"lines joined", "a\nb\r\n  c\t", 0, "a b c"},
		{"escape kept whole at the cut", "ab\x1bcdef", 8, "ab…"},
		{"escape fits", "ab\x1b", 8, `ab\x1b`},
		{"exact fit", "abcdef", 6, "abcdef"},
		{"cut with room for the ellipsis", "abcdefgh", 6, "abc…"},
		{"multibyte never split", "ééééé", 7, "éé…"},
		{"bound below the ellipsis", "abcdef", 2, "…"},
		{"backslash shown doubled", `a\b`, 0, `a\\b`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Line(tc.in, tc.max))
		})
	}
}

func TestCutAndShorten(t *testing.T) {
	assert.Equal(t, "ab", Cut("abc", 2))
	assert.Equal(t, "", Cut("é", 1))
	assert.Equal(t, "", Cut("abc", -1))
	assert.Equal(t, "abc", Cut("abc", 3))
	assert.Equal(t, "a…", Shorten("abc", 1))
	assert.Equal(t, "abc", Shorten("abc", 3))
}

// FuzzLine checks Line's promises on any input: one line, no control
// character, within the bound, valid UTF-8, and the whole escaped text when
// it fits.
func FuzzLine(f *testing.F) {
	f.Add("rm -rf ~\n\x1b[2J", 10)
	f.Add(`\\\\\x`, 5)
	f.Add("ééé\u202e", 4)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 4096
		out := Line(s, max)
		if !utf8.ValidString(out) {
			t.Fatalf("Line(%q, %d) = %q: invalid UTF-8", s, max, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("Line(%q, %d) = %q: control character %U", s, max, out, r)
			}
		}
		if max > 0 && len(out) > max && out != Ellipsis {
			t.Fatalf("Line(%q, %d) = %q: %d bytes, over the bound", s, max, out, len(out))
		}
		full := Escape(strings.Join(strings.Fields(s), " "))
		if max <= 0 || len(full) <= max {
			if out != full {
				t.Fatalf("Line(%q, %d) = %q, want the whole %q", s, max, out, full)
			}
		} else if !strings.HasSuffix(out, Ellipsis) || !strings.HasPrefix(full, strings.TrimSuffix(out, Ellipsis)) {
			t.Fatalf("Line(%q, %d) = %q: not a prefix of %q with an ellipsis", s, max, out, full)
		}
	})
}

func FuzzCut(f *testing.F) {
	f.Add("ééé", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		out := Cut(s, n)
		if !strings.HasPrefix(s, out) || (n >= 0 && len(out) > n) {
			t.Fatalf("Cut(%q, %d) = %q", s, n, out)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("Cut(%q, %d) = %q splits a character", s, n, out)
		}
	})
}

func TestFlatten(t *testing.T) {
	assert.Equal(t, `a b \x`, Flatten("a\n b \\x", 0))
	assert.Equal(t, "ab…", Flatten("abcdef", 5))
	assert.Equal(t, "abcde", Flatten("abcde", 5))
}

func TestClip(t *testing.T) {
	assert.Equal(t, `a\nb`, Clip("a\nb", 0))
	assert.Equal(t, `a\n…`, Clip("a\nbcdef", 6))
	assert.Equal(t, `a…`, Clip("a\x1bbcdef", 6))
}
