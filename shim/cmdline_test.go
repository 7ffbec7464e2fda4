package shim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseCommandLine(t *testing.T) {
	cmd := func(c string) CommandLine { return CommandLine{Source: FromString, Command: c} }
	login := func(cl CommandLine) CommandLine { cl.Login = true; return cl }
	inter := func(cl CommandLine) CommandLine { cl.Interactive = true; return cl }
	invalid := func(p string) CommandLine { return CommandLine{Source: Invalid, Problem: p} }
	tests := []struct {
		argv string // split on "|"
		want CommandLine
	}{
		{"bash|-c|echo hi", cmd("echo hi")},
		{"bash|-c|echo $0 $1|name|arg", cmd("echo $0 $1")},
		{"bash|-lc|git status", login(cmd("git status"))},
		{"bash|-c|-l|git status", login(cmd("git status"))}, // Claude Code
		{"bash|-ec|false", cmd("false")},
		{"bash|-ilc|x", inter(login(cmd("x")))},
		{"bash|-c|-i|x", inter(cmd("x"))},
		{"bash|--login|-c|x", login(cmd("x"))},
		{"bash|--noprofile|--norc|-c|x", cmd("x")},
		{"bash|--rcfile|rc|-ic|x", CommandLine{Source: FromString, Command: "x", Interactive: true, RCFile: "rc"}},
		{"bash|--init-file|rc|-c|x", CommandLine{Source: FromString, Command: "x", RCFile: "rc"}},
		{"bash|--posix|-c|x", cmd("x")},
		{"-bash|-c|x", login(cmd("x"))},
		{"bash|-o|pipefail|-c|x", cmd("x")},
		{"bash|-c|-o|pipefail|x", cmd("x")},
		{"bash|+o|posix|-c|x", cmd("x")},
		{"bash|-O|extglob|-c|x", cmd("x")},
		{"bash|+O|extglob|-c|x", cmd("x")},
		{"bash|-oc|pipefail|x", cmd("x")},
		{"bash|-co|pipefail|x", cmd("x")},
		{"bash|-euxc|x", cmd("x")},
		{"bash|-c|--|x|y", cmd("x")},
		{"bash|-c|-|x", cmd("x")},
		{"bash|+c|x", cmd("x")},
		{"bash|-s|-c|x", cmd("x")},
		{"bash|-c|x|-e", cmd("x")}, // words after the string are $0 …
		{"bash|-c|", cmd("")},
		{"bash|script.sh|a|b", CommandLine{Source: FromFile, Script: "script.sh"}},
		{"bash|-e|script.sh", CommandLine{Source: FromFile, Script: "script.sh"}},
		{"bash|--|-c", CommandLine{Source: FromFile, Script: "-c"}},
		{"bash|-|-c|x", CommandLine{Source: FromFile, Script: "-c"}},
		{"bash", CommandLine{Source: FromStdin}},
		{"bash|-s|a|b", CommandLine{Source: FromStdin}},
		{"bash|-x", CommandLine{Source: FromStdin}},
		{"bash|-o", CommandLine{Source: FromStdin}},
		{"sh|-i", inter(CommandLine{Source: FromStdin})},
		{"bash|--version", CommandLine{Source: NoProgram}},
		{"bash|--help|-c|rm -rf /", CommandLine{Source: NoProgram}},
		{"bash|--posix|--version", CommandLine{Source: NoProgram}},
		{"bash|-c", invalid("-c: option requires an argument")},
		{"bash|-lc", invalid("-c: option requires an argument")},
		{"bash|-q|-c|x", invalid("-q: invalid option")},
		{"bash|+q|-c|x", invalid("+q: invalid option")},
		{"bash|--bogus|-c|x", invalid("--bogus: invalid option")},
		{"bash|--rcfile", invalid("rcfile: option requires an argument")},
		{"bash|-c|--version", invalid("--: invalid option")},
		{"bash|-x|--login|-c|x", invalid("--: invalid option")},
	}
	for _, tt := range tests {
		t.Run(tt.argv, func(t *testing.T) {
			got := ParseCommandLine(strings.Split(tt.argv, "|"))
			got.Set, got.Plain, got.Params, got.Posix = nil, false, nil, false // TestCommandLineOptions
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestCommandLineOptions checks what the exec shortcut and the interp
// engine read: the set options and whether the line is plain.
func TestCommandLineOptions(t *testing.T) {
	tests := []struct {
		argv  string // split on "|"
		set   string // joined with " "
		plain bool
	}{
		{"bash|-c|x", "", true},
		{"sh|-c|x", "", true},
		{"bash|-ec|x", "-errexit", true},
		{"bash|-euc|x|-x", "-errexit -nounset", true},
		{"bash|-o|pipefail|-c|x", "-pipefail", true},
		{"bash|-c|+x|x", "+xtrace", true},
		{"bash|--norc|--noprofile|-c|x", "", true},
		{"bash|-xc|x", "-xtrace", false},
		{"bash|-vc|x", "-verbose", false},
		{"bash|-nc|x", "-noexec", false},
		{"bash|-lc|x", "", false},
		{"-bash|-c|x", "", false},
		{"bash|-c|-l|x", "", false},
		{"bash|-ic|x", "", false},
		{"bash|--posix|-c|x", "", false},
		{"bash|-O|extglob|-c|x", "-O:extglob", false},
		{"bash|-o|posix|-c|x", "-posix", false},
		{"bash|-o|xtrace|-c|x", "-xtrace", false},
		{"bash|-a|-c|x", "-allexport", false},
		{"bash|script.sh", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.argv, func(t *testing.T) {
			cl := ParseCommandLine(strings.Split(tt.argv, "|"))
			assert.Equal(t, tt.set, strings.Join(cl.Set, " "))
			assert.Equal(t, tt.plain, cl.Plain)
		})
	}
}

func TestCommandLinePosix(t *testing.T) {
	for argv, want := range map[string]bool{
		"bash|-c|x": false, "bash|--posix|-c|x": true, "bash|-o|posix|-c|x": true,
		"bash|-o|posix|+o|posix|-c|x": false, "sh|-c|x": false,
	} {
		assert.Equal(t, want, ParseCommandLine(strings.Split(argv, "|")).Posix, argv)
	}
}

func TestCommandLineParams(t *testing.T) {
	tests := []struct{ argv, params string }{
		{"bash|-c|x", ""},
		{"bash|-c|x|name|a b|c", "name,a b,c"},
		{"bash|-c|-l|x|name", "name"},
		{"bash|script.sh|a|b", "a,b"},
		{"bash|-s|a|b", "a,b"},
		{"bash", ""},
	}
	for _, tt := range tests {
		cl := ParseCommandLine(strings.Split(tt.argv, "|"))
		assert.Equal(t, tt.params, strings.Join(cl.Params, ","), tt.argv)
	}
}

func TestParseCommandLineEmpty(t *testing.T) {
	assert.Equal(t, CommandLine{Source: FromStdin}, ParseCommandLine(nil))
}

// TestParseZshCommandLine reads zsh's command line: the forms agents use
// are understood, and any option that changes how zsh reads the program
// makes the line Invalid (judged as a program execgate cannot read).
func TestParseZshCommandLine(t *testing.T) {
	for _, tt := range []struct {
		argv    []string
		want    CommandLine
		invalid string
	}{
		{argv: []string{"zsh", "-c", "ls"}, want: CommandLine{Source: FromString, Command: "ls", Params: []string{}}},
		{argv: []string{"zsh", "-c", "-l", "ls", "n", "a"}, want: CommandLine{Source: FromString, Command: "ls", Login: true, Params: []string{"n", "a"}}},
		{argv: []string{"-zsh", "-c", "ls"}, want: CommandLine{Source: FromString, Command: "ls", Login: true, Params: []string{}}},
		{argv: []string{"zsh", "-lc", "ls"}, want: CommandLine{Source: FromString, Command: "ls", Login: true, Params: []string{}}},
		{argv: []string{"zsh", "-fec", "ls"}, want: CommandLine{Source: FromString, Command: "ls", Params: []string{}}},
		{argv: []string{"zsh", "script.zsh", "a"}, want: CommandLine{Source: FromFile, Script: "script.zsh", Params: []string{"a"}}},
		{argv: []string{"zsh", "-s", "a"}, want: CommandLine{Source: FromStdin, Params: []string{"a"}}},
		{argv: []string{"zsh", "+s", "f", "a"}, want: CommandLine{Source: FromFile, Script: "f", Params: []string{"a"}}},
		{argv: []string{"zsh", "-s", "+s", "f"}, want: CommandLine{Source: FromFile, Script: "f", Params: []string{}}},
		{argv: []string{"zsh", "+s", "-s", "a"}, want: CommandLine{Source: FromStdin, Params: []string{"a"}}},
		{argv: []string{"zsh", "-i"}, want: CommandLine{Source: FromStdin, Interactive: true}},
		{argv: []string{"zsh", "--", "-c"}, want: CommandLine{Source: FromFile, Script: "-c", Params: []string{}}},
		{argv: []string{"zsh", "--version"}, want: CommandLine{Source: NoProgram}},
		{argv: []string{"zsh", "-c"}, invalid: "-c: string expected"},
		{argv: []string{"zsh", "-o", "shwordsplit", "-c", "ls"}, invalid: "-o"},
		{argv: []string{"zsh", "+o", "nomatch", "-c", "ls"}, invalid: "+o"},
		{argv: []string{"zsh", "-y", "-c", "ls"}, invalid: "-y"},
		{argv: []string{"zsh", "--emulate", "sh", "-c", "ls"}, invalid: "--emulate"},
		{argv: []string{"zsh", "--shwordsplit", "-c", "ls"}, invalid: "--shwordsplit"},
		{argv: []string{"zsh", "+c", "ls"}, invalid: "+c"},
	} {
		got := ParseZshCommandLine(tt.argv)
		if tt.invalid != "" {
			assert.Equal(t, Invalid, got.Source, "%q", tt.argv)
			assert.Contains(t, got.Problem, tt.invalid, "%q", tt.argv)
			continue
		}
		if len(tt.want.Params) == 0 && len(got.Params) == 0 {
			got.Params, tt.want.Params = nil, nil
		}
		assert.Equal(t, tt.want, got, "%q", tt.argv)
	}
}
