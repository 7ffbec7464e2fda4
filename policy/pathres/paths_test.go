package pathres

import (
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNormalize(t *testing.T) {
	tilde := "/tmp/h"
	ctx := Context{Home: "/home/u", Cwd: "/home/u/proj"}
	for _, c := range []struct {
		in, want string
		ctx      Context
	}{
		{"~/.bashrc", "/home/u/.bashrc", ctx},
		{"~", "/home/u", ctx},
		{"~root/.bashrc", "/root/.bashrc", ctx},
		{"~bob/.ssh/id_rsa", OtherHome + "bob/.ssh/id_rsa", ctx},
		{"~+/x", "/home/u/proj/x", ctx},
		{"~-/x", "", ctx},
		{"../.profile", "/home/u/.profile", ctx},
		{"a//b/./c/..", "/home/u/proj/a/b", ctx},
		{"/proc/self/root/etc/passwd", "/etc/passwd", ctx},
		{"/proc/1/root/home/u/.bashrc", "/home/u/.bashrc", ctx},
		{"/proc/self/cwd/../.profile", "/home/u/.profile", ctx},
		{"/proc/thread-self/cwd/x", "/home/u/proj/x", ctx},
		{"/proc/1234/cwd/x", "", ctx},
		{"/proc/./self/root/etc/x", "/etc/x", ctx},
		{"/proc/self/root/../../etc", "/etc", ctx},
		{"x", "", Context{Home: "/home/u"}},
		{"~/.bashrc", "/tmp/h/.bashrc", Context{Home: "/home/u", TildeHome: &tilde, Cwd: "/w"}},
		{"~/.bashrc", "", Context{}},
	} {
		assert.Equal(t, c.want, Normalize(c.in, c.ctx), "%q in %+v", c.in, c.ctx)
	}
}

func TestHomeForm(t *testing.T) {
	for in, want := range map[string]string{
		"/home/u/.bashrc":         "~/.bashrc",
		"/home/bob/.ssh/id_rsa":   "~/.ssh/id_rsa",
		"/root/.profile":          "~/.profile",
		"/Users/alice/.zshrc":     "~/.zshrc",
		OtherHome + "bob/.bashrc": "~/.bashrc",
		"/etc/passwd":             "/etc/passwd",
		"/home/u":                 "~",
		"/homework/x":             "/homework/x",
	} {
		assert.Equal(t, want, HomeForm(in, "/home/u"), in)
	}
}

// FuzzNormalize checks the promises the path lists rely on: the
// result is "" (unknown) or absolute and clean, normalising it again
// changes nothing, a path without /proc links is only cleaned, and a
// relative path with no known directory is unknown.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"~/.bashrc", "~root/x", "~+/a", "~-", "../x", "/proc/self/cwd/../x", "/proc/1/root/etc", "a//b/../c", "/", "", "~/../../etc"} {
		f.Add(s, "/home/u", "/home/u/proj")
	}
	f.Fuzz(func(t *testing.T, p, home, cwd string) {
		if home != "" && !strings.HasPrefix(home, "/") || cwd != "" && !strings.HasPrefix(cwd, "/") {
			return // the analyzer only ever has absolute homes and directories
		}
		ctx := Context{Home: home, Cwd: cwd}
		got := Normalize(p, ctx)
		if got == "" {
			return
		}
		if !strings.HasPrefix(got, "/") || path.Clean(got) != got {
			t.Fatalf("Normalize(%q) = %q: not absolute and clean", p, got)
		}
		if again := Normalize(got, ctx); again != got {
			t.Fatalf("Normalize(%q) = %q, again %q", p, got, again)
		}
		if strings.HasPrefix(p, "/") && !strings.Contains(p, "/proc") && got != path.Clean(p) {
			t.Fatalf("Normalize(%q) = %q, want %q", p, got, path.Clean(p))
		}
		if cwd == "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
			t.Fatalf("relative %q with no directory resolved to %q", p, got)
		}
	})
}
