package policy

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// word is one shell word as the analysis sees it: its literal value when
// the shell would produce it without running or looking anything up, and a
// stand-in otherwise.
type word struct {
	// text is the literal value after quote removal when known is true.
	// Otherwise it is a shape: the word with quotes removed, $HOME and
	// ${HOME} written as ~, and every other expansion written as "$?", so
	// that rules can still reason about "$X/" or "~/.ssh".
	text  string
	known bool // no parameter, command, arithmetic or process expansion
	// glob is set when an unquoted *, ? or [ makes the word a pattern that
	// the shell expands against file names.
	glob bool
	// tilde is set when the word starts with an unquoted ~ that the shell
	// replaces with a home directory.
	tilde bool
	// assignTilde is set when the word looks like an assignment (NAME=…)
	// and holds an unquoted ~ after its = or a :, which bash expands in
	// arguments too (make DESTDIR=~/x); text keeps the ~.
	assignTilde bool
	// brace is set when unquoted {a,b} or {1..3} expands the word into
	// several.
	brace bool
	// splits is set when an unquoted expansion may split into several
	// words (and so smuggle in options).
	splits bool
	// subst lists the command and process substitutions inside the word;
	// their commands run whenever the word is evaluated.
	subst []*syntax.Stmt
	// procSubst is set when the word is a process substitution (<(…)).
	procSubst bool
	// fromStdin marks the words xargs fills in from its input: unknown,
	// but file names rather than options an attacker chose.
	fromStdin bool
	// leaks is set when a substitution in the word prints credentials or
	// the environment (curl -d "$(cat ~/.ssh/id_rsa)").
	leaks bool
	// promptExpand is set by ${x@P}, which expands the variable's value
	// as a prompt string and so runs the command substitutions in it.
	promptExpand bool
	// ariths lists the arithmetic the word's expansion evaluates: $(( )),
	// $[ ], and the subscripts and slice bounds of parameters.
	ariths []syntax.ArithmExpr
	// assoc names the associative arrays whose subscripts, being keys,
	// are not arithmetic (filled in by the analyzer).
	assocIndex []*syntax.Word
	assocNames []string
	// indirect is set by ${!x}: the name of the parameter expanded is x's
	// value, and a subscript in it is evaluated.
	indirect bool
	// translated is set by $"…", which bash looks up in a message catalog
	// chosen by TEXTDOMAIN and TEXTDOMAINDIR.
	translated bool
	// node is the word as parsed, when the word is one.
	node *syntax.Word
	// params names the parameters the word expands.
	params []string
	// assigns names the parameters the word's expansion may assign
	// (${PATH:=dir}, ${x=v}).
	assigns []string
}

// pathKnown reports whether the word's path is known apart from $HOME.
func (w word) pathKnown() bool {
	return w.known || !strings.Contains(w.text, unknownShape)
}

// literal reports whether the word is a plain string: known, with no
// globbing or brace expansion to change it.
func (w word) literal() bool { return w.known && !w.glob && !w.brace }

// unknownShape is what an unknown expansion looks like inside word.text.
const unknownShape = "$?"

// shown is the word as a reason quotes it: its text, except that a word
// with unknown expansions is shown as written ("$SNAPSHOT_FILE",
// "$(mktemp)"): the "$?" stand-in the rules reason with reads like the exit
// status. Argv and the patterns matched against it keep the stand-in.
func (w word) shown() string {
	if w.known || w.node == nil || !strings.Contains(w.text, unknownShape) {
		return w.text
	}
	var sb strings.Builder
	if err := syntax.NewPrinter().Print(&sb, w.node); err != nil {
		return w.text
	}
	return sb.String()
}

