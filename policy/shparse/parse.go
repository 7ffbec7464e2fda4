// Package shparse parses shell text as the shell that runs it reads it, or
// refuses to.
//
// mvdan.cc/sh/v3/syntax is the parser; this package stands between it and
// a text the process was given, for the two ways a parse can betray the
// analysis built on it. A text nested deeply enough overflows the stack of
// the parser and of every walk over its tree, which recover cannot catch:
// CheckNesting bounds the depth in one linear pass first. And a text the
// parser reads otherwise than bash (or zsh) makes the analysis judge one
// program while the shell runs another: Parse refuses the known classes of
// such texts with an error wrapping ErrReadsOtherwise, and AsBash recovers
// what bash runs where that is known, to be judged as well.
//
// The package only parses; judging the tree is package policy's, running it
// package interp's.
package shparse

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A parse that differs from the shell's is a bypass: the analysis would
// judge one program while bash runs another. mvdan.cc/sh (v3.14.1) reads
// some texts otherwise than bash, found by the parser differential
// (policy/bashdiff_test.go), which runs the real bash with recorders:
//
//   - a comment ending in a backslash: `ls # \` + newline + `rm -rf ~` is
//     one command `ls rm -rf ~` to the parser, whose reader takes the
//     backslash-newline as a line continuation even inside a comment; bash
//     ends the comment at the newline and runs `rm -rf ~`;
//   - carriage returns: the reader drops a CR before LF (also inside
//     quotes and here-documents), takes backslash-CR-LF as a line
//     continuation and CR as a blank between words; bash keeps CR as a
//     byte of the word (`git status \` + CR LF + `rm -rf ~` runs rm);
//   - NUL bytes, which the reader drops and zsh keeps in words;
//   - line continuations inside a token: `$` backslash-newline `(` is
//     `$(` to bash and a literal `$` to the parser, a here-document
//     delimiter split by one is another delimiter;
//   - expansions the parser keeps as text: a command substitution in an
//     extended glob (`[[ a == @($(cmd)) ]]`), a process substitution in a
//     parameter expansion's word (`${x:-<(cmd)}`);
//   - a here-document that ends, for bash, inside an unfinished `$(` or
//     `${`: the parser reads on past the delimiter line;
//   - single quotes in the word of a double-quoted `${x:-word}` (also
//     `-`, `=`, `:=`, `+`, `:+`, `?`, `:?`, and in an unquoted
//     here-document's body): POSIX shells keep them as characters and
//     expand what they enclose, so `echo "${x:-'$(cmd)'}"` runs cmd; the
//     parser reads a quoted literal.
//
// Parse refuses each class as a whole: the program is then not understood
// (needs review, opaque), which a person may still approve, and bash runs
// it as written.

// ErrReadsOtherwise is wrapped by the error Parse returns where bash would
// read the text otherwise than the parser.
var ErrReadsOtherwise = errors.New("bash reads this text otherwise than execgate's parser")

// Parse parses src in lang, keeping comments, refusing a text too deeply
// nested to parse safely (CheckNesting) and one that bash would read
// otherwise than the parser (see above).
func Parse(src string, lang syntax.LangVariant) (*syntax.File, error) {
	if err := CheckNesting(src); err != nil {
		return nil, err // parsing it might overflow the stack
	}
	file, err := syntax.NewParser(syntax.Variant(lang), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, err
	}
	if why := readsOtherwise(src, file, lang); why != "" {
		return nil, &divergenceError{why: why, asBash: commentsEnded(src, file)}
	}
	return file, nil
}

// divergenceError is the error for a text bash reads otherwise; its
// message says where.
type divergenceError struct {
	why string
	// asBash is the text with the comments that end in a backslash ended
	// as bash ends them ("" when there are none): what bash runs, to be
	// judged as well, so that `ls # \` + newline + `rm -rf ~` is judged
	// by its rm.
	asBash string
}

func (e *divergenceError) Error() string { return e.why }
func (e *divergenceError) Unwrap() error { return ErrReadsOtherwise }

