package policy

import "strings"

// isOption reports whether a known word is written as an option.
func isOption(s string) bool { return len(s) > 1 && s[0] == '-' }

// optionMatches reports whether the word arg is the option spec:
//
//	--long     --long or --long=value
//	--long*    any option starting with --long
//	-x         -x, or a cluster of single letters that contains x (-rfx)
//	-long      exactly -long or -long=value (find, java-style options)
//	=word      exactly word
func optionMatches(spec, arg string) bool {
	if exact, ok := strings.CutPrefix(spec, "="); ok {
		return arg == exact
	}
	if prefix, ok := strings.CutSuffix(spec, "*"); ok {
		return strings.HasPrefix(arg, prefix)
	}
	if strings.HasPrefix(spec, "--") || len(spec) != 2 {
		return arg == spec || strings.HasPrefix(arg, spec+"=")
	}
	if !isOption(arg) || strings.HasPrefix(arg, "--") {
		return false
	}
	if arg == spec {
		return true
	}
	return isLetter(spec[1]) && allAlnum(arg[1:]) && strings.IndexByte(arg[1:], spec[1]) >= 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func allAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && (c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// takesValue reports whether the option word arg consumes the next word,
// given the options that take a value.
func takesValue(arg string, withValue []string) bool {
	if strings.Contains(arg, "=") && strings.HasPrefix(arg, "--") {
		return false
	}
	for _, o := range withValue {
		if arg == o {
			return true
		}
		// A short option ending a cluster takes the next word: -xvf FILE.
		if len(o) == 2 && o[0] == '-' && !strings.HasPrefix(arg, "--") &&
			len(arg) > 2 && allAlnum(arg[1:]) && arg[len(arg)-1] == o[1] &&
			strings.IndexByte(arg[1:len(arg)-1], o[1]) < 0 {
			// Only when no earlier letter of the cluster takes a value
			// (which would swallow the rest of the cluster).
			if !clusterValueBefore(arg, withValue) {
				return true
			}
		}
	}
	return false
}

// clusterValueBefore reports whether a letter before the last one in the
// cluster arg takes a value (and so swallows the rest as its value).
func clusterValueBefore(arg string, withValue []string) bool {
	for i := 1; i < len(arg)-1; i++ {
		for _, o := range withValue {
			if len(o) == 2 && o[0] == '-' && o[1] == arg[i] {
				return true
			}
		}
	}
	return false
}

// argView splits a command's words (after the program name) into options
// and operands.
type argView struct {
	words      []word
	options    []int // indexes of option words
	positional []int // indexes of operands
}

// viewArgs parses words (the arguments after the program) given the
// options that take a value. Unknown words count as operands, and as
// possible options (see maybeOption).
func viewArgs(words []word, withValue []string) argView {
	v := argView{words: words}
	endOpts := false
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case endOpts || !w.known || !isOption(w.text):
			v.positional = append(v.positional, i)
		case w.text == "--":
			endOpts = true
		default:
			v.options = append(v.options, i)
			if takesValue(w.text, withValue) {
				i++ // the value is neither option nor operand
			}
		}
	}
	return v
}

// has reports whether any option word matches one of specs.
func (v argView) has(specs ...string) bool {
	return v.find(specs...) >= 0
}

// find returns the index of the first option word matching one of specs,
// or -1.
func (v argView) find(specs ...string) int {
	for _, i := range v.options {
		for _, s := range specs {
			if optionMatches(s, v.words[i].text) {
				return i
			}
		}
	}
	return -1
}

// operands returns the operand words.
func (v argView) operands() []word {
	out := make([]word, 0, len(v.positional))
	for _, i := range v.positional {
		out = append(out, v.words[i])
	}
	return out
}

// unknown reports whether some word is not known statically, so that it
// might be any option or operand.
func (v argView) unknown() bool {
	for _, w := range v.words {
		if !w.known {
			return true
		}
	}
	return false
}

// unknownOption reports whether some word is unknown in a way that could
// smuggle in an option: not the file names xargs reads from stdin.
func (v argView) unknownOption() bool {
	for _, w := range v.words {
		if !w.known && !w.fromStdin {
			return true
		}
	}
	return false
}
