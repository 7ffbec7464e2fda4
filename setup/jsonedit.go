package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Limits on a settings file: real ones are a few kilobytes and a few levels
// deep. Past these the file is refused rather than parsed, so that no input
// can exhaust memory or the stack.
const (
	maxSettingsBytes = 8 << 20
	maxDepth         = 200
)

// edit is one change execgate makes to a settings file.
type edit struct {
	// path names the member, from the root object: every element but the
	// last names an object.
	path []string
	// value is the member's value (set), or the element to add to the
	// array the member holds (appendTo), as JSON.
	value json.RawMessage
	// appendTo adds value to an array instead of setting the member.
	appendTo bool
	// same recognises an element of the array that already does what value
	// would (appendTo only); nil means an element equal to value.
	same func(elem any) bool
}

// appliedEdit is an edit as Apply made it, recorded so that Undo can take it
// out again even when the user has edited the file since.
type appliedEdit struct {
	Path     []string        `json:"path"`
	Append   bool            `json:"append,omitempty"`
	Value    json.RawMessage `json:"value"`
	Previous json.RawMessage `json:"previous,omitempty"` // set: the value it replaced
	// Created counts the containers at the end of the path that the edit
	// created (objects, and the array for an append), which Undo removes
	// again when they are left empty.
	Created int `json:"created,omitempty"`
}

// docError is a settings file execgate refuses to change; its message names
// the problem, the caller names the file.
type docError struct{ msg string }

func (e *docError) Error() string { return e.msg }

func docErrorf(format string, a ...any) error { return &docError{fmt.Sprintf(format, a...)} }

// document is a settings file parsed with everything that is not a value
// (whitespace, comments, the order of members) kept, so that packing it
// gives back the original bytes plus execgate's edits.
type document struct {
	root    hujson.Value
	unit    string // one level of indentation, as the file writes it
	newline string // "\n", or "\r\n" in a file that ends its lines so
	// colon is the file's spacing around a member's colon (before, after),
	// for members added to empty objects.
	colon [2]hujson.Extra
}

// parseDocument parses a settings file. An empty file is an empty object;
// anything else must be a JSON object (with comments and trailing commas only
// when the agent reads them).
func parseDocument(raw []byte, comments bool) (*document, error) {
	if len(raw) > maxSettingsBytes {
		return nil, docErrorf("is larger than %d MiB, too large for a settings file", maxSettingsBytes>>20)
	}
	d := &document{unit: detectIndent(raw), newline: "\n", colon: [2]hujson.Extra{nil, hujson.Extra(" ")}}
	if bytes.Contains(raw, []byte("\r\n")) {
		d.newline = "\r\n"
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		d.root = hujson.Value{Value: &hujson.Object{}, AfterExtra: hujson.Extra(d.newline)}
		return d, nil
	}
	if depth(raw) > maxDepth {
		return nil, docErrorf("is nested more than %d levels deep", maxDepth)
	}
	root, err := hujson.Parse(raw)
	if err != nil {
		return nil, docErrorf("is not valid JSON (%s)", strings.TrimPrefix(err.Error(), "hujson: "))
	}
	if !comments && !root.IsStandard() {
		return nil, docErrorf("is not valid JSON (it has comments or trailing commas)")
	}
	if !standardValid(root) {
		return nil, docErrorf("is not valid JSON")
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, docErrorf("is not a JSON object")
	}
	if len(obj.Members) > 0 {
		m := obj.Members[0]
		if m.Name.AfterExtra.IsStandard() && m.Value.BeforeExtra.IsStandard() {
			d.colon = [2]hujson.Extra{m.Name.AfterExtra, m.Value.BeforeExtra}
		}
	}
	d.root = root
	return d, nil
}

// standardValid double-checks a parsed value with encoding/json, the
// stricter parser.
func standardValid(v hujson.Value) bool {
	c := v.Clone()
	c.Standardize()
	return json.Valid(c.Pack())
}

func (d *document) pack() []byte { return d.root.Pack() }

