package shparse

import (
	"errors"
	"fmt"
)

// The parser (mvdan.cc/sh/v3/syntax) recurses once or more per nesting
// level, and so do the walks over the tree it builds: 150 000 nested
// arithmetic parentheses, 300 KB, overflow the goroutine stack, which is a
// fatal error that recover cannot catch. Every parse of a text the process
// was given therefore goes through CheckNesting first, a single linear pass
// over the bytes that bounds how deep the tree can get.
//
// The estimate is deliberately crude so that it cannot be fooled: it reads
// no quotes, comments or heredocs and never subtracts for a closing token,
// because a closing token may be literal (`echo }`, `echo fi`, `')'`, a case
// pattern's `)`) while the construct it seems to close stays open. Every
// byte or word that can open a level of the tree adds to it:
//
//   - ( { [ and ` (subshells, groups, $( ${ $(( (( [[ <( >( @( a[i] …),
//     and the reserved words that open or continue a compound command
//     (if, then, elif, else, while, until, for, select, case, do, function,
//     time, coproc, and zsh's repeat and foreach) weigh prescanNest each;
//   - operator bytes that chain without closing (| & ! and the arithmetic
//     operators + - * / % < > = ^ ~ ? : ,) weigh prescanOp: pipelines, &&
//     lists, arithmetic and [[ ]] expressions build trees as deep as they
//     are long;
//   - ; and newline weigh 1: they nest nothing, but a long list of commands
//     costs memory and time all the same.
//
// Letters, digits, spaces and quotes are free, so ordinary commands come
// nowhere near the limit; a text that reaches it is hundreds of lines of
// code (a large heredoc, say), and it needs review rather than a parse.
const (
	// prescanBase covers the levels every tree has without any counted
	// byte: File → Stmt → CallExpr → Assign → Word → DblQuoted → ParamExp
	// → Lit and the like.
	prescanBase = 16
	// prescanNest is the weight of an opening byte or word. One such level
	// adds at most 5 tree levels (Word → DblQuoted → CmdSubst → Stmt →
	// CallExpr for "$(") and, for the parser, ~10 KB of stack in the worst
	// case (a parenthesis in arithmetic, which goes through every
	// precedence level).
	prescanNest = 8
	// prescanOp is the weight of an operator byte: `|` adds two tree levels
	// (BinaryCmd and its Stmt), the others at most one.
	prescanOp = 2
	// MaxNesting is the limit on the estimate. At it, the worst shape (8 000
	// nested arithmetic parentheses) parses and is analyzed in ~0.1 s and
	// ~100 MB; a pipeline or && list may have ~30 000 steps.
	MaxNesting = 64 << 10
)

// ErrTooDeep is the error CheckNesting (and so Parse) wraps for a text too
// deeply nested to check.
var ErrTooDeep = errors.New("too deeply nested to check")

// CheckNesting returns an error wrapping ErrTooDeep when src might nest
// deeper than the parser and the analysis can safely follow. It must be
// called before any syntax.Parser reads a text the process was given.
func CheckNesting(src string) error {
	if est := nestingEstimate(src, MaxNesting); est > MaxNesting {
		return fmt.Errorf("%w (nesting estimate over %d)", ErrTooDeep, MaxNesting)
	}
	return nil
}

// nestingEstimate returns an upper bound on the depth of the syntax tree of
// src, or, once the bound passes limit, some number over limit.
func nestingEstimate(src string, limit int) int {
	est := prescanBase
	for i := 0; i < len(src) && est <= limit; i++ {
		c := src[i]
		switch w := prescanWeight[c]; {
		case w > 0:
			est += int(w)
		case isWordByte(c):
			// A whole word, with line continuations (backslash, newline)
			// taken out as the lexer does: i\⏎f is `if`.
			var buf [8]byte
			n := 0
			for ; i < len(src); i++ {
				if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' {
					i++
					continue
				}
				if !isWordByte(src[i]) {
					break
				}
				if n < len(buf) {
					buf[n] = src[i]
				}
				n++
			}
			i-- // the loop's i++ moves to the byte after the word
			if n <= len(buf) && opensLevel(string(buf[:n])) {
				est += prescanNest
			}
		}
	}
	return est
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// prescanWeight is what each byte adds to the estimate. It is an array
// literal, laid out by the linker, not one filled in by code that would
// run at start-up of every shim process.
var prescanWeight = [256]uint8{
	'(': prescanNest, '{': prescanNest, '[': prescanNest, '`': prescanNest,
	'|': prescanOp, '&': prescanOp, '!': prescanOp, '+': prescanOp, '-': prescanOp, '*': prescanOp,
	'/': prescanOp, '%': prescanOp, '<': prescanOp, '>': prescanOp, '=': prescanOp, '^': prescanOp,
	'~': prescanOp, '?': prescanOp, ':': prescanOp, ',': prescanOp,
	';': 1, '\n': 1,
}

// opensLevel reports whether word is a reserved word that opens or
// continues a compound command in any of the languages parsed. A switch,
// not a map: a map literal is built at start-up of every shim process.
func opensLevel(word string) bool {
	switch word {
	case "case", "coproc", "do", "elif", "else", "for", "foreach", "function",
		"if", "repeat", "select", "then", "time", "until", "while":
		return true
	}
	return false
}