// evalWord evaluates w as the shell would, as far as that is possible
// without running anything.
func evalWord(w *syntax.Word) word {
	out := word{known: true, node: w}
	var sb strings.Builder
	for i, part := range w.Parts {
		evalPart(&out, &sb, part, i == 0, false)
	}
	out.text = sb.String()
	out.assignTilde = assignmentTilde(w)
	if len(w.Parts) == 1 && out.procSubst {
		// <(…) is replaced by a /dev/fd path: a file to read, not an
		// option.
		out.known = true
		out.text = "/dev/fd/63"
		return out
	}
	if !out.known {
		return out
	}
	if hasBraceExpansion(w) {
		out.brace = true
	}
	return out
}

// assignmentTilde reports whether w is an assignment-shaped word (a name,
// then =, unquoted) with an unquoted ~ right after the = or after a : in
// its leading literal.
func assignmentTilde(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return false
	}
	name, rest, found := strings.Cut(l.Value, "=")
	if !found || !identifier.get().MatchString(name) {
		return false
	}
	return strings.HasPrefix(rest, "~") || strings.Contains(rest, ":~")
}

// evalPart appends one word part's value (or shape) to sb.
func evalPart(out *word, sb *strings.Builder, part syntax.WordPart, first, quoted bool) {
	switch p := part.(type) {
	case *syntax.Lit:
		v := p.Value
		if quoted {
			sb.WriteString(unescapeBackslashes(v, "$`\"\\"))
			return
		}
		if first && strings.HasPrefix(v, "~") {
			out.tilde = true
		}
		sb.WriteString(unescapeUnquoted(v, out))
	case *syntax.SglQuoted:
		if p.Dollar {
			v, known := ansiC(p.Value)
			out.known = out.known && known
			sb.WriteString(v)
			return
		}
		sb.WriteString(p.Value)
	case *syntax.DblQuoted:
		if p.Dollar {
			out.translated = true
		}
		for j, inner := range p.Parts {
			evalPart(out, sb, inner, first && j == 0, true)
		}
	case *syntax.ParamExp:
		out.known = false
		paramExpansions(p, out)
		if p.Param != nil {
			out.params = append(out.params, p.Param.Value)
		}
		if !quoted {
			out.splits = true
		}
		if isHomeParam(p) {
			out.tilde = out.tilde || first
			sb.WriteString("~")
			return
		}
		sb.WriteString(unknownShape)
	case *syntax.CmdSubst:
		out.known = false
		if !quoted {
			out.splits = true
		}
		out.subst = append(out.subst, p.Stmts...)
		sb.WriteString(unknownShape)
	case *syntax.ProcSubst:
		out.known = false
		out.procSubst = true
		out.subst = append(out.subst, p.Stmts...)
		sb.WriteString(unknownShape)
	case *syntax.ArithmExp:
		out.known = false
		out.ariths = append(out.ariths, p.X)
		sb.WriteString(unknownShape)
	case *syntax.ExtGlob:
		out.glob = true
		sb.WriteString(p.Op.String() + p.Pattern.Value + ")")
	default:
		// A part this code does not know cannot be judged.
		out.known = false
		sb.WriteString(unknownShape)
	}
}

// isHomeParam reports whether p is a plain $HOME or ${HOME}.
func isHomeParam(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Param.Value == "HOME" && p.Exp == nil && p.Repl == nil &&
		p.Index == nil && p.Slice == nil && !p.Length && !p.Excl && !p.Width
}