// detectIndent returns the file's indentation unit: the leading whitespace of
// its first indented line, or two spaces.
func detectIndent(raw []byte) string {
	for line := range bytes.Lines(raw) {
		n := len(line) - len(bytes.TrimLeft(line, " \t"))
		if n > 0 && n < len(bytes.TrimRight(line, "\r\n")) {
			if n > 8 {
				n = 8
			}
			return string(line[:n])
		}
	}
	return "  "
}

// depth returns how deeply arrays and objects nest in raw, skipping strings
// and comments. It only guards the parser, so it need not be exact for
// malformed input.
func depth(raw []byte) int {
	d, deepest := 0, 0
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(raw) && raw[i+1] == '/':
			for i < len(raw) && raw[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(raw) && raw[i+1] == '*':
			end := bytes.Index(raw[i+2:], []byte("*/"))
			if end < 0 {
				return deepest
			}
			i += end + 3
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// step is one member on an edit's path.
type step struct {
	parent *hujson.Object
	key    string
	value  *hujson.Value
	indent string // indentation of the line the member starts on
	lines  bool   // its object has one member per line
}

// kindName names a JSON value's type for an error message.
func kindName(v hujson.ValueTrimmed) string {
	switch v.Kind() {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 'n':
		return "null"
	}
	return "a boolean"
}

// findMember returns the index of key in obj, or -1. A key that appears twice
// is an error: agents read the last one and other tools the first, so editing
// either would be a guess.
func findMember(obj *hujson.Object, key string, path []string) (int, error) {
	found := -1
	for i := range obj.Members {
		name, ok := obj.Members[i].Name.Value.(hujson.Literal)
		if !ok || name.String() != key {
			continue
		}
		if found >= 0 {
			return -1, docErrorf("has the key %s twice", dotted(path))
		}
		found = i
	}
	return found, nil
}

// dotted shows a path the way people write it: env.CLAUDE_CODE_SHELL.
func dotted(path []string) string {
	quoted := make([]string, len(path))
	for i, p := range path {
		if p == "" || strings.ContainsAny(p, ".\"[] ") {
			p = fmt.Sprintf("%q", p)
		}
		quoted[i] = p
	}
	return strings.Join(quoted, ".")
}

// lineIndent returns the indentation a value starting after extra is on:
// what follows the last newline of extra, or inherited when extra has none.
func lineIndent(extra hujson.Extra, inherited string) string {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return inherited
	}
	rest := extra[i+1:]
	return string(rest[:len(rest)-len(bytes.TrimLeft(rest, " \t"))])
}

// walk follows path from the root through objects. With create it adds the
// missing members (objects, and for the last one lastValue) and reports how
// many it created; without, it stops at the first missing member and returns
// the steps it found. A member of the wrong type is an error either way.
func (d *document) walk(path []string, create bool, last json.RawMessage) (steps []step, created int, err error) {
	obj := d.root.Value.(*hujson.Object)
	indent := lineIndent(d.root.BeforeExtra, "")
	lines := linesOf(obj.Members, true)
	for i, key := range path {
		idx, err := findMember(obj, key, path[:i+1])
		if err != nil {
			return nil, 0, err
		}
		if idx < 0 {
			if !create {
				return steps, 0, nil
			}
			value := json.RawMessage("{}")
			if i == len(path)-1 {
				value = last
			}
			if idx, err = d.insertMember(obj, indent, lines, key, value); err != nil {
				return nil, 0, err
			}
			created++
		}
		m := &obj.Members[idx]
		s := step{parent: obj, key: key, value: &m.Value, indent: lineIndent(m.Name.BeforeExtra, indent), lines: lines}
		steps = append(steps, s)
		if i == len(path)-1 {
			break
		}
		next, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			return nil, 0, docErrorf("has %s as %s, not an object", dotted(path[:i+1]), kindName(m.Value.Value))
		}
		obj, indent, lines = next, s.indent, linesOf(next.Members, lines)
	}
	return steps, created, nil
}

