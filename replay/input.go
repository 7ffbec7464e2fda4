package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"time"

	"github.com/execgate/execgate/policy"
)

// The agents' policy ids, as the transcripts' formats name them.
const (
	agentClaude = policy.AgentClaudeCode
	agentCodex  = policy.AgentCodex
	agentGemini = policy.AgentGeminiCLI
)

// input is one transcript being read.
type input struct {
	name string
	r    io.Reader
	// at reads the same bytes again, for the line numbers of a JSON
	// document's records; nil when they cannot be told.
	at io.ReaderAt
	// max is the longest record read (MaxRecord unless a test says).
	max int
	// problems counts the problems reported for this file.
	problems int
}

// maxProblemsPerFile bounds the problem lines one file gets: a file that
// is not a transcript at all says so in a few lines, not in thousands.
const maxProblemsPerFile = 20

// report reports a problem unless the file already had its share; the
// ones beyond it are counted, and said in one line at the end (unlisted).
func (in *input) report(s Sink, line int, what string) {
	if in.problems < maxProblemsPerFile {
		s.Problem(Problem{File: in.name, Line: line, What: what})
	}
	in.problems++
}

// unlisted says how many problems report left out, if any.
func (in *input) unlisted(s Sink) {
	if n := in.problems - maxProblemsPerFile; n > 0 {
		s.Problem(Problem{File: in.name, What: fmt.Sprintf("%d more records could not be read (not listed)", n)})
	}
}

// eachLine calls fn with every line of a JSON Lines file and its number,
// reporting lines that are too long and a last line cut short. A blank
// line is skipped.
func (in *input) eachLine(s Sink, fn func(n int, line []byte) error) error {
	lr := newLineReader(in.r, in.maxRecord())
	for {
		line, size, truncated, err := lr.next()
		switch {
		case err == io.EOF:
			return nil
		case err == errTooLong:
			in.report(s, lr.n, fmt.Sprintf("a record of %d bytes, more than the %d replay reads; skipped", size, in.maxRecord()))
			continue
		case err != nil:
			return fmt.Errorf("%s: line %d: %w", in.name, lr.n+1, err)
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		if truncated && !json.Valid(line) {
			in.report(s, lr.n, "the file ends in the middle of a record (truncated, or still being written); skipped")
			continue
		}
		if err := fn(lr.n, line); err != nil {
			return err
		}
	}
}

func (in *input) maxRecord() int {
	if in.max > 0 {
		return in.max
	}
	return MaxRecord
}

// checkJSON reports a line that is not JSON at all. Lines without a
// command are only checked, not decoded: that is most of a transcript.
func (in *input) checkJSON(s Sink, n int, line []byte) error {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		in.report(s, n, describeJSON(err))
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}

// describeJSON says what is wrong with a record, in a few words.
func describeJSON(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "not valid JSON"
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON (at byte %d of the record: %s)", se.Offset, se.Error())
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "the record"
		}
		return fmt.Sprintf("%s is a JSON %s, not the %s replay expects", field, te.Value, te.Type)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "not valid JSON (it ends in the middle of a value)"
	}
	return err.Error()
}

// parseTime reads an RFC 3339 time; zero when it is not one.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// idSet remembers the tool-call ids one file has had, so that a call the
// agent recorded twice (a message rewritten as it streamed, a history
// restated when a session resumes) counts once. It keeps 8 bytes of hash
// per id, never the ids.
type idSet struct {
	seed maphash.Seed
	seen map[uint64]struct{}
}

func newIDSet() *idSet { return &idSet{seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}} }

// add reports whether id is new; an empty id always is.
func (s *idSet) add(id string) bool {
	if id == "" {
		return true
	}
	h := maphash.String(s.seed, id)
	if _, ok := s.seen[h]; ok {
		return false
	}
	s.seen[h] = struct{}{}
	return true
}
