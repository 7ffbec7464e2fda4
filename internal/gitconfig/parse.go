package gitconfig

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Entry is one variable git reads from its configuration.
type Entry struct {
	// Name is the variable's canonical name, as git compares it: the
	// section and the key in lower case, the subsection as written
	// (section.subsection.key, or section.key).
	Name string
	// Value is the value after git's unquoting and escapes.
	Value string
	// NoValue is set for a variable written without "=", which git reads
	// as boolean true.
	NoValue bool
	// Origin is the file the entry was read from, or where else it came
	// from ("the command line (-c)", "GIT_CONFIG_KEY_0" …).
	Origin string
	// Line is the entry's line in Origin (0 when it is not a file).
	Line int
}

// Section returns the entry's section, in lower case.
func (e Entry) Section() string {
	s, _, _ := strings.Cut(e.Name, ".")
	return s
}

// Key returns the entry's key (the part after the last dot), in lower
// case.
func (e Entry) Key() string {
	return e.Name[strings.LastIndexByte(e.Name, '.')+1:]
}

// Subsection returns the entry's subsection ("" when it has none), as
// written.
func (e Entry) Subsection() string {
	first := strings.IndexByte(e.Name, '.')
	last := strings.LastIndexByte(e.Name, '.')
	if first < 0 || first == last {
		return ""
	}
	return e.Name[first+1 : last]
}

// Where renders the entry's origin for a reason: file:line, or the origin.
func (e Entry) Where() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d", e.Origin, e.Line)
	}
	return e.Origin
}

// Error is an error of this package that callers compare with
// errors.Is. A constant rather than a variable from errors.New: the shim
// links this package and runs no initialisation code.
type Error string

func (e Error) Error() string { return string(e) }

// ErrSyntax is wrapped by every parse error.
const ErrSyntax = Error("bad config")

// Parse reads a configuration file's text as git's config.c does
// (git_parse_source, get_base_var, get_value, parse_value): sections
// `[name]`, `[name "subsection"]` and the old `[name.subsection]`;
// section and key names case-insensitive (lower-cased), subsections
// case-sensitive; values with "…" quoting, the escapes \\ \" \n \t \b and
// backslash-newline continuation; comments after # and ;; CR LF line ends
// and a UTF-8 byte order mark at the start. It refuses what git refuses
// (git stops with "bad config line"), and also a NUL byte anywhere, which
// git cuts values at and which no real configuration holds.
func Parse(src []byte, origin string) ([]Entry, error) {
	p := &parser{src: src, origin: origin, line: 1}
	return p.parse()
}

type parser struct {
	src    []byte
	pos    int
	origin string
	line   int
	eof    bool
}

// next returns the next character as git's get_next_char does: CR LF
// reads as LF, and the end of the input as a final LF with eof set.
func (p *parser) next() byte {
	if p.pos >= len(p.src) {
		p.eof = true
		return '\n'
	}
	c := p.src[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.src) && p.src[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c
}

// isSpace is git's isspace (sane_ctype): space, tab, LF and CR only.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func isAlpha(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isKeyChar is git's iskeychar: alphanumeric or '-'.
func isKeyChar(c byte) bool {
	return isAlpha(c) || c >= '0' && c <= '9' || c == '-'
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%w: %s line %d: %s", ErrSyntax, p.origin, line, fmt.Sprintf(format, args...))
}

func (p *parser) parse() ([]Entry, error) {
	if i := bytes.IndexByte(p.src, 0); i >= 0 {
		return nil, p.errorf(1+bytes.Count(p.src[:i], []byte("\n")), "NUL byte")
	}
	if bytes.HasPrefix(p.src, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	}
	var out []Entry
	var section []byte // "name." or "name.subsection."
	comment := false
	for {
		start := p.line
		c := p.next()
		if c == '\n' {
			if p.eof {
				return out, nil
			}
			comment = false
			continue
		}
		if comment || isSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			name, err := p.sectionHeader()
			if err != nil || len(name) == 0 {
				return nil, p.errorf(start, "bad section header")
			}
			section = append(name, '.')
			continue
		}
		if !isAlpha(c) {
			return nil, p.errorf(start, "bad config line")
		}
		e, err := p.variable(section, c)
		if err != nil {
			return nil, p.errorf(start, "%v", err)
		}
		e.Origin, e.Line = p.origin, start
		out = append(out, e)
	}
}

// sectionHeader reads what follows "[": get_base_var and
// get_extended_base_var.
func (p *parser) sectionHeader() ([]byte, error) {
	var name []byte
	for {
		c := p.next()
		if p.eof {
			return nil, errors.New("unterminated section header")
		}
		if c == ']' {
			return name, nil
		}
		if isSpace(c) {
			return p.subsection(name, c)
		}
		if !isKeyChar(c) && c != '.' {
			return nil, fmt.Errorf("bad character %q in section name", c)
		}
		name = append(name, lower(c))
	}
}

// subsection reads ` "subsection"]` after a section name.
func (p *parser) subsection(name []byte, c byte) ([]byte, error) {
	for isSpace(c) {
		if c == '\n' {
			return nil, errors.New("incomplete section header")
		}
		c = p.next()
	}
	if c != '"' {
		return nil, errors.New(`subsection must be quoted`)
	}
	name = append(name, '.')
	for {
		c := p.next()
		if c == '\n' {
			return nil, errors.New("incomplete section header")
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			c = p.next()
			if c == '\n' {
				return nil, errors.New("incomplete section header")
			}
		}
		name = append(name, c)
	}
	if p.next() != ']' {
		return nil, errors.New(`missing "]" after the subsection`)
	}
	return name, nil
}

// variable reads a variable whose name starts with c: get_value.
func (p *parser) variable(section []byte, c byte) (Entry, error) {
	name := append(append([]byte(nil), section...), lower(c))
	for {
		c = p.next()
		if p.eof || !isKeyChar(c) {
			break
		}
		name = append(name, lower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	e := Entry{Name: string(name)}
	if c == '\n' {
		e.NoValue = true
		return e, nil
	}
	if c != '=' {
		return e, fmt.Errorf("bad character %q after the variable name", c)
	}
	v, err := p.value()
	e.Value = v
	return e, err
}

// value reads a value after "=": parse_value.
func (p *parser) value() (string, error) {
	var v []byte
	quote, comment, space := false, false, 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", errors.New("unterminated quote")
			}
			return string(v), nil
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if len(v) > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v = append(v, ' ')
		}
		if c == '\\' {
			c = p.next()
			switch c {
			case '\n':
				// A continuation line (or the end of the input, which
				// reads as a newline: the value ends there).
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", fmt.Errorf("unknown escape \\%c", c)
			}
			v = append(v, c)
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		v = append(v, c)
	}
}