// layout is how the members or elements of one container are written.
type layout struct {
	lines  bool   // one per line
	indent string // their indentation, when lines
	sep    string // what precedes each one, when not lines
}

// linesOf tells whether an object's members are one per line; an empty
// object is laid out like the one it is in.
func linesOf(members []hujson.ObjectMember, inherited bool) bool {
	if len(members) == 0 {
		return inherited
	}
	return bytes.IndexByte(members[len(members)-1].Name.BeforeExtra, '\n') >= 0
}

// layoutOf derives a container's layout from its last item's leading
// extra, or for an empty container, from the container it is in (lines):
// one per line one level deeper than the container's own line, or compact.
func (d *document) layoutOf(lastBefore hujson.Extra, empty bool, indent string, lines bool) layout {
	if empty {
		return layout{lines: lines, indent: indent + d.unit}
	}
	if bytes.IndexByte(lastBefore, '\n') >= 0 {
		return layout{lines: true, indent: lineIndent(lastBefore, indent)}
	}
	if lastBefore.IsStandard() {
		return layout{sep: string(lastBefore)}
	}
	return layout{sep: " "}
}

func (d *document) before(l layout) hujson.Extra {
	if l.lines {
		return hujson.Extra(d.newline + l.indent)
	}
	return hujson.Extra(l.sep)
}

// render parses value laid out for its place: indented from the line it
// starts on, or compact.
func (d *document) render(value json.RawMessage, l layout) (hujson.ValueTrimmed, error) {
	var buf bytes.Buffer
	var err error
	if l.lines {
		err = json.Indent(&buf, value, l.indent, d.unit)
	} else {
		err = json.Compact(&buf, value)
	}
	if err != nil {
		return nil, fmt.Errorf("lay out value %.40q: %w", value, err)
	}
	text := buf.Bytes()
	if d.newline != "\n" {
		text = bytes.ReplaceAll(text, []byte("\n"), []byte(d.newline))
	}
	v, err := hujson.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("lay out value %.40q: %w", value, err)
	}
	return v.Value, nil
}

// closeEmpty puts a formerly empty container's closing bracket on its own
// line, unless the user wrote comments there.
func (d *document) closeEmpty(after *hujson.Extra, indent string) {
	if after.IsStandard() {
		*after = hujson.Extra(d.newline + indent)
	}
}

// insertMember appends key: value to obj, laid out like its other members,
// and returns its index.
func (d *document) insertMember(obj *hujson.Object, indent string, lines bool, key string, value json.RawMessage) (int, error) {
	n := len(obj.Members)
	var lastBefore hujson.Extra
	colon := d.colon
	trailingComma := false
	if n > 0 {
		last := obj.Members[n-1]
		lastBefore = last.Name.BeforeExtra
		if last.Name.AfterExtra.IsStandard() && last.Value.BeforeExtra.IsStandard() {
			colon = [2]hujson.Extra{last.Name.AfterExtra, last.Value.BeforeExtra}
		}
		trailingComma = last.Value.AfterExtra != nil
	}
	l := d.layoutOf(lastBefore, n == 0, indent, lines)
	rendered, err := d.render(value, l)
	if err != nil {
		return -1, err
	}
	if n == 0 && l.lines {
		d.closeEmpty(&obj.AfterExtra, indent)
	}
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: d.before(l), Value: hujson.String(key), AfterExtra: slices.Clone(colon[0])},
		Value: hujson.Value{BeforeExtra: slices.Clone(colon[1]), Value: rendered},
	}
	if trailingComma {
		m.Value.AfterExtra = hujson.Extra{}
	}
	obj.Members = append(obj.Members, m)
	return n, nil
}

