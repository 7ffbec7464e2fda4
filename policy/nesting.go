package policy

import "fmt"

// maxNesting bounds how deeply brackets may nest in a text handed to the
// parser: mvdan.cc/sh recurses once per level, and a deep enough input
// overflows the Go stack, a fatal error that recover cannot catch.
const maxNesting = 1000

// checkNestingText over-estimates the nesting depth of src in one linear
// pass, without parsing, and refuses text deeper than maxNesting.
func checkNestingText(src string) error {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[', '`':
			depth++
			if depth > maxNesting {
				return fmt.Errorf("too deeply nested to check (more than %d levels)", maxNesting)
			}
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
