package gitconfig

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxIndex bounds the index read (a repository of a million files has an
// index of about 100 MiB; such a repository is past maxWalk anyway).
const maxIndex = 64 << 20

// IndexEntry is what this package needs of one index entry.
type IndexEntry struct {
	Name          string
	Mode          uint32
	Size          uint32
	MtimeSec      uint32
	MtimeNsec     uint32
	Stage         int
	SkipWorktree  bool
	SparseDirHint bool // a sparse-index directory entry (mode 040000)
}

// ReadIndex parses an index file's entries (gitformat-index(5), versions
// 2, 3 and 4) with hashSize-byte object names. A split index (the link
// extension), whose entries live in another file, is an error: the
// entries read would not be all of them.
func ReadIndex(b []byte, hashSize int) ([]IndexEntry, error) {
	if len(b) < 12+hashSize || string(b[:4]) != "DIRC" {
		return nil, errors.New("not an index file")
	}
	version := binary.BigEndian.Uint32(b[4:])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("index version %d", version)
	}
	count := binary.BigEndian.Uint32(b[8:])
	end := len(b) - hashSize
	pos := 12
	fixed := 40 + hashSize + 2
	out := make([]IndexEntry, 0, min(int(count), 1<<16))
	prev := ""
	for i := uint32(0); i < count; i++ {
		if pos+fixed > end {
			return nil, errors.New("truncated index entry")
		}
		e := IndexEntry{
			MtimeSec:  binary.BigEndian.Uint32(b[pos+8:]),
			MtimeNsec: binary.BigEndian.Uint32(b[pos+12:]),
			Mode:      binary.BigEndian.Uint32(b[pos+24:]),
			Size:      binary.BigEndian.Uint32(b[pos+36:]),
		}
		flags := binary.BigEndian.Uint16(b[pos+40+hashSize:])
		e.Stage = int(flags>>12) & 3
		n := pos + fixed
		if flags&0x4000 != 0 {
			if version < 3 {
				return nil, errors.New("extended flags in a version 2 index")
			}
			if n+2 > end {
				return nil, errors.New("truncated index entry")
			}
			e.SkipWorktree = binary.BigEndian.Uint16(b[n:])&0x4000 != 0
			n += 2
		}
		if version == 4 {
			strip, m, err := varint(b[n:end])
			if err != nil {
				return nil, err
			}
			n += m
			if strip > uint64(len(prev)) {
				return nil, errors.New("bad prefix length in index entry")
			}
			z := indexByte(b[n:end], 0)
			if z < 0 {
				return nil, errors.New("unterminated index entry name")
			}
			e.Name = prev[:len(prev)-int(strip)] + string(b[n:n+z])
			pos = n + z + 1
		} else {
			z := indexByte(b[n:end], 0)
			if z < 0 {
				return nil, errors.New("unterminated index entry name")
			}
			e.Name = string(b[n : n+z])
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			pos += (n - pos + z + 8) &^ 7
		}
		e.SparseDirHint = e.Mode&0o170000 == 0o040000
		prev = e.Name
		out = append(out, e)
	}
	for pos+8 <= end {
		sig := string(b[pos : pos+4])
		size := int(binary.BigEndian.Uint32(b[pos+4:]))
		if sig == "link" {
			return nil, errors.New("a split index (its entries are in a shared index file)")
		}
		if size < 0 || pos+8+size > end {
			return nil, errors.New("truncated index extension")
		}
		pos += 8 + size
	}
	return out, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// varint is git's offset varint (varint.c's decode_varint).
func varint(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errors.New("truncated varint")
	}
	c := b[0]
	v := uint64(c & 127)
	n := 1
	for c&128 != 0 {
		v++
		if v == 0 || v>>57 != 0 {
			return 0, 0, errors.New("varint overflow")
		}
		if n >= len(b) {
			return 0, 0, errors.New("truncated varint")
		}
		c = b[n]
		n++
		v = v<<7 + uint64(c&127)
	}
	return v, n, nil
}

// indexAttributes checks the .gitattributes files the index holds
// against the working tree, where attributeDrivers read them: git reads
// an attributes file from the index when the working tree has none
// (a deleted file, skip-worktree, a sparse directory), and before the
// working tree's when it writes files out (checkout). Such a file's
// content execgate cannot see (it is an object), so it is an error;
// for checkout it is an error unless the working tree's file is the one
// staged, as far as its size and modification time say (what git
// itself trusts).
func (c *Config) indexAttributes(root string, checkout bool) error {
	if c.env("GIT_INDEX_FILE") != "" {
		return errors.New("GIT_INDEX_FILE names another index")
	}
	p := filepath.Join(c.Repo.GitDir, "index")
	b, err := readLimited(p, maxIndex)
	if err != nil {
		if notExist(err) {
			return nil
		}
		return fmt.Errorf("cannot read the index %s: %w", p, err)
	}
	hashSize := 20
	for _, e := range c.Entries {
		if e.Name == "extensions.objectformat" && strings.EqualFold(e.Value, "sha256") {
			hashSize = 32
		}
	}
	entries, err := ReadIndex(b, hashSize)
	if err != nil {
		return fmt.Errorf("cannot read the index %s: %w", p, err)
	}
	for _, e := range entries {
		if e.SparseDirHint {
			return fmt.Errorf("the index %s has sparse directories, whose .gitattributes are not in the working tree", p)
		}
		if path.Base(e.Name) != ".gitattributes" {
			continue
		}
		file := filepath.Join(root, filepath.FromSlash(e.Name))
		fi, err := os.Lstat(file)
		switch {
		case e.SkipWorktree || e.Stage != 0 || err != nil:
			return fmt.Errorf("%s is in the index but not (as staged) in the working tree: git may read the staged attributes", e.Name)
		case checkout && (uint32(fi.Size()) != e.Size || uint32(fi.ModTime().Unix()) != e.MtimeSec || uint32(fi.ModTime().Nanosecond()) != e.MtimeNsec):
			return fmt.Errorf("%s was changed since it was staged: git reads the staged attributes when it writes files", e.Name)
		}
	}
	return nil
}
