package policy

import (
	"fmt"
	"reflect"

	"mvdan.cc/sh/v3/syntax"
)

// The walk in analyze.go follows bash's evaluation position by position.
// net is what makes that walk total: after it, every node of the parsed
// program is looked at once more, and a command substitution the walk did
// not judge, arithmetic it did not check, or a node type it does not know
// makes the program needs-review ("execgate cannot tell what this does")
// and is judged here, so that nothing can hide in a position the walk
// skips — including positions a future mvdan.cc/sh release adds.

// knownNodes are the syntax node types the analysis handles. A test checks
// the list against the syntax package, so that a type added by an upgrade
// fails it until the analysis handles the type.
var knownNodes = nameSet{
	"ArithmCmd",
	"ArithmExp",
	"ArrayElem",
	"ArrayExpr",
	"Assign",
	"BinaryArithm",
	"BinaryCmd",
	"BinaryTest",
	"Block",
	"CStyleLoop",
	"CallExpr",
	"CaseClause",
	"CaseItem",
	"CmdSubst",
	"Comment",
	"CoprocClause",
	"DblQuoted",
	"DeclClause",
	"ExtGlob",
	"File",
	"ForClause",
	"FuncDecl",
	"IfClause",
	"LetClause",
	"Lit",
	"ParamExp",
	"ParenArithm",
	"ParenTest",
	"ProcSubst",
	"Redirect",
	"SglQuoted",
	"Stmt",
	"Subshell",
	"TestClause",
	"TimeClause",
	"UnaryArithm",
	"UnaryTest",
	"WhileClause",
	"Word",
	"WordIter",
}

// unsupportedNodes exist in the syntax package but never in the bash, sh,
// zsh or ksh text this analysis parses as it does; met anyway, they make
// the program needs-review.
var unsupportedNodes = nameSet{
	"BraceExp",    // only made by syntax.SplitBraces, never parsed
	"FlagsArithm", // zsh subscript flags
	"TestDecl",    // bats test declarations
}

func (a *analyzer) markSeen(n syntax.Node) {
	if a.seen == nil {
		a.seen = map[syntax.Node]bool{}
	}
	a.seen[n] = true
}

// visitedArith records that an arithmetic expression was checked.
func (a *analyzer) visitedArith(x syntax.ArithmExpr) {
	if x != nil {
		a.markSeen(x)
	}
}

// net looks at every node of file after the walk: see the comment at the
// top of this file.
func (a *analyzer) net(file *syntax.File, f frame) {
	var seg *Segment
	flag := func(n syntax.Node, text string) *Segment {
		if seg == nil {
			seg = a.newSegment(n, f)
			seg.Argv = []string{}
		}
		seg.add(Reason{Risk: NeedsReview, Text: "execgate cannot tell what this does: " + text, Rule: "unchecked-position"})
		return seg
	}
	arith := func(x syntax.ArithmExpr) {
		if x != nil && !a.seen[x] {
			s := flag(x, fmt.Sprintf("arithmetic %s in a position the analysis does not check", quoteWord(nodeText(f.src, x))))
			a.arithExpr(s, x, f)
		}
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		if n == nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.FlagsArithm, *syntax.BraceExp, *syntax.TestDecl:
			// unsupportedNodes; anything not listed in this switch is
			// checked against knownNodes below.
			flag(n, fmt.Sprintf("uses a shell construct (%s) this analysis does not know", nodeName(n)))
		case *syntax.File, *syntax.Comment, *syntax.Stmt, *syntax.Redirect, *syntax.CallExpr,
			*syntax.Subshell, *syntax.Block, *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause,
			*syntax.WordIter, *syntax.BinaryCmd, *syntax.FuncDecl, *syntax.Word, *syntax.Lit,
			*syntax.SglQuoted, *syntax.DblQuoted, *syntax.BinaryArithm, *syntax.UnaryArithm,
			*syntax.ParenArithm, *syntax.CaseClause, *syntax.CaseItem, *syntax.TestClause,
			*syntax.BinaryTest, *syntax.UnaryTest, *syntax.ParenTest, *syntax.DeclClause,
			*syntax.ArrayExpr, *syntax.ExtGlob, *syntax.TimeClause, *syntax.CoprocClause:
			// Nothing runs here that the walk below them does not reach.
		case *syntax.CmdSubst:
			a.unseenStmts(n.Stmts, f, flag, n)
		case *syntax.ProcSubst:
			a.unseenStmts(n.Stmts, f, flag, n)
		case *syntax.ArithmExp:
			arith(n.X)
		case *syntax.ArithmCmd:
			arith(n.X)
		case *syntax.LetClause:
			for _, x := range n.Exprs {
				arith(x)
			}
		case *syntax.CStyleLoop:
			arith(n.Init)
			arith(n.Cond)
			arith(n.Post)
		case *syntax.Assign:
			arith(n.Index)
		case *syntax.ArrayElem:
			arith(n.Index)
		case *syntax.ParamExp:
			if n.Index != nil && !isListIndex(n.Index) {
				arith(n.Index)
			}
			if n.Slice != nil {
				arith(n.Slice.Offset)
				arith(n.Slice.Length)
			}
		default:
			if !knownNodes.has(nodeName(n)) {
				flag(n, fmt.Sprintf("uses a shell construct (%s) this analysis does not know", nodeName(n)))
			}
		}
		return true
	})
	if seg != nil {
		a.push(seg)
	}
}

// nodeName is the syntax type name of n ("CallExpr").
func nodeName(n syntax.Node) string { return reflect.TypeOf(n).Elem().Name() }

// unseenStmts judges the statements of a substitution the walk did not
// reach.
func (a *analyzer) unseenStmts(stmts []*syntax.Stmt, f frame, flag func(syntax.Node, string) *Segment, n syntax.Node) {
	for _, s := range stmts {
		if a.seen[s] {
			continue
		}
		flag(n, fmt.Sprintf("a command substitution %s in a position the analysis does not check", quoteWord(nodeText(f.src, n))))
		a.stmt(s, f, false)
	}
}
