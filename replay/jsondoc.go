package replay

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonDoc reads one JSON document token by token, so that a file of any
// size is held one record at a time, and says on which line each record
// starts.
type jsonDoc struct {
	dec   *json.Decoder
	lines *lineCounter
}

func newJSONDoc(r io.Reader, at io.ReaderAt) *jsonDoc {
	d := &jsonDoc{dec: json.NewDecoder(r)}
	d.dec.UseNumber()
	if at != nil {
		d.lines = &lineCounter{r: bufio.NewReaderSize(io.NewSectionReader(at, 0, 1<<62), 64<<10), line: 1}
	}
	return d
}

// line is the line the next value starts on (0 when it cannot be told).
func (d *jsonDoc) line() int {
	if d.lines == nil {
		return 0
	}
	return d.lines.startOfValue(d.dec.InputOffset())
}

// lineAt is the line of byte offset off.
func (d *jsonDoc) lineAt(off int64) int {
	if d.lines == nil {
		return 0
	}
	return d.lines.at(off)
}

// delim reads the next token and requires it to be want.
func (d *jsonDoc) delim(want json.Delim) error {
	tok, err := d.dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("want %q, found %v", want, describeToken(tok))
	}
	return nil
}

// object reads an object, calling fn with each key; fn must read the
// value (decode or skip it).
func (d *jsonDoc) object(fn func(key string) error) error {
	if err := d.delim('{'); err != nil {
		return err
	}
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("want an object key, found %v", describeToken(tok))
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	return d.delim('}')
}

// array reads an array, calling fn for each element; fn must read it.
func (d *jsonDoc) array(fn func() error) error {
	if err := d.delim('['); err != nil {
		return err
	}
	for d.dec.More() {
		if err := fn(); err != nil {
			return err
		}
	}
	return d.delim(']')
}

// skip reads past one value, token by token: nothing of it is kept.
func (d *jsonDoc) skip() error {
	depth := 0
	for {
		tok, err := d.dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// decode reads the next value into v and returns the line it starts on.
// A value of the wrong shape is read past and reported as a recoverable
// error (see recoverable); any other error ends the document.
func (d *jsonDoc) decode(v any) (int, error) {
	line := d.line()
	return line, d.dec.Decode(v)
}

// recoverable reports whether err left the document readable: the value
// had the wrong shape but was read whole.
func recoverable(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(t))
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// lineCounter reads a second copy of the document forward only, counting
// newlines, to tell the line of an offset the decoder has reached.
type lineCounter struct {
	r    *bufio.Reader
	pos  int64
	line int
}

// at advances to off (never back) and returns its line.
func (c *lineCounter) at(off int64) int {
	for c.pos < off {
		b, err := c.r.ReadByte()
		if err != nil {
			break
		}
		c.pos++
		if b == '\n' {
			c.line++
		}
	}
	return c.line
}

// startOfValue advances to off and past the white space and comma after
// it, where the next value starts, and returns that line.
func (c *lineCounter) startOfValue(off int64) int {
	c.at(off)
	for {
		b, err := c.r.Peek(1)
		if err != nil {
			return c.line
		}
		switch b[0] {
		case ' ', '\t', '\r', ',', ':':
		case '\n':
			c.line++
		default:
			return c.line
		}
		c.r.ReadByte()
		c.pos++
	}
}

// describe turns a decoder's error into the line it is on and what it is,
// for a problem line.
func (d *jsonDoc) describe(err error) (int, string) {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return d.lineAt(se.Offset), "not valid JSON: " + se.Error()
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return d.lineAt(d.dec.InputOffset()), "the file ends in the middle of a JSON value (truncated?)"
	}
	return d.line(), err.Error()
}
