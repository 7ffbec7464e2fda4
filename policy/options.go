package policy

import "strings"

// isOption reports whether a known word is written as an option.
func isOption(s string) bool { return len(s) > 1 && s[0] == '-' }

// optionMatches reports whether the word arg is the option spec:
//
//	--long     --long, --long=value, or an abbreviation such as --lo
//	           (getopt_long and git accept any unambiguous prefix; a
//	           security check must assume the abbreviation is this one)
//	--long*    any option starting with --long, or an abbreviation of it
//	-x         -x, -xVALUE, or a cluster of single letters that contains x
//	           (-rfx)
//	-long      exactly -long or -long=value (find, java-style options)
//	=word      exactly word
func optionMatches(spec, arg string) bool {
	if exact, ok := strings.CutPrefix(spec, "="); ok {
		return arg == exact
	}
	if prefix, ok := strings.CutSuffix(spec, "*"); ok {
		return strings.HasPrefix(arg, prefix) || abbreviates(arg, prefix)
	}
	if strings.HasPrefix(spec, "--") {
		return arg == spec || strings.HasPrefix(arg, spec+"=") || abbreviates(arg, spec)
	}
	if len(spec) != 2 {
		return arg == spec || strings.HasPrefix(arg, spec+"=")
	}
	if !isOption(arg) || strings.HasPrefix(arg, "--") {
		return false
	}
	if arg == spec || strings.HasPrefix(arg, spec) {
		return true // -x, or -xVALUE with the value attached
	}
	// A cluster: -rfx, or -so/FILE where o's value is attached. Which
	// letters take a value is not known here, so any letter before the
	// first character that cannot be one counts (over-matching only ever
	// finds an option that is not there).
	return isLetter(spec[1]) && strings.IndexByte(clusterLetters(arg), spec[1]) >= 0
}

// matchingSpecIn is matchingSpec for a program whose value-taking options
// are known: in a cluster, the letters after one that takes a value are
// that value (perl -MFile::Path is -M, not -e), so they are not options.
func matchingSpecIn(specs []string, arg string, withValue []string) string {
	for _, s := range specs {
		if len(s) != 2 || !isOption(arg) || strings.HasPrefix(arg, "--") || strings.HasPrefix(arg, s) {
			if optionMatches(s, arg) {
				return s
			}
			continue
		}
		for _, c := range []byte(clusterLetters(arg)) {
			if c == s[1] {
				return s
			}
			if matchesAny(withValue, "-"+string(c)) {
				break
			}
		}
	}
	return ""
}

// clusterLetters returns the letters and digits of a short-option cluster
// up to the first other character: for -nes/a/x, "nes".
func clusterLetters(arg string) string {
	if len(arg) < 2 {
		return ""
	}
	i := 1
	for i < len(arg) && (isLetter(arg[i]) || arg[i] >= '0' && arg[i] <= '9') {
		i++
	}
	return arg[1:i]
}

// abbreviates reports whether arg (--lo or --lo=value) is an abbreviation
// of the long option spec (--long).
func abbreviates(arg, spec string) bool {
	if !strings.HasPrefix(arg, "--") || len(arg) < 3 {
		return false
	}
	name, _, _ := strings.Cut(arg, "=")
	return len(name) >= 3 && strings.HasPrefix(spec, name)
}

// optionArgument returns the value of the option word args[*i] that
// matched spec: after "=" (--opt=value), attached (-oVALUE), or the next
// word, advancing *i past it.
func optionArgument(args []word, i *int, spec string) (word, bool) {
	t := args[*i].text
	if strings.HasPrefix(t, "--") {
		if _, v, ok := strings.Cut(t, "="); ok {
			return word{text: v, known: args[*i].known}, true
		}
	} else if len(spec) == 2 && len(t) > 2 && strings.HasPrefix(t, spec) {
		return word{text: t[2:], known: args[*i].known}, true
	} else if len(spec) == 2 && isOption(t) {
		// In a cluster (-so/FILE, -xvCdir) the rest after the letter is
		// its value; a letter ending the cluster takes the next word.
		if p := strings.IndexByte(clusterLetters(t), spec[1]); p >= 0 && 2+p < len(t) {
			return word{text: t[2+p:], known: args[*i].known}, true
		}
	}
	if *i+1 < len(args) {
		*i++
		return args[*i], true
	}
	return word{}, false
}

// matchingSpec returns the spec that arg matches, or "": one that names
// the option exactly (-coverprofile=x is -coverprofile, not a cluster with
// -o in it) before the first that matches at all.
func matchingSpec(specs []string, arg string) string {
	for _, s := range specs {
		if arg == s || strings.HasPrefix(arg, s+"=") {
			return s
		}
	}
	for _, s := range specs {
		if optionMatches(s, arg) {
			return s
		}
	}
	return ""
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
