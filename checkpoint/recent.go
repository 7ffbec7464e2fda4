package checkpoint

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Recent lists the checkpoints of every workspace kept below stateDir,
// newest first, at most n: what the approvers (execgate approve, execgate
// web) offer to undo. A workspace whose store does not read is skipped.
func Recent(stateDir string, n int) ([]Info, error) {
	dirs, err := os.ReadDir(filepath.Join(stateDir, "checkpoints"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	var out []Info
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		s := &Store{dir: filepath.Join(stateDir, "checkpoints", d.Name())}
		infos, _ := s.List()
		// The store is named after its root: a description naming another
		// root was not written by this store.
		for _, i := range infos {
			if storeName(i.Root) == d.Name() {
				out = append(out, i)
			}
		}
	}
	slices.SortFunc(out, func(a, b Info) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(a.Root, b.Root), cmp.Compare(b.Seq, a.Seq))
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// storeName is the directory of a workspace's store below checkpoints/.
func storeName(root string) string {
	key := sha256.Sum256([]byte(root))
	return fmt.Sprintf("%x", key[:12])
}

// UndoIn undoes checkpoint seq of the workspace root, as `execgate undo`
// does there (the same merge and refusal), or with preview only says what
// it would change, changing nothing. It is the one entry the command line
// and the approvers share.
func UndoIn(ctx context.Context, stateDir, root string, seq uint64, preview bool) (*Report, error) {
	if !filepath.IsAbs(root) || filepath.Clean(root) != root {
		return nil, fmt.Errorf("checkpoint: workspace %q is not a clean absolute path", root)
	}
	s, err := Open(stateDir, root, Limits{})
	if err != nil {
		return nil, err
	}
	if s.Root != root {
		// A .git appeared above it since: the checkpoints named are of
		// root alone.
		s = s.at(root)
	}
	if preview {
		return s.Preview(ctx, seq)
	}
	return s.Undo(ctx, seq)
}

// at is s for the workspace root exactly.
func (s *Store) at(root string) *Store {
	t := *s
	t.Root = root
	_, err := os.Lstat(filepath.Join(root, ".git"))
	t.Git = err == nil
	t.dir = filepath.Join(filepath.Dir(s.dir), storeName(root))
	t.obj = objects{dir: filepath.Join(t.dir, "objects")}
	return &t
}

// Summary is the one line that says what an undo did, or for a preview
// what it would do: the same words wherever it is shown.
func (r *Report) Summary() string {
	how := ""
	if r.Kept > 0 {
		how = fmt.Sprintf("; merged: keeps %d %s later commands changed", r.Kept, plural(r.Kept, "path", "paths"))
	}
	if r.Preview {
		if r.Changed() == 0 {
			return fmt.Sprintf("undo checkpoint %d: nothing to change (the workspace already holds what it recorded)%s", r.Seq, how)
		}
		return fmt.Sprintf("undo checkpoint %d would restore %d, recreate %d and remove %d %s%s",
			r.Seq, len(r.Restored), len(r.Recreated), len(r.Removed), plural(r.Changed(), "path", "paths"), how)
	}
	how = strings.Replace(how, "keeps", "kept", 1)
	return fmt.Sprintf("undid checkpoint %d: %d restored, %d recreated, %d removed%s (execgate undo %d takes this back)",
		r.Seq, len(r.Restored), len(r.Recreated), len(r.Removed), how, r.Saved)
}

// Paths lists the paths an undo changed (or would), each with what
// happens to it, at most max of each kind and a line for the rest.
func (r *Report) Paths(max int) []string {
	var out []string
	for _, l := range []struct {
		verb  string
		paths []string
	}{{"restored", r.Restored}, {"recreated", r.Recreated}, {"removed", r.Removed}, {"left (holds files not covered)", r.Left}} {
		for i, p := range l.paths {
			if i == max {
				out = append(out, fmt.Sprintf("… and %d more %s", len(l.paths)-max, l.verb))
				break
			}
			out = append(out, l.verb+" "+p)
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
