package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A format reads one kind of transcript.
type format func(in *input, s Sink) error

// formatOf picks the reader for a file by its name and, for JSON Lines,
// by its first line. "" is returned with a reason for a file that is no
// transcript replay reads.
func formatOf(name string, first []byte) (format, string) {
	base := filepath.Base(name)
	switch {
	case strings.HasSuffix(base, ".traj"), strings.HasSuffix(base, ".json"):
		return readDocument, ""
	case strings.HasSuffix(base, ".jsonl"):
	default:
		return nil, "not a transcript replay reads (it reads .jsonl, .json, .traj and .traj.json files)"
	}
	if strings.HasPrefix(base, "rollout-") {
		return readCodex, ""
	}
	var head map[string]json.RawMessage
	if json.Unmarshal(first, &head) == nil {
		_, typed := head["type"]
		_, id := head["id"]
		_, project := head["projectHash"]
		switch {
		case string(head["type"]) == `"session_meta"`, !typed && id && !project:
			return readCodex, "" // a rollout, new or from before the envelope
		case project:
			return readGeminiLog, ""
		}
	}
	if strings.HasPrefix(base, "session-") && filepath.Base(filepath.Dir(name)) == "chats" {
		return readGeminiLog, ""
	}
	return readClaude, ""
}

// ReadFile reads the transcript at name into s. Problems with its records
// go to s; the error is s's own, or ctx's.
func ReadFile(ctx context.Context, name string, s Sink) error {
	f, err := os.Open(name) // read-only: replay never writes a transcript
	if err != nil {
		s.Problem(Problem{File: name, What: "cannot be read: " + errText(err)})
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		s.Problem(Problem{File: name, What: "not a regular file; skipped"})
		return nil
	}
	err = Read(name, &ctxReader{ctx: ctx, r: f}, f, s)
	var ce ctxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return ce.err
	case ctx.Err() != nil:
		return ctx.Err()
	case isReadError(err):
		s.Problem(Problem{File: name, What: "could not be read to its end: " + errText(err)})
		return nil
	}
	return err
}

// Read reads one transcript from r, named name, into s: what ReadFile
// does with a file's bytes. at, when not nil, reads the same bytes again
// for the line numbers of a JSON document's records.
func Read(name string, r io.Reader, at io.ReaderAt, s Sink) error {
	br := bufio.NewReaderSize(r, 64<<10)
	first, _ := br.Peek(br.Size())
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	read, why := formatOf(name, first)
	if read == nil {
		s.Problem(Problem{File: name, What: why})
		return nil
	}
	in := &input{name: name, r: br, at: at}
	err := read(in, s)
	in.unlisted(s)
	return err
}

// isReadError reports an error reading the file (not the sink's).
func isReadError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) || errors.Is(err, io.ErrUnexpectedEOF)
}

// ctxReader stops reading when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

type ctxError struct{ err error }

func (e ctxError) Error() string { return e.err.Error() }
func (e ctxError) Unwrap() error { return e.err }

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, ctxError{err}
	}
	return c.r.Read(p)
}

// errText is an error without the path os adds to it, which the problem
// line already starts with.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Files calls fn with every transcript under the paths, in order: a file
// named is read whatever its name; a directory is walked (links to
// directories are not followed) for the files the agents write —
// *.jsonl (Claude Code's sessions, Codex's rollouts, Gemini CLI's
// chats), Gemini CLI's older chats/session-*.json, *.traj and
// *.traj.json. Gemini CLI's checkpoints and logs are only read when
// named: a checkpoint restates a chat, and the logs hold prompts only.
func Files(ctx context.Context, paths []string, problem func(Problem), fn func(name string) error) error {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			problem(Problem{File: p, What: "cannot be read: " + errText(err)})
			continue
		}
		if !st.IsDir() {
			if err := fn(p); err != nil {
				return err
			}
			continue
		}
		err = filepath.WalkDir(p, func(name string, d fs.DirEntry, err error) error {
			if err != nil {
				problem(Problem{File: name, What: "cannot be read: " + errText(err)})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if d.Type().IsRegular() && isTranscriptName(name) {
				return fn(name)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// isTranscriptName reports whether a file found by walking a directory is
// one replay reads.
func isTranscriptName(name string) bool {
	base := filepath.Base(name)
	switch {
	case strings.HasSuffix(base, ".jsonl"), strings.HasSuffix(base, ".traj"), strings.HasSuffix(base, ".traj.json"):
		return true
	case strings.HasSuffix(base, ".json"):
		return strings.HasPrefix(base, "session-") && filepath.Base(filepath.Dir(name)) == "chats"
	}
	return false
}

// DefaultPaths are the directories where the agents keep their
// transcripts for this user, those that exist: Claude Code's
// ($CLAUDE_CONFIG_DIR or ~/.claude)/projects, Codex's ($CODEX_HOME or
// ~/.codex)/sessions and archived_sessions, Gemini CLI's ~/.gemini/tmp.
func DefaultPaths(home string, getenv func(string) string) []string {
	or := func(env, def string) string {
		if v := getenv(env); v != "" {
			return v
		}
		return filepath.Join(home, def)
	}
	candidates := []string{
		filepath.Join(or("CLAUDE_CONFIG_DIR", ".claude"), "projects"),
		filepath.Join(or("CODEX_HOME", ".codex"), "sessions"),
		filepath.Join(or("CODEX_HOME", ".codex"), "archived_sessions"),
		filepath.Join(home, ".gemini", "tmp"),
	}
	var out []string
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			out = append(out, c)
		}
	}
	return out
}
