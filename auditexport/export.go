// Package auditexport sends the audit log's events to the collectors a
// team already runs (syslog; see config.AuditExport), from outside the
// shim: it reads the local log, which stays the record, from a cursor
// kept per collector, so a collector that is down costs a command nothing
// and loses nothing — the next run sends what is left.
package auditexport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/state"
	"github.com/execgate/execgate/shim"
)

// BatchSize is how many events are sent before the cursor moves on: at
// most that many are held in memory, and at most that many are sent
// twice when a run is cut short.
const BatchSize = 256

// Record is one event as exported: the line as the log holds it (already
// redacted when it was written) and what it says.
type Record struct {
	Event shim.Event
	Line  []byte
}

// Sender delivers records to one collector.
type Sender interface {
	// Send delivers recs, all or an error; a Sender may be called again
	// after an error.
	Send(ctx context.Context, recs []Record) error
	Close() error
}

// Position is a place in the audit log that survives rotation: the seq
// of the last chained line at or before it, and how many unchained lines
// after that one it is.
type Position struct {
	Seq   int64
	Extra int64
}

func (p Position) after(q Position) bool {
	return p.Seq > q.Seq || p.Seq == q.Seq && p.Extra > q.Extra
}

// Result says what a run did.
type Result struct {
	Sent int
	// Restarted is set when the cursor was past the whole log (the log
	// was deleted and began again): everything in it was sent.
	Restarted bool
	Cursor    Position
}

// Run sends every event of log past target's cursor, in batches, moving
// the cursor (a file under dir) after each batch the collector took.
func Run(ctx context.Context, log *shim.AuditLog, target config.ExportTarget, dir string, send Sender) (Result, error) {
	cur := cursorPath(dir, target)
	var res Result
	at, err := readCursor(cur)
	if err != nil {
		return res, err
	}
	res.Cursor = at
	var last Position
	var batch []Record
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := send.Send(ctx, batch); err != nil {
			return fmt.Errorf("%s %s: %w", target.Kind, target.Where(), err)
		}
		if err := writeCursor(cur, last); err != nil {
			return err
		}
		res.Sent += len(batch)
		res.Cursor = last
		batch = batch[:0]
		return nil
	}
	// A first pass finds where the log ends, to tell a cursor past it.
	var end Position
	if _, err := log.ReadConsistent(positions(func(p Position, _ shim.Event, _ []byte) error {
		end = p
		return nil
	})); err != nil {
		return res, err
	}
	if at.after(end) {
		at, res.Restarted = Position{}, true
	}
	_, err = log.ReadConsistent(positions(func(p Position, ev shim.Event, line []byte) error {
		if !p.after(at) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = append(batch, Record{Event: ev, Line: bytes.Clone(line)})
		last = p
		if len(batch) < BatchSize {
			return nil
		}
		return flush()
	}))
	if err == nil {
		err = flush()
	}
	return res, err
}

// positions wraps fn with each event's Position.
func positions(fn func(Position, shim.Event, []byte) error) func(shim.Event, []byte) error {
	var p Position
	return func(ev shim.Event, line []byte) error {
		if ev.Seq > 0 {
			p = Position{Seq: ev.Seq}
		} else {
			p.Extra++
		}
		return fn(p, ev, line)
	}
}

// cursorPath is the cursor file of target under dir.
func cursorPath(dir string, target config.ExportTarget) string {
	return filepath.Join(dir, "export", target.ID()+".cursor")
}

// readCursor reads a cursor file: "v1 SEQ EXTRA". None yet is the start.
// A damaged one is an error, not the start: sending the whole log again
// is not what anyone wants by surprise.
func readCursor(path string) (Position, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Position{}, nil
	}
	if err != nil {
		return Position{}, fmt.Errorf("export cursor: %w", err)
	}
	f := strings.Fields(string(raw))
	if len(f) == 3 && f[0] == "v1" {
		seq, err1 := strconv.ParseInt(f[1], 10, 64)
		extra, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 == nil && err2 == nil && seq >= 0 && extra >= 0 {
			return Position{Seq: seq, Extra: extra}, nil
		}
	}
	return Position{}, fmt.Errorf("export cursor %s is damaged: remove it to send the whole log again", path)
}

// writeCursor replaces the cursor file whole (a new file renamed over
// it), so that a crash leaves the old cursor or the new, never half.
func writeCursor(path string, p Position) error {
	if err := state.MkdirPrivate(filepath.Dir(path)); err != nil {
		return fmt.Errorf("export cursor: %w", err)
	}
	tmp := path + ".new"
	data := fmt.Sprintf("v1 %d %d\n", p.Seq, p.Extra)
	if err := os.WriteFile(tmp, []byte(data), state.FileMode); err != nil {
		return fmt.Errorf("export cursor: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("export cursor: %w", err)
	}
	return nil
}

// timeout bounds one batch's delivery when ctx sets no deadline: a
// collector that accepts and then stalls must not hold the run forever.
const timeout = 10 * time.Second
