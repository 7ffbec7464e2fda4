package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/execgate/execgate/internal/display"
)

// Report is what Check finds in a configuration file and the managed
// policy merged over it.
type Report struct {
	Path string
	// Missing: there is no file, and the built-in defaults apply.
	Missing bool
	// Unusable is set when the file exists but cannot be used: every command
	// is refused until it is fixed.
	Unusable *UnusableError
	// Warnings are the problems ParseConfig works around, each replaced by
	// the strictest reading (see ParseConfig).
	Warnings []string

	// ManagedPath is the managed policy file; Managed is set when there is
	// one. ManagedUnusable, ManagedWarnings are its problems, as above.
	ManagedPath     string
	Managed         bool
	ManagedUnusable *UnusableError
	ManagedWarnings []string
	// Overruled lists the settings of the file that the managed policy
	// does not let apply (Config.ManagedConflicts).
	Overruled []string
}

// Check validates the configuration file at path and the managed policy,
// never writing either.
func Check(path string) Report { return check(path, ManagedPath()) }

func check(path, managedPath string) Report {
	r := Report{Path: path, ManagedPath: managedPath}
	cfg, _, warnings, err := loadUser(path)
	r.Warnings = warnings
	if err != nil {
		if u, ok := AsUnusable(err); ok {
			r.Unusable = u
		} else {
			r.Unusable = &UnusableError{Path: path, Err: err}
		}
	} else if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		r.Missing = true
	}
	m, mwarnings, merr := LoadManaged(managedPath)
	r.ManagedWarnings = mwarnings
	if merr != nil {
		r.Managed = true
		if u, ok := AsUnusable(merr); ok {
			r.ManagedUnusable = u
		} else {
			r.ManagedUnusable = &UnusableError{Path: managedPath, Err: merr, Managed: true}
		}
	}
	if m != nil {
		r.Managed = true
		if r.Unusable == nil {
			cfg.Managed = m
			r.Overruled = cfg.ManagedConflicts()
		}
	}
	return r
}

// OK reports whether all is fine: the file missing or used as written, the
// managed policy (if any) used as written, and nothing overruled.
func (r Report) OK() bool {
	return r.Unusable == nil && len(r.Warnings) == 0 && r.ManagedUnusable == nil &&
		len(r.ManagedWarnings) == 0 && len(r.Overruled) == 0
}

// Lines explains the report, one line per problem (or one line per file
// saying all is well), with the path shortened to ~ under home.
func (r Report) Lines(home string) []string {
	path := displayPath(r.Path, home)
	var lines []string
	switch {
	case r.Unusable != nil:
		lines = append(lines, fmt.Sprintf("%s: error: %s (the file cannot be used: every command is refused until it is fixed; 'execgate config edit' installs only a file that parses)",
			path, display.Flatten(r.Unusable.Err.Error(), 0)))
	case r.Missing:
		lines = append(lines, path+": no such file; the built-in defaults apply")
	case len(r.Warnings) == 0:
		lines = append(lines, path+": ok")
	}
	for _, w := range r.Warnings {
		lines = append(lines, path+": warning: "+display.Flatten(w, 0))
	}
	for _, o := range r.Overruled {
		lines = append(lines, path+": overruled: "+display.Flatten(o, 0))
	}
	if !r.Managed {
		return lines
	}
	mpath := displayPath(r.ManagedPath, home)
	switch {
	case r.ManagedUnusable != nil:
		lines = append(lines, fmt.Sprintf("%s: error: %s (the managed policy cannot be used: every command is refused until an administrator fixes it)",
			mpath, display.Flatten(r.ManagedUnusable.Err.Error(), 0)))
	case len(r.ManagedWarnings) == 0:
		lines = append(lines, mpath+": ok (a managed policy applies; it can only tighten yours)")
	}
	for _, w := range r.ManagedWarnings {
		lines = append(lines, mpath+": warning: "+display.Flatten(w, 0))
	}
	return lines
}

// starter is what an edit of a missing file begins with.
const starter = "{\n  \"version\": 1\n}\n"

// Edit is one hand edit of the configuration file: a copy beside it (same
// directory, so that installing it is one atomic rename away) that an editor
// changes, and that Install puts in place only if it parses and the file did
// not change meanwhile.
type Edit struct {
	store *Store
	// Copy is the file to edit. Install removes it once installed; on any
	// failure it is left, so that nothing typed is lost.
	Copy string
	// base is the hash of the file when copied; "" when there was none.
	base string
}

// BeginEdit copies the file, as it is (even when it does not parse: that is
// what there is to fix), to a new file beside it, mode 0600. A missing file
// gives a minimal one. A file that cannot be read (a directory, no
// permission, a symbolic link) cannot be edited this way.
func (s *Store) BeginEdit() (*Edit, error) {
	if err := s.prepare(); err != nil {
		return nil, fmt.Errorf("edit config: %w", err)
	}
	raw, exists, err := s.readRaw()
	if err != nil {
		return nil, fmt.Errorf("edit config: %w", err)
	}
	e := &Edit{store: s}
	if exists {
		e.base = hashBytes(raw)
	} else {
		raw = []byte(starter)
	}
	f, err := os.CreateTemp(filepath.Dir(s.Path), filepath.Base(s.Path)+".edit-*.json")
	if err != nil {
		return nil, fmt.Errorf("edit config %s: create a copy: %w", s.Path, pathless(err))
	}
	e.Copy = f.Name()
	_, werr := f.Write(raw)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(e.Copy)
		return nil, fmt.Errorf("edit config %s: write the copy: %w", s.Path, pathless(werr))
	}
	return e, nil
}

// InvalidEditError is Install's answer to a copy that does not parse.
type InvalidEditError struct {
	Copy string
	Err  error
}

func (e *InvalidEditError) Error() string { return e.Copy + ": " + e.Err.Error() }
func (e *InvalidEditError) Unwrap() error { return e.Err }

// Install validates the copy and, if it parses, replaces the file with it,
// byte for byte, atomically and under the writers' lock, then removes the
// copy. It returns ParseConfig's warnings about what was installed. A copy
// that does not parse is an *InvalidEditError; a file changed since
// BeginEdit is ErrStale; either way nothing is written and the copy stays.
func (e *Edit) Install(ctx context.Context) (warnings []string, err error) {
	raw, err := readConfigFile(e.Copy, true)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", e.Copy, err)
	}
	if _, warnings, err = ParseConfig(raw); err != nil {
		return nil, &InvalidEditError{Copy: e.Copy, Err: err}
	}
	s := e.store
	if err := s.prepare(); err != nil {
		return nil, fmt.Errorf("install config: %w", err)
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("install config %s: %w", s.Path, err)
	}
	defer unlock()
	current, exists, err := s.readRaw()
	if err != nil {
		return nil, fmt.Errorf("install config %s: %w", s.Path, err)
	}
	now := ""
	if exists {
		now = hashBytes(current)
	}
	if now != e.base {
		return nil, fmt.Errorf("install config %s: %w", s.Path, ErrStale)
	}
	if err := writeAtomic(s.Path, raw); err != nil {
		return nil, fmt.Errorf("install config %s: %w", s.Path, err)
	}
	os.Remove(e.Copy)
	return warnings, nil
}
