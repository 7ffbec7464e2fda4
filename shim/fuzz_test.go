package shim

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseCommandLine: any argv (words separated by NUL) parses without
// panicking, and the program source it names is one of the words.
func FuzzParseCommandLine(f *testing.F) {
	for _, s := range []string{"bash\x00-c\x00true", "bash\x00-lc", "-bash\x00-o", "sh\x00--rcfile", "bash\x00-c\x00x\x00n\x00a", "bash\x00-s\x00a", "bash\x00--\x00-c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Split(s, "\x00")
		cl := ParseCommandLine(argv)
		switch cl.Source {
		case FromString:
			if !slices.Contains(argv, cl.Command) {
				t.Fatalf("command %q is not a word of %q", cl.Command, argv)
			}
		case FromFile:
			if !slices.Contains(argv, cl.Script) {
				t.Fatalf("script %q is not a word of %q", cl.Script, argv)
			}
		}
		_, _ = planDirect(cl, argv, nil, "/")
	})
}