// paramExpansions notes what expanding p runs or evaluates: the command
// substitutions in its words (${x:-$(cmd)}), the arithmetic of its
// subscript and slice, an indirection and a prompt expansion.
func paramExpansions(p *syntax.ParamExp, out *word) {
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && p.Exp.Word.Lit() == "P" {
		out.promptExpand = true
	}
	if p.Excl && p.Names == 0 && !isListIndex(p.Index) {
		// ${!x}; ${!x*}, ${!x@} and ${!a[@]} only list names or keys.
		out.indirect = true
	}
	if p.NestedParam != nil {
		collectExpansions(&syntax.Word{Parts: []syntax.WordPart{p.NestedParam}}, out)
	}
	if p.Index != nil && !isListIndex(p.Index) {
		if w, ok := p.Index.(*syntax.Word); ok && p.Param != nil {
			// Whether this is a key or arithmetic depends on how the
			// array was declared; the analyzer decides.
			out.assocIndex = append(out.assocIndex, w)
			out.assocNames = append(out.assocNames, p.Param.Value)
		} else {
			out.ariths = append(out.ariths, p.Index)
		}
	}
	if p.Slice != nil {
		if p.Slice.Offset != nil {
			out.ariths = append(out.ariths, p.Slice.Offset)
		}
		if p.Slice.Length != nil {
			out.ariths = append(out.ariths, p.Slice.Length)
		}
	}
	if p.Repl != nil {
		collectExpansions(p.Repl.Orig, out)
		collectExpansions(p.Repl.With, out)
	}
	if p.Exp != nil {
		collectExpansions(p.Exp.Word, out)
		if (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) && p.Param != nil {
			out.assigns = append(out.assigns, p.Param.Value)
		}
	}
}

// isListIndex reports whether a subscript is @ or *, which lists all
// elements and evaluates nothing.
func isListIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	l := w.Lit()
	return l == "@" || l == "*"
}

// collectExpansions notes the expansions inside a word nested in a
// parameter expansion.
func collectExpansions(w *syntax.Word, out *word) {
	if w == nil {
		return
	}
	var sb strings.Builder
	inner := word{known: true}
	for i, part := range w.Parts {
		evalPart(&inner, &sb, part, i == 0, false)
	}
	out.merge(inner)
}

// merge adds what evaluating inner runs or evaluates to w.
func (w *word) merge(inner word) {
	w.subst = append(w.subst, inner.subst...)
	w.params = append(w.params, inner.params...)
	w.assigns = append(w.assigns, inner.assigns...)
	w.ariths = append(w.ariths, inner.ariths...)
	w.assocIndex = append(w.assocIndex, inner.assocIndex...)
	w.assocNames = append(w.assocNames, inner.assocNames...)
	w.indirect = w.indirect || inner.indirect
	w.translated = w.translated || inner.translated
	w.promptExpand = w.promptExpand || inner.promptExpand
}

