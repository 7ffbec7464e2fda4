package gitconfig

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

// TestParse pins the syntax cases git's config.c reads in its own way.
func TestParse(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // NAME=VALUE, or NAME alone for no value
		line      []int
	}{
		{"sections and case", "[Core]\n\tPager = less\n", []string{"core.pager=less"}, []int{2}},
		{"subsection case kept", "[diff \"TC\"]\n TextConv = x\n", []string{"diff.TC.textconv=x"}, nil},
		{"old subsection syntax lower-cased", "[diff.TC]\ntextconv=x\n", []string{"diff.tc.textconv=x"}, nil},
		{"quotes and escapes", "[a]\nb = \"x ; y\" \\\"q\\\" \\t\\n\\\\ # c\n", []string{"a.b=x ; y \"q\" \t\n\\"}, nil},
		{"continuation", "[a]\nb = one \\\n  two\nc = 3\n", []string{"a.b=one   two", "a.c=3"}, []int{2, 4}},
		{"no value is true", "[a]\nb\nc=\n", []string{"a.b", "a.c="}, nil},
		{"CRLF", "[a]\r\nb = x\r\n", []string{"a.b=x"}, nil},
		{"BOM", "\xef\xbb\xbf[a]\nb = x\n", []string{"a.b=x"}, nil},
		{"comments", "# x\n; y\n[a] ; z\n  b = 1 ; w\n", []string{"a.b=1"}, []int{4}},
		{"variable on the header line", "[a] b = 1\n", []string{"a.b=1"}, nil},
		{"trailing spaces dropped, inner kept", "[a]\nb =  x   y  \n", []string{"a.b=x   y"}, nil},
		{"quoted trailing spaces kept", "[a]\nb = \"x  \"\n", []string{"a.b=x  "}, nil},
		{"no newline at end", "[a]\nb = x", []string{"a.b=x"}, nil},
		{"escaped quote in subsection", "[a \"x\\\"y\"]\nb=1\n", []string{"a.x\"y.b=1"}, nil},
		{"dotted section with subsection", "[a.b \"C\"]\nk=1\n", []string{"a.b.C.k=1"}, nil},
		{"variable before any section", "k = 1\n", []string{"k=1"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, err := Parse([]byte(tc.src), "f")
			require.NoError(t, err)
			var got []string
			var lines []int
			for _, e := range es {
				if e.NoValue {
					got = append(got, e.Name)
				} else {
					got = append(got, e.Name+"="+e.Value)
				}
				lines = append(lines, e.Line)
			}
			assert.Equal(t, tc.want, got)
			if tc.line != nil {
				assert.Equal(t, tc.line, lines)
			}
		})
	}
}

// TestParseRefuses: what git refuses to read, the parser refuses too.
func TestParseRefuses(t *testing.T) {
	for _, src := range []string{
		"[a\nb=1\n", "[a \"x]\n", "[a x]\n", "[]\n", "[a]\nb = \"x\n", "[a]\nb = \\q\n",
		"[a]\n1b = x\n", "[a]\nb c = x\n", "[a]\nb = x\x00y\n", "\xef\xbb[a]\n", "[a_b]\n",
		"[a \"x\"] b]\n", "[a]\n-b = 1\n",
	} {
		_, err := Parse([]byte(src), "f")
		assert.ErrorIs(t, err, ErrSyntax, "%q", src)
	}
}

// gitList runs the real git's own reader over src and returns what it
// lists (NAME=VALUE, NAME alone for no value), or ok false when git
// refuses the file.
func gitList(t *testing.T, src []byte) ([]string, bool) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(f, src, 0o644))
	cmd := exec.Command("git", "config", "--file", f, "--list", "-z")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	var got []string
	for _, item := range bytes.Split(out, []byte{0}) {
		if len(item) == 0 {
			continue
		}
		name, value, hasValue := bytes.Cut(item, []byte("\n"))
		if hasValue {
			got = append(got, string(name)+"="+string(value))
		} else {
			got = append(got, string(name))
		}
	}
	return got, true
}

func render(es []Entry) []string {
	var got []string
	for _, e := range es {
		if e.NoValue {
			got = append(got, e.Name)
		} else {
			got = append(got, e.Name+"="+e.Value)
		}
	}
	return got
}

