package replay

import (
	"bufio"
	"bytes"
	"io"
)

// MaxRecord is the longest record replay reads: a JSON Lines line, or one
// element of a JSON document's array. The commands are in small records;
// a longer one (an agent's pasted image, a huge tool output) is skipped
// with a problem line, never held in memory whole.
const MaxRecord = 32 << 20

// keepBuffer is the largest line buffer kept between lines: a buffer grown
// for one long line is let go, so that memory stays flat afterwards.
const keepBuffer = 1 << 20

// lineReader reads a JSON Lines file one line at a time.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
	n   int // the number of the line last returned
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// errTooLong is returned, with the line's size, for a line longer than
// the reader's maximum; the line has been read past. (A constant, not an
// errors.New: the package allocates nothing when the program starts.)
const errTooLong = constError("line too long")

// constError is an error that is a constant.
type constError string

func (e constError) Error() string { return string(e) }

// next returns the next line without its "\n" or "\r\n", valid until the
// next call. A line of more than max bytes is read to its end and
// dropped: err is then errTooLong and size says how long it was. The last
// line needs no newline; io.EOF means there was no line left. truncated
// reports a last line that did not end with a newline.
func (l *lineReader) next() (line []byte, size int64, truncated bool, err error) {
	if cap(l.buf) > keepBuffer {
		l.buf = nil
	}
	l.buf = l.buf[:0]
	over := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		size += int64(len(chunk))
		if !over {
			if len(l.buf)+len(chunk) > l.max+2 { // +2: room for the "\r\n"
				over = true
				l.buf = l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && size == 0:
			return nil, 0, false, io.EOF
		case err == io.EOF:
			truncated = true
		case err != nil:
			return nil, size, false, err
		}
		break
	}
	l.n++
	if over {
		return nil, size, truncated, errTooLong
	}
	line = bytes.TrimSuffix(l.buf, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, size, truncated, nil
}