// unescapeUnquoted removes backslashes from an unquoted literal and notes
// unescaped glob characters.
func unescapeUnquoted(v string, out *word) string {
	if !strings.ContainsAny(v, "\\*?[") {
		return v
	}
	var sb strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			if v[i] != '\n' {
				sb.WriteByte(v[i])
			}
			continue
		case c == '*' || c == '?':
			out.glob = true
		case c == '[' && strings.IndexByte(v[i+1:], ']') >= 0:
			// A ] right after [ is part of the bracket ([]h] matches ] or
			// h), so any ] after the [ may close one.
			out.glob = true
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// unescapeBackslashes applies bash's backslash rules where only some
// characters can be escaped: inside double quotes $ ` " \ and newline
// (escapable "$`\"\\"), in an unquoted here-document the same without ".
func unescapeBackslashes(v, escapable string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var sb strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch {
			case v[i+1] == '\n':
				i++
				continue
			case strings.IndexByte(escapable, v[i+1]) >= 0:
				i++
				c = v[i]
			}
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// ansiC decodes the body of a $'…' string as bash 5 does (ansicstr in its
// lib/sh/strtrans.c, read for the parser): \a \b \e \E \f \n \r \t \v,
// \\ \' \" \?; one to three octal digits and one or two hex digits after
// \x, any number inside \x{…}, each taken modulo 256; \cX a control
// character (\c? is DEL, \c\\ one backslash); \u and \U with up to four and
// eight hex digits; any other escape, and one with no digits, kept as it is.
// The string ends at the first byte that decodes to NUL: bash keeps it in a
// C string. known is false when the bytes depend on the locale bash runs
// in: a \u or \U above 0x7f is UTF-8 in a UTF-8 locale and `\u00E9` as
// text in the C locale.
func ansiC(s string) (v string, known bool) {
	var sb strings.Builder
	known = true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			c = '\a'
		case 'b':
			c = '\b'
		case 'e', 'E':
			c = 0x1b
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'v':
			c = '\v'
		case '\\', '\'', '"', '?':
			c = e
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := int(e - '0')
			for k := 0; k < 2 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; k++ {
				i++
				n = n*8 + int(s[i]-'0')
			}
			c = byte(n)
		case 'x':
			n, digits := 0, 0
			if i+1 < len(s) && s[i+1] == '{' {
				i++
				for i+1 < len(s) && hexDigit(s[i+1]) >= 0 {
					i++
					n = (n*16 + hexDigit(s[i])) & 0xff
				}
				if i+1 < len(s) && s[i+1] == '}' {
					i++
				}
				c = byte(n)
				break
			}
			for ; digits < 2 && i+1 < len(s) && hexDigit(s[i+1]) >= 0; digits++ {
				i++
				n = n*16 + hexDigit(s[i])
			}
			if digits == 0 {
				sb.WriteString("\\x")
				continue
			}
			c = byte(n)
		case 'u', 'U':
			width := 4
			if e == 'U' {
				width = 8
			}
			r, digits := 0, 0
			for ; digits < width && i+1 < len(s) && hexDigit(s[i+1]) >= 0; digits++ {
				i++
				r = r*16 + hexDigit(s[i])
			}
			if digits == 0 {
				sb.WriteByte('\\')
				sb.WriteByte(e)
				continue
			}
			if r > 0x7f {
				known = false // the locale decides
				sb.WriteString(unknownShape)
				continue
			}
			c = byte(r)
		case 'c':
			if i+1 == len(s) {
				sb.WriteString("\\c") // \c at the end stays
				continue
			}
			i++
			x := s[i]
			if x == '\\' && i+1 < len(s) && s[i+1] == '\\' {
				i++ // POSIX's $'\c\\'
			}
			if x == '?' {
				c = 0x7f
			} else {
				c = asciiUpper(x) & 0x1f
			}
		default:
			sb.WriteByte('\\')
			c = e
		}
		if c == 0 {
			break
		}
		sb.WriteByte(c)
	}
	return sb.String(), known
}

// hexDigit is the value of hex digit c, or -1.
func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func asciiUpper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// hasBraceExpansion reports whether an unquoted {a,b} or {x..y} would make
// bash expand the word into several.
func hasBraceExpansion(w *syntax.Word) bool {
	hasBrace := false
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			hasBrace = true
		}
	}
	if !hasBrace {
		return false
	}
	// SplitBraces rewrites the word in place; work on a copy.
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	return syntax.SplitBraces(cp)
}

// maxBraceFields bounds how far a brace expansion is followed.
const maxBraceFields = 256

// braceFields expands a literal word with brace expansion into the words
// bash would produce; ok is false when that is not possible statically.
func braceFields(w *syntax.Word) (fields []string, ok bool) {
	words, ok := braceWords(w)
	for _, bw := range words {
		fields = append(fields, bw.text)
	}
	return fields, ok
}

// braceWords is braceFields keeping what each field is: a field can start
// with a tilde the shell expands (cat {~/.ssh/id_rsa,x}) or be a glob.
func braceWords(w *syntax.Word) (words []word, ok bool) {
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(cp) {
		return nil, false
	}
	for bw, err := range expand.BracesSeq(nil, cp) {
		if err != nil || len(words) >= maxBraceFields {
			return nil, false
		}
		ev := word{known: true}
		var sb strings.Builder
		for i, part := range bw.Parts {
			evalPart(&ev, &sb, part, i == 0, false)
		}
		if !ev.known {
			return nil, false
		}
		ev.text = sb.String()
		words = append(words, ev)
	}
	return words, true
}