// appendElement adds value to arr, laid out like its other elements.
func (d *document) appendElement(arr *hujson.Array, indent string, lines bool, value json.RawMessage) error {
	n := len(arr.Elements)
	var lastBefore hujson.Extra
	trailingComma := false
	if n > 0 {
		lastBefore = arr.Elements[n-1].BeforeExtra
		trailingComma = arr.Elements[n-1].AfterExtra != nil
	}
	l := d.layoutOf(lastBefore, n == 0, indent, lines)
	rendered, err := d.render(value, l)
	if err != nil {
		return err
	}
	if n == 0 && l.lines {
		d.closeEmpty(&arr.AfterExtra, indent)
	}
	e := hujson.Value{BeforeExtra: d.before(l), Value: rendered}
	if trailingComma {
		e.AfterExtra = hujson.Extra{}
	}
	arr.Elements = append(arr.Elements, e)
	return nil
}

// decode turns a parsed value into Go values (json.Number for numbers), for
// comparing what a file holds with what execgate writes.
func decode(v hujson.Value) any {
	c := v.Clone()
	c.Standardize()
	return decodeJSON(c.Pack())
}

func decodeJSON(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil
	}
	return x
}

func equalJSON(v hujson.Value, raw json.RawMessage) bool {
	return reflect.DeepEqual(decode(v), decodeJSON(raw))
}

// trimmed returns a value's JSON text without what surrounds it.
func trimmed(v hujson.Value) json.RawMessage {
	v.BeforeExtra, v.AfterExtra = nil, nil
	c := v.Clone()
	c.Standardize()
	var buf bytes.Buffer
	if err := json.Compact(&buf, c.Pack()); err != nil {
		return json.RawMessage(c.Pack())
	}
	return buf.Bytes()
}

// apply makes e, reporting what it did; changed is false when the file
// already had it.
func (d *document) apply(e edit) (a appliedEdit, changed bool, err error) {
	a = appliedEdit{Path: e.path, Append: e.appendTo, Value: e.value}
	initial := e.value
	if e.appendTo {
		initial = json.RawMessage("[" + string(e.value) + "]")
	}
	steps, created, err := d.walk(e.path, true, initial)
	if err != nil {
		return a, false, err
	}
	if e.appendTo {
		a.Created = created
	} else {
		a.Created = max(created-1, 0) // the member itself is not a container
	}
	if created > 0 {
		return a, true, nil
	}
	s := steps[len(steps)-1]
	if !e.appendTo {
		if equalJSON(*s.value, e.value) {
			return a, false, nil
		}
		rendered, err := d.render(e.value, layout{lines: s.lines, indent: s.indent})
		if err != nil {
			return a, false, err
		}
		a.Previous = trimmed(*s.value)
		s.value.Value = rendered
		return a, true, nil
	}
	arr, ok := s.value.Value.(*hujson.Array)
	if !ok {
		return a, false, docErrorf("has %s as %s, not an array", dotted(e.path), kindName(s.value.Value))
	}
	same := e.same
	if same == nil {
		want := decodeJSON(e.value)
		same = func(elem any) bool { return reflect.DeepEqual(elem, want) }
	}
	for _, el := range arr.Elements {
		if same(decode(el)) {
			return a, false, nil
		}
	}
	if err := d.appendElement(arr, s.indent, s.lines, e.value); err != nil {
		return a, false, err
	}
	return a, true, nil
}

// has reports whether the document holds what e writes, for checking the
// result of an edit before it is written.
func (d *document) has(e edit) bool {
	steps, _, err := d.walk(e.path, false, nil)
	if err != nil || len(steps) < len(e.path) {
		return false
	}
	v := steps[len(steps)-1].value
	if !e.appendTo {
		return equalJSON(*v, e.value)
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return false
	}
	same := e.same
	if same == nil {
		want := decodeJSON(e.value)
		same = func(elem any) bool { return reflect.DeepEqual(elem, want) }
	}
	return slices.ContainsFunc(arr.Elements, func(el hujson.Value) bool { return same(decode(el)) })
}

// revertResult is what reverting one edit found.
type revertResult int

const (
	revertGone    revertResult = iota // the entry was no longer there
	revertDone                        // the entry was taken out
	revertChanged                     // the entry was changed since: left alone
)

