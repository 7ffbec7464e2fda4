package policy

// patternOperand is the index in args of the operand a program of the grep
// family takes as its pattern (grep PATTERN FILE…), or -1: none, the
// program has no such operand, or which word it is cannot be known. An
// option that gives the pattern (-e, --regexp) or a file of patterns (-f,
// --file) makes every operand a file; so may an option only known at run
// time, and then no operand is taken for the pattern; so does an operand
// that bash may expand into several words (a glob, a brace, an unquoted
// expansion).
func patternOperand(info programInfo, args []word) int {
	if !info.PatternOperand {
		return -1
	}
	operand := -1
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			if operand < 0 && isOptionShape(w) {
				return -1 // $OPT may be -e
			}
			if operand < 0 {
				operand = i
			}
			continue
		}
		if w.text == "--" {
			if operand < 0 && i+1 < len(args) {
				operand = i + 1
			}
			break
		}
		if operand < 0 && isOption(w.text) {
			if matchesAny([]string{"-e", "--regexp", "-f", "--file"}, w.text) {
				return -1
			}
			if takesValue(w.text, info.OptionsWithValue) {
				i++
			}
			continue
		}
		if operand < 0 {
			operand = i
		} else if isOption(w.text) && matchesAny([]string{"-e", "--regexp", "-f", "--file"}, w.text) {
			return -1 // GNU grep reads options after operands too
		}
	}
	if operand >= 0 && (args[operand].glob || args[operand].brace || args[operand].splits) {
		// grep .env* src: bash may expand it into the pattern and files.
		return -1
	}
	return operand
}
