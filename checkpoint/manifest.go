package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Kind is the type of a workspace entry.
type Kind uint8

// Kinds of entries. Other covers FIFOs, sockets and devices: they are
// listed, so that undo can say it does not recreate them, but never opened.
const (
	KindFile Kind = 1 + iota
	KindDir
	KindLink
	KindOther
)

func (k Kind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindDir:
		return "directory"
	case KindLink:
		return "symbolic link"
	case KindOther:
		return "special file"
	}
	return fmt.Sprintf("kind %d", k)
}

// Missing says why a file's content is not in the store.
type Missing uint8

// Reasons a file's content was not kept.
const (
	Kept        Missing = iota // the content is in the store
	TooLarge                   // larger than Limits.FileBytes
	Unreadable                 // it could not be read
	OverBudget                 // the checkpoint had copied Limits.TakeBytes already
	missingNext                // the first value that is not one
)

func (m Missing) String() string {
	switch m {
	case Kept:
		return "kept"
	case TooLarge:
		return "too large to keep"
	case Unreadable:
		return "could not be read"
	case OverBudget:
		return "past the copy budget of one checkpoint"
	}
	return fmt.Sprintf("missing %d", m)
}

// Entry is one path of the workspace as a checkpoint saw it.
type Entry struct {
	// Path is relative to the workspace, with / between its names.
	Path string
	Kind Kind
	// Mode holds the permission bits with setuid, setgid and sticky
	// (07777).
	Mode uint32
	// Size and Hash (SHA-256) describe a file's content; Missing says
	// whether the store has it.
	Size    int64
	Hash    [32]byte
	Missing Missing
	// Blob is the git blob id of a file whose content is not in the
	// store but in the workspace's repository (see gitblob.go), "" for
	// one the store holds.
	Blob string
	// Link is a symbolic link's target, as written.
	Link string

	// The stat cache: an entry whose size, times, inode and device are
	// unchanged at the next scan is taken to be unchanged, unless Racy
	// (it changed so close to the scan that a later change could keep the
	// same times).
	Mtime, Ctime int64
	Ino, Dev     uint64
	Racy         bool
}

// Same reports whether a and b are the same state of a path: kind,
// permissions, content and link target (the stat cache aside).
func (e *Entry) Same(o *Entry) bool {
	if e == nil || o == nil {
		return e == o
	}
	if e.Kind != o.Kind || e.Mode != o.Mode {
		return false
	}
	switch e.Kind {
	case KindFile:
		return e.Size == o.Size && e.Hash == o.Hash && e.Missing == Kept && o.Missing == Kept
	case KindLink:
		return e.Link == o.Link
	}
	return true
}

// Change is one path that differs between two states: Before or After is
// nil where the path did not exist.
type Change struct {
	Path          string
	Before, After *Entry
}