// readsOtherwise returns why the shell would read src otherwise than file,
// the parser's tree of it, or "" when no known difference applies.
func readsOtherwise(src string, file *syntax.File, lang syntax.LangVariant) string {
	switch {
	case strings.IndexByte(src, '\r') >= 0:
		return "it contains a carriage return, which bash keeps in a word and the parser takes for a blank or a line end"
	case strings.IndexByte(src, 0) >= 0:
		return "it contains a NUL byte, which the parser drops"
	case lang == syntax.LangZsh && oddTrailingBackslashes(src):
		return "it ends in a backslash, which zsh drops and the parser keeps"
	}
	var why string
	var ctx []quoting // for each enclosing node: how bash reads quotes there
	skip := map[syntax.Node]bool{}
	hdocBody := map[syntax.Node]bool{}
	syntax.Walk(file, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		if n == nil {
			ctx = ctx[:len(ctx)-1]
			return true
		}
		if skip[n] {
			return false // a quoted here-document's body: text, read alike
		}
		q := unquoted
		if len(ctx) > 0 {
			q = ctx[len(ctx)-1]
		}
		switch n := n.(type) {
		case *syntax.Comment:
			if strings.HasSuffix(n.Text, "\\\n") {
				why = "a comment ends in a backslash, which the parser takes for a line continuation and bash does not"
			}
		case *syntax.Lit:
			// With the byte after it: the parser may split "$" and "["
			// into two literals (zsh's $[ … ]).
			v := n.Value
			if end := int(n.End().Offset()); strings.HasSuffix(v, "$") && end >= 0 && end < len(src) {
				v += src[end : end+1]
			}
			why = literalExpansion(v, q == doubleQuoted, lang)
		case *syntax.Redirect:
			why = heredocOtherwise(src, n)
			if n.Hdoc != nil {
				if heredocQuoted(n.Word) {
					skip[n.Hdoc] = true
				} else {
					hdocBody[n.Hdoc] = true
				}
			}
		case *syntax.CoprocClause:
			// bash names a coprocess only before a compound command:
			// `coproc rm -rf | x` runs rm, where the parser took rm for
			// the name.
			if n.Name != nil && n.Stmt != nil && !compoundStart(n.Stmt) {
				why = "the parser takes the command of a coprocess for its name"
			}
		case *syntax.CallExpr:
			// zsh runs {cmd} as a group, the parser reads a word.
			if lang == syntax.LangZsh && len(n.Args) > 0 && strings.HasPrefix(n.Args[0].Lit(), "{") && len(n.Args[0].Lit()) > 1 {
				why = "zsh runs " + quote(n.Args[0].Lit()) + " as a group of commands, the parser reads a word"
			}
		case *syntax.Word:
			if hdocBody[n] {
				q = doubleQuoted // an unquoted here-document's body reads like "…"
			}
		case *syntax.DblQuoted:
			q = doubleQuoted
		case *syntax.SglQuoted:
			if q == defaultWordQuoted && !n.Dollar {
				why = "single quotes inside a double-quoted ${x:-…} are text to bash, which expands what they enclose; the parser reads them as quotes"
			}
		case *syntax.ParamExp:
			// The word of ${x:-word} is expanded like an unquoted one,
			// process substitution included, even inside quotes; but
			// for - = + ? a single quote in it stays a character when
			// the expansion is inside double quotes (POSIX; bash, dash
			// and zsh alike).
			if q != unquoted && n.Exp != nil && keepsDoubleQuoteRules(n.Exp.Op) {
				q = defaultWordQuoted
			} else {
				q = unquoted
			}
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			q = unquoted // a new text, quoted afresh
		}
		ctx = append(ctx, q)
		return why == ""
	})
	if why == "" && strings.Contains(src, "\\\n") {
		why = continuationsOtherwise(src, file, lang)
	}
	return why
}

// quote renders a word for a reason, shortened as package policy shortens
// the words of its reasons.
func quote(s string) string {
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return "`" + s + "`"
}

// quoting is how bash reads a quote character at some node of a program.
type quoting uint8

const (
	unquoted quoting = iota
	// doubleQuoted: inside "…" or the body of an unquoted here-document.
	doubleQuoted
	// defaultWordQuoted: the word of ${x-…}, ${x=…}, ${x+…} or ${x?…}
	// (colon or not) inside double quotes, where ' is a character and
	// what it encloses is expanded: "${x:-'$(cmd)'}" runs cmd.
	defaultWordQuoted
)

// keepsDoubleQuoteRules reports whether the word of a parameter expansion
// with operator op keeps the rules of the double quotes around it, as
// POSIX says of - = + ?; the pattern operators (# % / …) quote afresh.
func keepsDoubleQuoteRules(op syntax.ParExpOperator) bool {
	switch op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull,
		syntax.AssignUnset, syntax.AssignUnsetOrNull,
		syntax.AlternateUnset, syntax.AlternateUnsetOrNull,
		syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return true
	}
	return false
}

