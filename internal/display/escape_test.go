package display

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var escapeCases = []struct {
	name, in, want string
}{
	{"plain", "ls -la /tmp", "ls -la /tmp"},
	{"empty", "", ""},
	{"clear screen", "echo \x1b[2J", `echo \x1b[2J`},
	{"colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
	{"carriage return overwrite", "rm -rf ~\rls", `rm -rf ~\rls`},
	{"newline and tab", "a\n\tb", `a\n\tb`},
	{"other C0 and DEL", "\x00\x07\x08\x0b\x0c\x1f\x7f", `\x00\a\b\v\f\x1f\x7f`},
	{"backslash", `a\nb\\`, `a\\nb\\\\`},
	{"C1 CSI rune", "\u009b2J", `\u009b2J`},
	{"NEL", "a\u0085b", `a\u0085b`},
	{"raw C1 byte is invalid UTF-8", "\x9b2J", `\x9b2J`},
	{"invalid UTF-8", "ok\xff\xfe\xc3", `ok\xff\xfe\xc3`},
	{"replacement rune itself", "\uFFFD", "\uFFFD"},
	{"bidi override", "curl x/\u202Ehs.exe", `curl x/\u202ehs.exe`},
	{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`},
	{"zero-width joiner in a command name", "r\u200Dm -rf /", `r\u200dm -rf /`},
	{"zero-width space", "git\u200B push", `git\u200b push`},
	{"LRM RLM", "\u200E\u200F", `\u200e\u200f`},
	{"word joiner and BOM", "\u2060\uFEFFls", `\u2060\ufeffls`},
	{"soft hyphen", "rm\u00AD", `rm\u00ad`},
	{"no-break space", "rm\u00A0-rf", `rm\u00a0-rf`},
	{"ideographic space", "a\u3000b", `a\u3000b`},
	{"line separator", "a\u2028b", `a\u2028b`},
	{"hangul filler", "ls\u3164", `ls\u3164`},
	{"combining grapheme joiner", "ls\u034F", `ls\u034f`},
	{"braille blank", "rm\u2800-rf", `rm\u2800-rf`},
	{"tag character", "a\U000E0041", `a\U000e0041`},
	{"private use", "\uE000", `\ue000`},
	{"unassigned", "\U000E0FFF", `\U000e0fff`},
	{"variation selector after a letter", "git\uFE0F", `git\ufe0f`},
	{"variation selector after ASCII symbol", "1\uFE0F", `1\ufe0f`},
	{"other variation selector", "\u2764\uFE01", "\u2764" + `\ufe01`},
	{"emoji presentation selector kept", "\u2764\uFE0F done", "\u2764\uFE0F done"},
	{"emoji", "git commit -m '🎉 release 👍🏽'", "git commit -m '🎉 release 👍🏽'"},
	{"emoji zwj sequence", "👨\u200D👩", `👨\u200d👩`},
	{"CJK", "echo 你好世界", "echo 你好世界"},
	{"accents and combining marks", "café e\u0301", "café e\u0301"},
	{"cyrillic", "cd /home/проект", "cd /home/проект"},
}

func TestEscape(t *testing.T) {
	t.Parallel()
	for _, tc := range escapeCases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Escape(tc.in))
			checkEscaped(t, tc.in, Escape(tc.in))
		})
	}
}

// checkEscaped asserts the properties Escape promises for any input.
func checkEscaped(t *testing.T, in, out string) {
	t.Helper()
	require.True(t, utf8.ValidString(out), "output is not valid UTF-8: %q", out)
	for i := 0; i < len(out); i++ {
		require.False(t, out[i] < 0x20 || out[i] == 0x7f, "control byte %#x in %q", out[i], out)
	}
	prev := rune(-1)
	for _, r := range out {
		require.True(t, unicode.IsPrint(r), "non-printing rune %U in %q", r, out)
		require.False(t, unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r), "invisible rune %U in %q", r, out)
		require.NotEqual(t, '\u2800', r, "braille blank in %q", out)
		if unicode.Is(unicode.Variation_Selector, r) {
			require.True(t, (r == '\uFE0E' || r == '\uFE0F') && prev >= 0x80 && unicode.Is(unicode.So, prev),
				"variation selector %U after %U in %q", r, prev, out)
		}
		prev = r
	}
	// Read back as a Go string literal, the output is the input: Escape is
	// injective, so no two commands can look the same.
	back, err := strconv.Unquote(`"` + strings.ReplaceAll(out, `"`, `\"`) + `"`)
	require.NoError(t, err, "output %q is not a Go literal body", out)
	require.Equal(t, in, back)
}

func FuzzEscape(f *testing.F) {
	for _, tc := range escapeCases {
		f.Add(tc.in)
	}
	f.Add("\"quoted\" \\\"")
	f.Fuzz(func(t *testing.T, s string) {
		checkEscaped(t, s, Escape(s))
	})
}