// comparePaths orders paths as a walk that sorts each directory's names
// visits them: name by name, so that a directory's entries follow it
// directly ("a", "a/b", "a.b").
func comparePaths(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// within reports whether p is dir or lies beneath it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// validPath reports whether p is a clean relative path: names separated by
// single slashes, none empty, ".", ".." or holding a NUL.
func validPath(p string) bool {
	if p == "" || len(p) > maxPath {
		return false
	}
	for name := range strings.SplitSeq(p, "/") {
		if name == "" || name == "." || name == ".." || strings.IndexByte(name, 0) >= 0 {
			return false
		}
	}
	return true
}

// maxPath bounds a path as Linux does (PATH_MAX).
const maxPath = 4096

// The files of a chain share one framing: a magic line, a kind byte, the
// body, and the SHA-256 of all that before it, so that a file cut short by
// a crash or changed by hand is known as damaged instead of being read as
// a state the workspace never had.
const magic = "execgate-checkpoint-2\n"

// File kinds.
const (
	fileScan   byte = 'S' // a whole listing, with the stat cache
	fileRecord byte = 'R' // the changes from one state to the next
)

// ErrDamaged is returned for a chain file that does not read back.
var ErrDamaged = errors.New("damaged")

// listing is a whole workspace listing, ordered by comparePaths.
type listing struct {
	Seq     uint64
	Entries []Entry
}

// encodeListing frames l as a scan file.
func encodeListing(l *listing) []byte {
	var b bytes.Buffer
	b.Grow(len(magic) + 1 + 16 + len(l.Entries)*80)
	b.WriteString(magic)
	b.WriteByte(fileScan)
	putUvarint(&b, l.Seq)
	putUvarint(&b, uint64(len(l.Entries)))
	for i := range l.Entries {
		putEntry(&b, &l.Entries[i], true)
	}
	return seal(b.Bytes())
}

// decodeListing reads a scan file.
func decodeListing(data []byte) (*listing, error) {
	body, err := unseal(data, fileScan)
	if err != nil {
		return nil, err
	}
	return decodeListingBody(body)
}

func decodeListingBody(body []byte) (*listing, error) {
	// The paths of a listing are cut from one copy of the body instead of
	// being allocated one by one: a listing holds every path of the
	// workspace, and is read before every checkpoint.
	r := reader{b: body, s: string(body)}
	l := &listing{Seq: r.uvarint()}
	n := r.count(minEntryBytes)
	l.Entries = make([]Entry, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		e := r.entry(true)
		if r.err == nil && i > 0 && comparePaths(l.Entries[i-1].Path, e.Path) >= 0 {
			r.fail("paths out of order: %q after %q", e.Path, l.Entries[i-1].Path)
		}
		l.Entries = append(l.Entries, e)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the last entry", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return l, nil
}

// record is the changes from the state Seq to the next one in the chain.
type record struct {
	Seq     uint64
	Changes []Change
}

func encodeRecord(rec *record) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	b.WriteByte(fileRecord)
	putUvarint(&b, rec.Seq)
	putUvarint(&b, uint64(len(rec.Changes)))
	for _, c := range rec.Changes {
		putString(&b, c.Path)
		var flags byte
		if c.Before != nil {
			flags |= 1
		}
		if c.After != nil {
			flags |= 2
		}
		b.WriteByte(flags)
		if c.Before != nil {
			putEntry(&b, c.Before, false)
		}
		if c.After != nil {
			putEntry(&b, c.After, false)
		}
	}
	return seal(b.Bytes())
}

func decodeRecord(data []byte) (*record, error) {
	body, err := unseal(data, fileRecord)
	if err != nil {
		return nil, err
	}
	return decodeRecordBody(body)
}

func decodeRecordBody(body []byte) (*record, error) {
	r := reader{b: body}
	rec := &record{Seq: r.uvarint()}
	n := r.count(2)
	rec.Changes = make([]Change, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		c := Change{Path: r.path()}
		flags := r.byte()
		if flags == 0 || flags > 3 {
			r.fail("change %q: flags %d", c.Path, flags)
		}
		if flags&1 != 0 {
			e := r.entry(false)
			c.Before = &e
		}
		if flags&2 != 0 {
			e := r.entry(false)
			c.After = &e
		}
		for _, e := range []*Entry{c.Before, c.After} {
			if r.err == nil && e != nil && e.Path != c.Path {
				r.fail("change %q holds an entry for %q", c.Path, e.Path)
			}
		}
		if r.err == nil && i > 0 && comparePaths(rec.Changes[i-1].Path, c.Path) >= 0 {
			r.fail("paths out of order: %q after %q", c.Path, rec.Changes[i-1].Path)
		}
		rec.Changes = append(rec.Changes, c)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the last change", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return rec, nil
}

// seal appends the checksum.
func seal(b []byte) []byte {
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// unseal checks the framing and returns the body.
func unseal(data []byte, kind byte) ([]byte, error) {
	if len(data) < len(magic)+1+sha256.Size || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: not a checkpoint file of this version", ErrDamaged)
	}
	n := len(data) - sha256.Size
	if sum := sha256.Sum256(data[:n]); !bytes.Equal(sum[:], data[n:]) {
		return nil, fmt.Errorf("%w: checksum does not match (cut short or edited)", ErrDamaged)
	}
	if data[len(magic)] != kind {
		return nil, fmt.Errorf("%w: file kind %q, want %q", ErrDamaged, data[len(magic)], kind)
	}
	return data[len(magic)+1 : n], nil
}

func putUvarint(b *bytes.Buffer, v uint64) {
	var tmp [binary.MaxVarintLen64]byte
	b.Write(tmp[:binary.PutUvarint(tmp[:], v)])
}

func putVarint(b *bytes.Buffer, v int64) {
	var tmp [binary.MaxVarintLen64]byte
	b.Write(tmp[:binary.PutVarint(tmp[:], v)])
}

func putString(b *bytes.Buffer, s string) {
	putUvarint(b, uint64(len(s)))
	b.WriteString(s)
}

// putEntry writes e; stat adds the stat cache (scan files only).
func putEntry(b *bytes.Buffer, e *Entry, stat bool) {
	putString(b, e.Path)
	b.WriteByte(byte(e.Kind))
	putUvarint(b, uint64(e.Mode))
	switch e.Kind {
	case KindFile:
		putVarint(b, e.Size)
		b.WriteByte(byte(e.Missing))
		if e.Missing == Kept {
			b.Write(e.Hash[:])
			putString(b, e.Blob)
		}
	case KindLink:
		putString(b, e.Link)
	}
	if stat {
		putVarint(b, e.Mtime)
		putVarint(b, e.Ctime)
		putUvarint(b, e.Ino)
		putUvarint(b, e.Dev)
		if e.Racy {
			b.WriteByte(1)
		} else {
			b.WriteByte(0)
		}
	}
}

// minEntryBytes is the smallest encoding of an entry: a one-byte path
// length and name, kind and mode.
const minEntryBytes = 4

// reader decodes a body, keeping the first error.
type reader struct {
	b   []byte
	s   string // when set, the whole body, strings are cut from
	err error
}

func (r *reader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrDamaged, fmt.Sprintf(format, a...))
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail("cut short")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a number of items each at least min bytes long, refusing
// one the rest of the body cannot hold (so that a damaged count never
// allocates).
func (r *reader) count(min int) int {
	v := r.uvarint()
	if r.err == nil && v > uint64(len(r.b)/min) {
		r.fail("%d items cannot fit in %d bytes", v, len(r.b))
		return 0
	}
	return int(v)
}

func (r *reader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail("cut short")
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) string(max int) string {
	n := r.uvarint()
	if r.err == nil && n > uint64(max) {
		r.fail("string of %d bytes", n)
		return ""
	}
	if r.s == "" {
		return string(r.bytes(n))
	}
	off := len(r.s) - len(r.b)
	if r.bytes(n) == nil && n > 0 {
		return ""
	}
	return r.s[off : off+int(n)]
}

func (r *reader) path() string {
	p := r.string(maxPath)
	if r.err == nil && !validPath(p) {
		r.fail("invalid path %q", p)
	}
	return p
}

func (r *reader) entry(stat bool) Entry {
	e := Entry{Path: r.path(), Kind: Kind(r.byte())}
	mode := r.uvarint()
	if r.err == nil && (e.Kind < KindFile || e.Kind > KindOther) {
		r.fail("%q: unknown kind %d", e.Path, e.Kind)
	}
	if r.err == nil && mode&^0o7777 != 0 {
		r.fail("%q: mode %o", e.Path, mode)
	}
	e.Mode = uint32(mode)
	switch e.Kind {
	case KindFile:
		e.Size = r.varint()
		e.Missing = Missing(r.byte())
		if r.err == nil && (e.Size < 0 || e.Missing >= missingNext) {
			r.fail("%q: size %d, content %d", e.Path, e.Size, e.Missing)
		}
		if e.Missing == Kept {
			copy(e.Hash[:], r.bytes(sha256.Size))
			e.Blob = r.string(64)
			if r.err == nil && e.Blob != "" && !validOID(e.Blob) {
				r.fail("%q: blob id %q", e.Path, e.Blob)
			}
		}
	case KindLink:
		e.Link = r.string(maxPath)
		if r.err == nil && (e.Link == "" || strings.IndexByte(e.Link, 0) >= 0) {
			r.fail("%q: link target %q", e.Path, e.Link)
		}
	}
	if stat {
		e.Mtime, e.Ctime = r.varint(), r.varint()
		e.Ino, e.Dev = r.uvarint(), r.uvarint()
		switch r.byte() {
		case 0:
		case 1:
			e.Racy = true
		default:
			r.fail("%q: bad flag", e.Path)
		}
	}
	return e
}