// revert takes out what a made: the member it set (or the value it
// replaced, put back) or the element it appended, and then the containers it
// created when they are left empty.
func (d *document) revert(a appliedEdit) (revertResult, error) {
	steps, _, err := d.walk(a.Path, false, nil)
	if err != nil {
		var de *docError
		if errors.As(err, &de) {
			// The user restructured the file: what execgate added is not
			// where it put it, so there is nothing of it to take out.
			return revertGone, nil
		}
		return revertGone, err
	}
	if len(steps) < len(a.Path) {
		return revertGone, nil
	}
	last := steps[len(steps)-1]
	containers := steps[:len(steps)-1]
	if a.Append {
		containers = steps
		arr, ok := last.value.Value.(*hujson.Array)
		if !ok {
			return revertGone, nil
		}
		i := slices.IndexFunc(arr.Elements, func(el hujson.Value) bool { return equalJSON(el, a.Value) })
		if i < 0 {
			return revertGone, nil
		}
		removeAt(&arr.Elements, &arr.AfterExtra, i, elementParts)
	} else {
		if !equalJSON(*last.value, a.Value) {
			return revertChanged, nil
		}
		if a.Previous != nil {
			rendered, err := d.render(a.Previous, layout{lines: last.lines, indent: last.indent})
			if err != nil {
				return revertGone, err
			}
			last.value.Value = rendered
			return revertDone, nil
		}
		removeMember(last.parent, last.key)
	}
	for i := len(containers) - 1; i >= len(containers)-a.Created && i >= 0; i-- {
		if !isEmpty(containers[i].value) {
			break
		}
		removeMember(containers[i].parent, containers[i].key)
	}
	return revertDone, nil
}

func isEmpty(v *hujson.Value) bool {
	switch c := v.Value.(type) {
	case *hujson.Object:
		return len(c.Members) == 0 && c.AfterExtra.IsStandard()
	case *hujson.Array:
		return len(c.Elements) == 0 && c.AfterExtra.IsStandard()
	}
	return false
}

func removeMember(obj *hujson.Object, key string) {
	i := slices.IndexFunc(obj.Members, func(m hujson.ObjectMember) bool {
		name, ok := m.Name.Value.(hujson.Literal)
		return ok && name.String() == key
	})
	if i >= 0 {
		removeAt(&obj.Members, &obj.AfterExtra, i, memberParts)
	}
}

// memberParts and elementParts return what removeAt needs of an item: the
// extra before it and its value (whose after-extra marks a trailing comma).
func memberParts(m *hujson.ObjectMember) (*hujson.Extra, *hujson.Value) {
	return &m.Name.BeforeExtra, &m.Value
}

func elementParts(e *hujson.Value) (*hujson.Extra, *hujson.Value) { return &e.BeforeExtra, e }

// removeAt deletes item i of a container (whose closing extra is after),
// keeping the container's punctuation valid (a trailing comma only if it had
// one) and any comment written before the item.
func removeAt[T any](items *[]T, after *hujson.Extra, i int, parts func(*T) (*hujson.Extra, *hujson.Value)) {
	s := *items
	_, lastValue := parts(&s[len(s)-1])
	trailingComma := lastValue.AfterExtra != nil
	var carry hujson.Extra
	if before, _ := parts(&s[i]); !before.IsStandard() {
		carry = slices.Clone(*before)
	}
	s = slices.Delete(s, i, i+1)
	*items = s
	switch {
	case len(s) == 0:
		*after = append(carry, *after...)
		if after.IsStandard() {
			*after = nil
		}
		return
	case i < len(s):
		before, _ := parts(&s[i])
		*before = append(carry, *before...)
	default:
		*after = append(carry, *after...)
	}
	_, newLast := parts(&s[len(s)-1])
	switch {
	case !trailingComma && newLast.AfterExtra != nil:
		*after = append(slices.Clone(newLast.AfterExtra), *after...)
		newLast.AfterExtra = nil
	case trailingComma && newLast.AfterExtra == nil:
		newLast.AfterExtra = hujson.Extra{}
	}
}