// commentsEnded returns src without the backslash that ends a comment
// before a newline (which bash takes as part of the comment and the parser
// as a line continuation), or "" when no comment ends so.
func commentsEnded(src string, file *syntax.File) string {
	var cut []int
	syntax.Walk(file, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && strings.HasSuffix(c.Text, "\\\n") {
			// The text starts after the #; its backslash is two bytes
			// before its end.
			if i := int(c.Hash.Offset()) + 1 + len(c.Text) - 2; i > 0 && i < len(src) && src[i] == '\\' {
				cut = append(cut, i)
			}
		}
		return true
	})
	if len(cut) == 0 {
		return ""
	}
	slices.Sort(cut)
	var sb strings.Builder
	last := 0
	for _, i := range cut {
		if i < last {
			continue
		}
		sb.WriteString(src[last:i])
		last = i + 1
	}
	sb.WriteString(src[last:])
	return sb.String()
}

// AsBash returns the text bash reads where err, from Parse, says bash reads
// the source otherwise than the parser and that text is known, else "".
func AsBash(err error) string {
	var de *divergenceError
	if errors.As(err, &de) {
		return de.asBash
	}
	return ""
}

// oddTrailingBackslashes reports whether src ends in an unescaped
// backslash.
func oddTrailingBackslashes(s string) bool {
	n := len(s) - len(strings.TrimRight(s, "\\"))
	return n%2 == 1
}

// compoundStart reports whether the command of s, or the first command of
// the pipeline or list s is, is a compound command (not a simple one).
func compoundStart(s *syntax.Stmt) bool {
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr, nil:
		return false
	case *syntax.BinaryCmd:
		return compoundStart(c.X)
	}
	return true
}

// literalExpansion returns why a literal the parser produced holds an
// expansion bash performs: an unescaped $( ` ${ $[ anywhere, and <( >(
// outside double quotes.
func literalExpansion(v string, inQuotes bool, lang syntax.LangVariant) string {
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' {
			i++ // an escaped byte is literal
			continue
		}
		next := byte(0)
		if i+1 < len(v) {
			next = v[i+1]
		}
		switch {
		case v[i] == '`', v[i] == '$' && (next == '(' || next == '{' || next == '['):
			return "the parser keeps an expansion bash performs as plain text: " + quote(v)
		case lang == syntax.LangZsh && v[i] == '$' && strings.IndexByte("=~^+", next) >= 0 && next != 0:
			// $=x, $~x, $^x, $+x: zsh's flags on a parameter.
			return "the parser keeps a zsh expansion as plain text: " + quote(v)
		case !inQuotes && (v[i] == '<' || v[i] == '>') && next == '(':
			return "the parser keeps a process substitution bash performs as plain text: " + quote(v)
		}
	}
	return ""
}

// heredocOtherwise returns why bash would end the here-document of r
// elsewhere than the parser: bash ends it at the first line that is its
// delimiter (less leading tabs for <<-), whatever that line is inside of.
func heredocOtherwise(src string, r *syntax.Redirect) string {
	if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc {
		return ""
	}
	delim, ok := heredocDelimiter(src, r.Word)
	if !ok {
		return "a here-document's delimiter is not one execgate can read as bash does"
	}
	if r.Hdoc == nil {
		return "" // an empty body ended by the delimiter line
	}
	start, end := int(r.Hdoc.Pos().Offset()), int(r.Hdoc.End().Offset())
	if start < 0 || end > len(src) || start > end {
		return "a here-document's body is not where the parser says"
	}
	lines := strings.Split(src[start:end], "\n")
	for _, l := range lines[:len(lines)-1] { // the last is the delimiter line
		if r.Op == syntax.DashHdoc {
			l = strings.TrimLeft(l, "\t")
		}
		if l == delim {
			return "a here-document ends, for bash, at a line the parser reads on past (" + quote(delim) + ")"
		}
	}
	return ""
}

// heredocDelimiter is the delimiter bash takes from w's text: the word
// after quote removal, nothing expanded.
func heredocDelimiter(src string, w *syntax.Word) (string, bool) {
	start, end := int(w.Pos().Offset()), int(w.End().Offset())
	if start < 0 || end > len(src) || start > end {
		return "", false
	}
	text := src[start:end]
	if strings.Contains(text, "\\\n") {
		return "", false // a delimiter split by a line continuation
	}
	var sb strings.Builder
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '\\':
			if i+1 < len(text) {
				i++
				sb.WriteByte(text[i])
			}
		case '\'':
			j := strings.IndexByte(text[i+1:], '\'')
			if j < 0 {
				return "", false
			}
			sb.WriteString(text[i+1 : i+1+j])
			i += j + 1
		case '"':
			j := i + 1
			for ; j < len(text) && text[j] != '"'; j++ {
				if text[j] == '\\' && j+1 < len(text) && strings.IndexByte("$`\"\\", text[j+1]) >= 0 {
					j++
				}
				sb.WriteByte(text[j])
			}
			if j >= len(text) {
				return "", false
			}
			i = j
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String(), true
}

// heredocQuoted reports whether a here-document's delimiter word is quoted
// in any part, which makes its body plain text.
func heredocQuoted(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, "\\") {
				return true
			}
		}
	}
	return false
}

