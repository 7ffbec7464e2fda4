package shim

import (
	"strings"
)

// Source says where the program bash would run comes from.
type Source int

// Source values.
const (
	// FromString is `-c STRING`.
	FromString Source = iota
	// FromFile is a script file operand.
	FromFile
	// FromStdin is a program read from standard input: no -c and no file,
	// or -s.
	FromStdin
	// NoProgram means bash prints something and exits without running
	// anything: --help, --version.
	NoProgram
	// Invalid means bash refuses the command line (an unknown option, a
	// missing option value). The shim cannot be sure of that, so it treats
	// the program as unknown rather than trust its own reading.
	Invalid
)

// CommandLine is what the shim needs to know of bash's command line. Bash is
// always given the original argv; this only says what program to inspect.
type CommandLine struct {
	Source Source
	// Command is the -c string.
	Command string
	// Script is the script file operand.
	Script string
	// Login is set by -l, --login or an argv[0] starting with '-'.
	Login bool
	// Interactive is set by -i.
	Interactive bool
	// RCFile is the --rcfile or --init-file value, read by interactive
	// shells instead of ~/.bashrc.
	RCFile string
	// Problem says why the command line is Invalid, as bash would.
	Problem string
	// Set lists the `set -o` options turned on or off, by long name and in
	// order, "-errexit" or "+xtrace"; shopt -O/+O options as "-O:name".
	Set []string
	// Posix is set by --posix or -o posix (an argv[0] of sh is the
	// caller's to check).
	Posix bool
	// Params are the words after the command string or script operand
	// (with -c the first of them is $0), or after the options when the
	// program comes from stdin: bash's positional parameters.
	Params []string
	// Plain is set when nothing on the command line but -c and options
	// that cannot change how one simple command runs (see plainOption):
	// bash would run a lone simple command exactly as execve would.
	Plain bool
}

// The option tables below are switches, not maps: a package-level map is
// built at start-up, and the shim is a new process for every command.

// setFlag returns the long name of a single-letter `set` flag; ok is
// false for any other letter.
func setFlag(c rune) (name string, ok bool) {
	switch c {
	case 'a':
		return "allexport", true
	case 'b':
		return "notify", true
	case 'e':
		return "errexit", true
	case 'f':
		return "noglob", true
	case 'h':
		return "hashall", true
	case 'k':
		return "keyword", true
	case 'm':
		return "monitor", true
	case 'n':
		return "noexec", true
	case 'p':
		return "privileged", true
	case 't':
		return "onecmd", true
	case 'u':
		return "nounset", true
	case 'v':
		return "verbose", true
	case 'x':
		return "xtrace", true
	case 'B':
		return "braceexpand", true
	case 'C':
		return "noclobber", true
	case 'E':
		return "errtrace", true
	case 'H':
		return "histexpand", true
	case 'P':
		return "physical", true
	case 'T':
		return "functrace", true
	}
	return "", false
}

// plainOption reports whether the setting leaves a lone literal command's
// run unchanged: no trace output, no noexec, no profile or rc file.
func plainOption(o string) bool {
	switch o {
	case "-errexit", "+errexit", "-nounset", "+nounset",
		"-pipefail", "+pipefail", "-hashall", "+hashall",
		"-braceexpand", "+braceexpand", "-noglob", "+noglob",
		"-physical", "+physical", "-noclobber", "+noclobber",
		"+xtrace", "+verbose", "+noexec":
		return true
	}
	return false
}

// longOption reports whether name is one of bash's GNU-style options and
// whether it takes an argument. Bash accepts them only before the
// single-letter options.
func longOption(name string) (takesValue, ok bool) {
	switch name {
	case "debug", "debugger", "dump-po-strings", "dump-strings",
		"help", "login", "noediting",
		"noprofile", "norc", "posix", "pretty-print",
		"protected", "restricted", "verbose",
		"version", "wordexp":
		return false, true
	case "init-file", "rcfile":
		return true, true
	}
	return false, false
}

// shortFlags are the single-letter options that take no argument: the `set`
// flags plus those valid only at invocation (i, l, r, s, D; c is handled
// apart).
const shortFlags = "abefhkmnptuvxBCEHPTilrsD"