// configPieces are fragments the generated files are made of: every
// syntax config.c treats specially.
var configPieces = []string{
	"[core]", "[Core]", "[diff \"X\"]", "[diff \"x y\"]", "[a.B]", "[a \"q\\\"r\"]", "[a \"s\\\\t\"]", "[ a ]", "[a  \"b\"]",
	"pager", "Pager", "fsMonitor", "textconv", "k-1", "x9",
	" = ", "=", " ", "\t", "\n", "\r\n", "\r", "\\\n", "\"", "\\\"", "\\t", "\\n", "\\b", "\\\\", "\\x",
	"#", ";", "less -R", "!sh -c 'x'", "a;b", "a#b", "\"a;b\"", "\xef\xbb\xbf", "\x00", "[", "]", ".", "\\",
}

// TestParseAgainstGit: for generated files mixing every special syntax,
// the parser lists exactly what git lists, and refuses exactly what git
// refuses. A file git reads that the parser refused would only be a false
// alarm, but none should exist.
func TestParseAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	r := rand.New(rand.NewPCG(22, 4))
	n := 400
	if testing.Short() {
		n = 60
	}
	inputs := [][]byte{
		[]byte("[core]\n\tfsmonitor = x\n[diff \"tc\"]\n\ttextconv = \"cat\" ; c\n"),
		[]byte("[alias]\n\tst = \"!f() { echo \\\"$1\\\"; }; f\"\n"),
	}
	headers := configPieces[:9]
	names := configPieces[9:15]
	values := configPieces[15:]
	for i := range n {
		var b bytes.Buffer
		if i%2 == 0 {
			// Free mixtures: mostly refused, finding where the two
			// readers draw the line.
			for range 1 + r.IntN(12) {
				b.WriteString(configPieces[r.IntN(len(configPieces))])
			}
		} else {
			// Lines of the right shape with odd values.
			for range 1 + r.IntN(4) {
				b.WriteString(headers[r.IntN(len(headers))] + "\n")
				for range r.IntN(4) {
					b.WriteString(names[r.IntN(len(names))] + " = ")
					for range r.IntN(5) {
						b.WriteString(values[r.IntN(len(values))])
					}
					b.WriteString("\n")
				}
			}
		}
		inputs = append(inputs, b.Bytes())
	}
	agreeOK, agreeErr := 0, 0
	for _, src := range inputs {
		want, gitOK := gitList(t, src)
		got, err := Parse(src, "f")
		switch {
		case gitOK && err == nil:
			assert.Equal(t, want, render(got), "%q", src)
			agreeOK++
		case !gitOK && err != nil:
			agreeErr++
		case gitOK && bytes.IndexByte(src, 0) >= 0:
			// git cuts a value at a NUL; the parser refuses the
			// file, which can only ask about it.
			agreeErr++
		case gitOK:
			t.Errorf("%q: git reads %q, the parser refuses: %v", src, want, err)
		default:
			t.Errorf("%q: git refuses, the parser reads %q", src, render(got))
		}
	}
	t.Logf("%d files read alike, %d refused alike", agreeOK, agreeErr)
	assert.Greater(t, agreeOK, len(inputs)/10)
	assert.Greater(t, agreeErr, len(inputs)/10)
}

// FuzzParse: any input parses or fails without a panic, and what it
// yields is what git compares: lower-case section and key names, lines
// inside the input.
func FuzzParse(f *testing.F) {
	for _, p := range configPieces {
		f.Add([]byte("[a]\nb = " + p + "\n"))
	}
	f.Add([]byte("[include]\n\tpath = x\n[includeIf \"gitdir:~/\"]\n\tpath = y\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		es, err := Parse(src, "f")
		if err != nil {
			require.ErrorIs(t, err, ErrSyntax)
			return
		}
		lines := bytes.Count(src, []byte("\n")) + 1
		for _, e := range es {
			require.Equal(t, strings.ToLower(e.Section()), e.Section())
			require.Equal(t, strings.ToLower(e.Key()), e.Key())
			require.True(t, e.Line >= 1 && e.Line <= lines, "line %d of %d", e.Line, lines)
		}
	})
}