// continuationsOtherwise checks the parser's handling of line
// continuations. bash removes every backslash-newline before it reads
// tokens, except inside single quotes ($'…' too), comments and the bodies
// of quoted here-documents; the parser handles them token by token and
// misses some (`$` backslash-newline `(`). So the text is parsed again
// with those continuations removed, and both trees must be the same.
func continuationsOtherwise(src string, file *syntax.File, lang syntax.LangVariant) string {
	keep := literalSpans(file)
	var sb strings.Builder
	for i := 0; i < len(src); i++ {
		if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' && !keep.contains(i) {
			i++
			continue
		}
		if src[i] == '\\' && i+1 < len(src) {
			// An escaped byte, perhaps a backslash: what follows it
			// cannot start a continuation.
			sb.WriteByte(src[i])
			i++
		}
		sb.WriteByte(src[i])
	}
	joined := sb.String()
	other, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(joined), "")
	if err != nil {
		return "a line continuation splits a token, and the text does not parse without it"
	}
	if treeShape(file) != treeShape(other) {
		return "a line continuation splits a token, which the parser reads otherwise than bash"
	}
	return ""
}

// spans are byte ranges [start, end) of a source text.
type spans [][2]int

func (s spans) contains(i int) bool {
	for _, r := range s {
		if i >= r[0] && i < r[1] {
			return true
		}
	}
	return false
}

// literalSpans lists where bash keeps a backslash-newline as it is: single
// quotes (also $'…'), comments, and quoted here-documents' bodies.
func literalSpans(file *syntax.File) spans {
	var out spans
	add := func(n syntax.Node) {
		out = append(out, [2]int{int(n.Pos().Offset()), int(n.End().Offset())})
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.SglQuoted:
			add(n)
		case *syntax.Comment:
			add(n)
		case *syntax.Redirect:
			if n.Hdoc != nil && heredocQuoted(n.Word) {
				add(n.Hdoc)
			}
		}
		return true
	})
	return out
}

// treeShape renders a syntax tree without its positions and comments, so
// that two parses of texts laid out differently compare equal when they
// mean the same program.
func treeShape(n syntax.Node) string {
	var sb strings.Builder
	shapeOf(&sb, reflect.ValueOf(n))
	return sb.String()
}

// mergeLits joins adjacent literals of a word's parts.
func mergeLits(parts []syntax.WordPart) []syntax.WordPart {
	out := make([]syntax.WordPart, 0, len(parts))
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok && len(out) > 0 {
			if prev, ok := out[len(out)-1].(*syntax.Lit); ok {
				out[len(out)-1] = &syntax.Lit{Value: prev.Value + l.Value}
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

func shapeOf(sb *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			sb.WriteString("nil ")
			return
		}
		shapeOf(sb, v.Elem())
	case reflect.Struct:
		if lit, ok := v.Interface().(syntax.Lit); ok {
			// The parser keeps the continuations it took inside a
			// literal's raw value ("a \\\nb"); the joined text has none.
			sb.WriteString("Lit{" + strings.ReplaceAll(strings.ReplaceAll(lit.Value, "\\\n", ""), " ", "\\ ") + "} ")
			return
		}
		sb.WriteString(v.Type().Name())
		sb.WriteString("{")
		for i := range v.NumField() {
			f := v.Field(i)
			// Positions and comments differ between the two layouts;
			// (types looked up here: a package-level one is init code in
			// every shim process.)
			if t := f.Type(); t == reflect.TypeFor[syntax.Pos]() || t == reflect.TypeFor[[]syntax.Comment]() || !v.Type().Field(i).IsExported() {
				continue
			}
			shapeOf(sb, f)
		}
		sb.WriteString("} ")
	case reflect.Slice:
		if parts, ok := v.Interface().([]syntax.WordPart); ok {
			// The parser may end a literal at a continuation it took
			// ("a \\\nb" is two literals): adjacent literals are one.
			v = reflect.ValueOf(mergeLits(parts))
		}
		sb.WriteString("[")
		for i := range v.Len() {
			shapeOf(sb, v.Index(i))
		}
		sb.WriteString("] ")
	case reflect.String:
		sb.WriteString(strings.ReplaceAll(v.String(), " ", "\\ "))
		sb.WriteString(" ")
	case reflect.Bool:
		sb.WriteString(strconv.FormatBool(v.Bool()) + " ")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		sb.WriteString(strconv.FormatInt(v.Int(), 10) + " ")
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		sb.WriteString(strconv.FormatUint(v.Uint(), 10) + " ")
	default:
		sb.WriteString(v.Kind().String())
		sb.WriteString(" ")
	}
}