// ParseCommandLine reads bash's command line as bash does (shell.c in bash
// 5.2): GNU long options first, then single-letter option words starting with
// '-' or '+' until "-", "--" or the first other word; -o and -O take the next
// word; -c makes the first word after the options the command string and the
// words after it $0, $1 …; otherwise the first word is a script file unless
// -s was given, and without one the program comes from stdin. argv[0] is the
// name the shell was invoked under.
func ParseCommandLine(argv []string) CommandLine {
	var cl CommandLine
	if len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
		cl.Login = true
	}
	i := 1
	help := false
	plain := !cl.Login
	for ; i < len(argv); i++ {
		a := argv[i]
		if len(a) < 3 || !strings.HasPrefix(a, "--") {
			break // "--" itself ends options in the single-letter pass
		}
		name := a[2:]
		takesValue, ok := longOption(name)
		if !ok {
			return CommandLine{Source: Invalid, Problem: a + ": invalid option"}
		}
		switch name {
		case "help", "version":
			help = true
		case "login":
			cl.Login = true
		case "posix":
			cl.Posix = true
		}
		if name != "norc" && name != "noprofile" {
			plain = false
		}
		if takesValue {
			if i+1 >= len(argv) {
				return CommandLine{Source: Invalid, Problem: name + ": option requires an argument"}
			}
			i++
			cl.RCFile = argv[i]
		}
	}
	if help {
		// Bash acts on these once the long options are read, before
		// anything else on the line.
		return CommandLine{Source: NoProgram}
	}

	command, stdin := false, false
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "" || (a[0] != '-' && a[0] != '+') {
			break
		}
		if a == "-" || a == "--" {
			i++
			break
		}
		sign := string(a[0])
		for _, c := range a[1:] {
			switch {
			case c == 'c':
				command = true
			case c == 'o' || c == 'O':
				// The value is the next word; bash lists the options
				// when there is none and goes on.
				if i+1 < len(argv) {
					i++
					opt := sign + argv[i]
					if c == 'O' {
						opt = sign + "O:" + argv[i]
					}
					cl.Set = append(cl.Set, opt)
					if c == 'o' && argv[i] == "posix" {
						cl.Posix = sign == "-"
					}
				} else {
					plain = false
				}
			case strings.ContainsRune(shortFlags, c):
				if name, ok := setFlag(c); ok {
					cl.Set = append(cl.Set, sign+name)
				} else {
					plain = false // i, l, r, s, D
				}
				switch c {
				case 'l':
					cl.Login = true
				case 'i':
					cl.Interactive = true
				case 's':
					stdin = true
				}
			default:
				return CommandLine{Source: Invalid, Problem: string(a[0]) + string(c) + ": invalid option"}
			}
		}
	}

	switch {
	case command:
		if i >= len(argv) {
			return CommandLine{Source: Invalid, Problem: "-c: option requires an argument"}
		}
		cl.Source, cl.Command, cl.Params = FromString, argv[i], argv[i+1:]
		for _, o := range cl.Set {
			plain = plain && plainOption(o)
		}
		cl.Plain = plain
	default:
		cl.fromOperands(argv[min(i, len(argv)):], stdin)
	}
	return cl
}

// zshFlags are the single-letter zsh options the shim accepts: -c, and
// those that change neither how the program is read nor what runs before
// it beyond zsh's own start-up files (-l login, -i interactive, -s stdin,
// -f no rc files, -e errexit, -n noexec, -v verbose, -x xtrace). Every
// other zsh option turns on a setting the analysis does not model
// (-o shwordsplit, --emulate sh, -y …), so the line is Invalid rather than
// judged by zsh's defaults.
const zshFlags = "clisfenvx"

// ParseZshCommandLine reads zsh's command line (zsh 5.9's parseargs) as far
// as the shim needs it: option words starting with '-' or '+' until "-",
// "--" or the first other word; -c makes the first word after the options
// the command string and the words after it $0, $1 …; else the first word
// is a script file unless -s was given. --help and --version print and
// exit. Any option outside zshFlags, -o/+o and the GNU-style option names
// included, makes the line Invalid: the program would run under settings
// execgate did not judge it under.
func ParseZshCommandLine(argv []string) CommandLine {
	var cl CommandLine
	if len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
		cl.Login = true
	}
	command, stdin := false, false
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "" || (a[0] != '-' && a[0] != '+') {
			break
		}
		if a == "-" || a == "--" {
			i++
			break
		}
		if a == "--help" || a == "--version" {
			return CommandLine{Source: NoProgram}
		}
		if strings.HasPrefix(a, "--") {
			return CommandLine{Source: Invalid, Problem: a + ": execgate judges commands under zsh's default options only"}
		}
		for _, c := range a[1:] {
			if !strings.ContainsRune(zshFlags, c) {
				return CommandLine{Source: Invalid, Problem: string(a[0]) + string(c) + ": execgate judges commands under zsh's default options only"}
			}
			switch c {
			case 'c':
				if a[0] == '+' {
					return CommandLine{Source: Invalid, Problem: "+c: execgate judges commands under zsh's default options only"}
				}
				command = true
			case 'l':
				cl.Login = true
			case 'i':
				cl.Interactive = true
			case 's':
				// +s turns SHIN_STDIN off again: zsh -s +s FILE runs
				// FILE, not what stdin holds.
				stdin = a[0] == '-'
			}
		}
	}
	switch {
	case command:
		if i >= len(argv) {
			return CommandLine{Source: Invalid, Problem: "-c: string expected"}
		}
		cl.Source, cl.Command, cl.Params = FromString, argv[i], argv[i+1:]
	default:
		cl.fromOperands(argv[min(i, len(argv)):], stdin)
	}
	return cl
}

// fromOperands sets where a program given without -c comes from, for bash
// and zsh alike: the script file named by the first operand, or standard
// input (with -s, or with no operand), the remaining operands being the
// positional parameters.
func (cl *CommandLine) fromOperands(operands []string, stdin bool) {
	if !stdin && len(operands) > 0 {
		cl.Source, cl.Script, cl.Params = FromFile, operands[0], operands[1:]
		return
	}
	cl.Source = FromStdin
	if len(operands) > 0 {
		cl.Params = operands
	}
}
