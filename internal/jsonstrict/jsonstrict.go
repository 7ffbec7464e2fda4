// Package jsonstrict checks that a text is one JSON value that every reader
// understands the same way. encoding/json keeps the last of two equal keys,
// other parsers the first; a file or a hook input that repeats a key could
// mean one thing to execgate and another to whoever wrote or runs it (a
// second "agents" block hiding a denylist, a second "command" hiding the one
// that runs), so such a text is refused, not guessed at.
package jsonstrict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DuplicateKeyError reports a key repeated within one object.
type DuplicateKeyError struct {
	// Key is the repeated key.
	Key string
	// Path holds the keys (and "[i]" array indexes) of the objects and
	// arrays that enclose it, outermost first; empty at the top level.
	Path []string
	// Offset is the byte offset of the second occurrence.
	Offset int64
}

func (e *DuplicateKeyError) Error() string {
	where := "at the top level"
	if len(e.Path) > 0 {
		where = "in " + strings.Join(e.Path, ".")
	}
	return fmt.Sprintf("duplicate key %s %s", strconv.Quote(e.Key), where)
}

// Check accepts exactly one JSON value, with no object key repeated at any
// depth and nothing but white space after it. It returns a
// *DuplicateKeyError for a repeated key and the decoder's error (or
// io.ErrUnexpectedEOF, or "data after the value") otherwise. The walk keeps
// its own stack, so deep nesting costs memory bounded by the input, never a
// goroutine stack overflow.
func Check(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		keys  map[string]bool // nil for an array
		index int             // the next element's index, for an array
		key   bool            // for an object: the next string token is a key
		last  string          // for an object: the key just read
		name  string          // this value's key or "[i]" in its parent
	}
	var stack []frame
	path := func() []string {
		p := make([]string, 0, len(stack))
		for _, f := range stack[1:] {
			p = append(p, f.name)
		}
		return p
	}
	for {
		start := dec.InputOffset()
		start += int64(len(raw[start:]) - len(bytes.TrimLeft(raw[start:], " \t\r\n,:")))
		tok, err := dec.Token()
		if err == io.EOF {
			return io.ErrUnexpectedEOF // the value never ended
		}
		if err != nil {
			return err
		}
		top := len(stack) - 1
		if key, ok := tok.(string); ok && top >= 0 && stack[top].keys != nil && stack[top].key {
			if stack[top].keys[key] {
				return &DuplicateKeyError{Key: key, Path: path(), Offset: start}
			}
			stack[top].keys[key] = true
			stack[top].key = false
			stack[top].last = key
			continue
		}
		// tok is a value: name it in its parent for the path.
		name := ""
		if top >= 0 {
			if stack[top].keys == nil {
				name = "[" + strconv.Itoa(stack[top].index) + "]"
				stack[top].index++
			} else {
				name = stack[top].last
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, key: true, name: name})
			continue
		case json.Delim('['):
			stack = append(stack, frame{name: name})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
		}
		if len(stack) == 0 {
			// One value read: anything after it is a second value.
			if _, err := dec.Token(); err != io.EOF {
				return errors.New("data after the value")
			}
			return nil
		}
		if f := &stack[len(stack)-1]; f.keys != nil {
			f.key = true // a value was read: a key comes next
		}
	}
}
