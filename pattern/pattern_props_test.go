package pattern

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkPatternProperties asserts what FuzzPattern must hold beyond not
// panicking, for a valid pattern and an argv:
//   - a pattern without wildcards matches its own words, exactly;
//   - the literal pattern built from argv (as "allow always" builds it)
//     matches argv exactly, and argv[:k] followed by ** matches argv;
//   - "PROGRAM **" matches PROGRAM with any arguments, and "**" and
//     "** LAST" match any argv (ending in LAST).
//
// A program written as a relative path (./git) is left out: by design it
// matches only wildcard-program patterns. So is invalid UTF-8, which a
// pattern cannot hold (the config is JSON) and the glob matcher reads as
// runes.
func checkPatternProperties(t *testing.T, pattern string, argv []string) {
	t.Helper()
	relative := func(w string) bool { return strings.Contains(w, "/") && !filepath.IsAbs(w) }
	match := func(p string, words []string) (bool, bool) {
		_, exact, ok := NewMatcher(entries(p), fakePath).Match(words)
		return ok, exact
	}
	if !utf8.ValidString(pattern) || !utf8.ValidString(strings.Join(argv, " ")) {
		return
	}
	own := strings.Fields(pattern)
	if !strings.ContainsAny(pattern, "*?[]{}\\") && !relative(own[0]) {
		if ok, exact := match(pattern, own); !ok || !exact {
			t.Fatalf("pattern %q does not match its own words exactly (ok %v, exact %v)", pattern, ok, exact)
		}
	}
	if len(argv) == 0 || strings.ContainsRune(strings.Join(argv, ""), wordSep) || relative(argv[0]) {
		return
	}
	if lit := Literal(argv); lit != "" {
		if ok, exact := match(lit, argv); !ok || !exact {
			t.Fatalf("literal pattern %q does not match its argv %q exactly (ok %v, exact %v)", lit, argv, ok, exact)
		}
		for k := range argv {
			if p := Prefix(argv, k); p != "" {
				if ok, _ := match(p, argv); !ok {
					t.Fatalf("prefix pattern %q does not match its argv %q", p, argv)
				}
			}
		}
	}
	if LiteralWord(argv[0]) {
		if ok, _ := match(argv[0]+" **", argv); !ok {
			t.Fatalf("%q does not match %q", argv[0]+" **", argv)
		}
	}
	if ok, _ := match("**", argv); !ok {
		t.Fatalf(`"**" does not match %q`, argv)
	}
	if last := argv[len(argv)-1]; LiteralWord(last) {
		if ok, _ := match("** "+last, argv); !ok {
			t.Fatalf("%q does not match %q", "** "+last, argv)
		}
	}
}

// TestLeadingDoubleStar: a pattern that starts with ** matches any run of
// words before the rest, including none. It used to match nothing, so a
// denylist entry "** --force" denied nothing.
func TestLeadingDoubleStar(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		argv    []string
		want    bool
	}{
		{"**", []string{"ls"}, true},
		{"**", []string{"git", "push", "--force"}, true},
		{"** --force", []string{"git", "push", "--force"}, true},
		{"** --force", []string{"--force"}, true},
		{"** --force", []string{"git", "push"}, false},
		{"** ** --force", []string{"git", "--force"}, true},
		{"git ** --force", []string{"git", "--force"}, true},
	} {
		_, _, ok := NewMatcher(entries(tc.pattern), fakePath).Match(tc.argv)
		if ok != tc.want {
			t.Errorf("%q on %q: match %v, want %v", tc.pattern, tc.argv, ok, tc.want)
		}
	}
}
