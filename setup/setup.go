package setup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrUsage marks errors in Options, as opposed to errors met on the way:
// an unknown agent, --hook for an agent without hooks.
var ErrUsage = errors.New("usage")

// Options say which integration to work on and where everything is.
type Options struct {
	// Agent is one of Agents().
	Agent string
	// Hook picks the hook integration of an agent that also has a shim
	// one (claude).
	Hook bool
	// AllVariants makes Undo revert both integrations of such an agent;
	// otherwise it reverts only the one Hook picks, leaving the other's
	// entries in the file.
	AllVariants bool
	// Settings is the agent's settings file; empty means its usual one.
	Settings string
	// Exe is the execgate binary, an absolute path with symbolic links
	// resolved: the hooks run it.
	Exe string
	// Shims is the directory of the shim links; empty means ShimDir(Exe).
	Shims string
	// Home is the user's home directory.
	Home string
	// StateDir is execgate's state directory ($XDG_STATE_HOME/execgate):
	// Apply records there what it did, for Undo.
	StateDir string
	// LoginShell is the user's login shell (see LoginShell) and Zsh the
	// real zsh on this machine ("" when there is none): when the one is a
	// zsh and the other exists, setup claude points CLAUDE_CODE_SHELL at
	// the zsh shim, so that Claude Code keeps the shell it would have
	// picked; else at the bash shim.
	LoginShell, Zsh string
	// Getenv reads the environment (CLAUDE_CONFIG_DIR, CODEX_HOME); nil
	// means os.Getenv.
	Getenv func(string) string
	// Now tells the time, for naming backups; nil means time.Now.
	Now func() time.Time
}

// Outcome is what Apply or Undo did.
type Outcome struct {
	// File is the settings file (symbolic links resolved); empty for an
	// agent that has none.
	File string
	// Changed reports that the file was written or removed.
	Changed bool
	// Created: Apply created the file; Undo removed the file Apply had
	// created.
	Created bool
	// Restored: Undo put back the exact bytes from before Apply.
	Restored bool
	// Backup is a copy of the file as it was before this change, when one
	// was made.
	Backup string
	// Kept lists entries Undo left in place because they were changed
	// since Apply made them.
	Kept []string
	// Warnings are settings that keep the integration from working.
	Warnings []string
	// Notes are what else the user needs to know or do.
	Notes []string
}

// Agents returns the names of the agents setup knows.
func Agents() []string {
	var names []string
	for _, a := range agentTable() {
		names = append(names, a.name)
	}
	return names
}

// ShimDir returns where install.sh puts the shims for the execgate binary
// exe: <prefix>/lib/execgate/shims beside <prefix>/bin/execgate.
func ShimDir(exe string) string {
	return filepath.Join(filepath.Dir(filepath.Dir(exe)), "lib", "execgate", "shims")
}

// job is Options checked and resolved.
type job struct {
	o     Options
	agent agent
	paths paths
	plan  plan
}

// undoes reports whether Undo reverts layer l: every layer of an agent with
// one integration, or with AllVariants; otherwise only the layers of the
// integration Hook picks, so that `setup claude --undo` leaves the hook a
// later `setup claude --hook --apply` added (and the other way round).
func (j *job) undoes(l layer) bool {
	if j.o.AllVariants || j.agent.hooks != optionalHook {
		return true
	}
	return l.hook() == j.o.Hook
}

func (o Options) job() (*job, error) {
	i := slices.IndexFunc(agentTable(), func(a agent) bool { return a.name == o.Agent })
	if i < 0 {
		return nil, fmt.Errorf("%w: unknown agent %q (want one of %s)", ErrUsage, o.Agent, strings.Join(Agents(), ", "))
	}
	a := agentTable()[i]
	if o.Hook && a.hooks == noHook {
		return nil, fmt.Errorf("%w: %s has no hooks; execgate setup %s shows how to use the shim with it", ErrUsage, a.title, a.name)
	}
	if o.Settings != "" && a.settings == nil {
		return nil, fmt.Errorf("%w: %s has no settings file for execgate to change", ErrUsage, a.title)
	}
	if !filepath.IsAbs(o.Exe) {
		return nil, fmt.Errorf("%w: the execgate binary %q is not an absolute path", ErrUsage, o.Exe)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Shims == "" {
		o.Shims = ShimDir(o.Exe)
	}
	shims, err := filepath.Abs(o.Shims)
	if err != nil {
		return nil, fmt.Errorf("shim directory %s: %w", o.Shims, err)
	}
	p, err := newPaths(o.Exe, shims, o.wantsZsh())
	if err != nil {
		return nil, err
	}
	return &job{o: o, agent: a, paths: p, plan: a.plan(p, o.Hook)}, nil
}

// settingsFile returns the settings file as given, or "" for an agent
// without one.
func (j *job) settingsFile() string {
	switch {
	case j.agent.settings == nil:
		return ""
	case j.o.Settings != "":
		return j.o.Settings
	}
	return j.agent.settings(j.o.Home, j.o.Getenv)
}

// display shows a path with the home directory as ~.
func (j *job) display(path string) string {
	home := filepath.Clean(j.o.Home)
	if j.o.Home != "" && home != "/" && strings.HasPrefix(path, home+string(filepath.Separator)) {
		return "~" + path[len(home):]
	}
	return path
}

// shimProblem says what is wrong with the shim the agent is given (the
// bash shim, or the zsh one), or "".
func (j *job) shimProblem() string {
	shim, err := os.Stat(j.paths.shell)
	if err != nil {
		return fmt.Sprintf("%s has no %s link to execgate; run ./install.sh to create it (or pass --shims DIR)", j.display(j.paths.shims), filepath.Base(j.paths.shell))
	}
	if exe, err := os.Stat(j.paths.exe); err == nil && !os.SameFile(shim, exe) && !isShellBinary(shim, j.paths.exe) {
		return fmt.Sprintf("%s is not a link to %s; run ./install.sh to fix it (or pass --shims DIR)", j.display(j.paths.shell), j.display(j.paths.exe))
	}
	return ""
}

// isShellBinary reports whether shim is execgate-shell, the lean shim
// binary install.sh puts beside the CLI exe and links the shims to.
func isShellBinary(shim os.FileInfo, exe string) bool {
	fi, err := os.Stat(filepath.Join(filepath.Dir(exe), "execgate-shell"))
	return err == nil && os.SameFile(shim, fi)
}

// Show writes the integration for o.Agent as a block to copy and paste:
// the JSON to merge into the settings file and the shell recipes, with
// comment lines saying what they do and which file --apply would change.
// It reads no settings file. notes are problems to tell the user about (a
// missing shim), one line each.
func Show(w io.Writer, o Options) (notes []string, err error) {
	j, err := o.job()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, line := range j.plan.about {
		fmt.Fprintf(&b, "# %s\n", line)
	}
	if len(j.plan.edits) > 0 {
		doc, _ := parseDocument(nil, false)
		for _, e := range j.plan.edits {
			if _, _, err := doc.apply(e); err != nil {
				return nil, fmt.Errorf("lay out the %s settings: %w", j.agent.title, err)
			}
		}
		b.Write(bytes.TrimSpace(doc.pack()))
		b.WriteByte('\n')
	}
	for _, r := range j.plan.recipes {
		if r.comment != "" {
			fmt.Fprintf(&b, "# %s\n", r.comment)
		}
		fmt.Fprintf(&b, "%s\n", r.line)
	}
	for _, n := range j.plan.notes {
		fmt.Fprintf(&b, "# %s\n", n)
	}
	if file := j.settingsFile(); file != "" {
		hook := ""
		if o.Hook && j.agent.hooks == optionalHook {
			hook = " --hook"
		}
		fmt.Fprintf(&b, "# would change %s: execgate setup %s%s --apply merges this into it, --undo takes it out again\n",
			j.display(file), j.agent.name, hook)
	} else {
		b.WriteString("# no settings file for execgate to change: use these lines by hand\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return nil, fmt.Errorf("write the %s integration: %w", j.agent.title, err)
	}
	if j.plan.shim || len(j.plan.recipes) > 0 {
		if p := j.shimProblem(); p != "" {
			notes = append(notes, p)
		}
	}
	return notes, nil
}

// refused is a settings file execgate will not change, in one line naming
// the file and the problem.
func (j *job) refused(file string, err error) error {
	var de *docError
	if errors.As(err, &de) {
		return fmt.Errorf("%s %s; left it unchanged", j.display(file), de.msg)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err) // the path is named already
	}
	return fmt.Errorf("%s: %w; left it unchanged", j.display(file), err)
}

// Apply merges the integration for o.Agent into its settings file: it
// creates the file (directory 0700, file 0600) if missing, keeps every other
// byte of an existing one, and changes nothing when the file already has the
// integration. Before writing it copies the file to a backup beside it, and
// it records in o.StateDir what it did, for Undo. The write is atomic and
// holds a lock on the file (symbolic links are followed to the real file)
// kept in o.StateDir; ctx bounds the wait for the lock. A file that is not valid JSON, or
// where a key execgate needs has another type, is refused and left alone.
func Apply(ctx context.Context, o Options) (*Outcome, error) {
	j, err := o.job()
	if err != nil {
		return nil, err
	}
	if err := j.needState(); err != nil {
		return nil, err
	}
	given := j.settingsFile()
	if given == "" {
		return &Outcome{Notes: []string{fmt.Sprintf("%s has no settings file for execgate to merge into; execgate setup %s shows what to run instead",
			j.agent.title, j.agent.name)}}, nil
	}
	if j.plan.shim {
		if p := j.shimProblem(); p != "" {
			return nil, errors.New(p)
		}
	}
	file, err := resolve(given)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.display(given), err)
	}
	unlock, err := lock(ctx, settingsLock(j.o.StateDir, file))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, fmt.Errorf("create directory for %s: %w", j.display(file), err)
	}

	raw, exists, mode, err := readFile(file, maxSettingsBytes)
	if err != nil {
		return nil, j.refused(file, err)
	}
	out := &Outcome{File: file, Notes: j.plan.notes}
	merged, applied, warnings, err := j.merge(raw)
	if err != nil {
		return nil, j.refused(file, err)
	}
	for _, w := range warnings {
		out.Warnings = append(out.Warnings, j.display(file)+": "+w)
	}
	if len(applied) == 0 {
		return out, nil
	}

	if exists {
		if out.Backup, err = writeBackup(file, raw, mode, j.o.Now()); err != nil {
			return nil, err
		}
	} else {
		mode = 0o600
	}
	l := layer{Backup: out.Backup, Created: !exists, After: hashBytes(merged), Edits: applied, At: j.o.Now().UTC(),
		Hook: j.o.Hook || j.agent.hooks == onlyHook}
	if exists {
		l.Before = hashBytes(raw)
	}
	// The record is written first: a crash after it leaves a record whose
	// hash does not match, which Undo handles; a crash before it would leave
	// changes Undo does not know about.
	err = j.updateState(ctx, func(st *state) { st.add(file, l) })
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(file, merged, mode, sameAs(file, raw, exists)); err != nil {
		rerr := j.updateState(ctx, func(st *state) {
			if r := st.find(file); r != nil && len(r.Layers) > 0 {
				r.Layers = r.Layers[:len(r.Layers)-1]
				if len(r.Layers) == 0 {
					st.drop(file)
				}
			}
		})
		return nil, errors.Join(fmt.Errorf("write %s: %w", j.display(file), err), rerr)
	}
	out.Changed, out.Created = true, !exists
	return out, nil
}

// merge makes the plan's edits to a settings file's bytes. applied is
// empty when the file already has them all; warnings are the guards the file
// trips.
func (j *job) merge(raw []byte) (merged []byte, applied []appliedEdit, warnings []string, err error) {
	doc, err := parseDocument(raw, j.agent.comments)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, g := range j.plan.guards {
		if steps, _, err := doc.walk(g.path, false, nil); err == nil && len(steps) == len(g.path) &&
			equalJSON(*steps[len(steps)-1].value, []byte(g.value)) {
			warnings = append(warnings, g.warning)
		}
	}
	for _, e := range j.plan.edits {
		a, changed, err := doc.apply(e)
		if err != nil {
			return nil, nil, nil, err
		}
		if changed {
			applied = append(applied, a)
		}
	}
	if len(applied) == 0 {
		return raw, nil, warnings, nil
	}
	merged = doc.pack()
	if err := j.check(merged); err != nil {
		return nil, nil, nil, err
	}
	return merged, applied, warnings, nil
}

// check makes sure a merged file is what the agent can read and holds the
// integration, before it is written.
func (j *job) check(merged []byte) error {
	doc, err := parseDocument(merged, j.agent.comments)
	if err != nil {
		return fmt.Errorf("would not be valid after the merge (%w)", err)
	}
	for _, e := range j.plan.edits {
		if !doc.has(e) {
			return fmt.Errorf("would not hold %s after the merge", dotted(e.path))
		}
	}
	return nil
}

// needState insists on a state directory: an Apply that Undo cannot find
// could not be undone.
func (j *job) needState() error {
	if !filepath.IsAbs(j.o.StateDir) {
		return fmt.Errorf("%w: no state directory to record the setup in (set XDG_STATE_HOME or HOME)", ErrUsage)
	}
	return nil
}

// updateState changes the agent's state file under its lock.
func (j *job) updateState(ctx context.Context, change func(*state)) error {
	path := statePath(j.o.StateDir, j.agent.name)
	unlock, err := lock(ctx, path+".execgate.lock")
	if err != nil {
		return err
	}
	defer unlock()
	st, err := loadState(path)
	if err != nil {
		return err
	}
	change(st)
	return st.save(path)
}

// Undo reverts what Apply did to o.Agent's settings file. When the file
// still has the bytes Apply wrote, it gets back exactly the bytes it had
// before (or is removed, if Apply created it). When it was edited since,
// only the entries Apply added are taken out (a value Apply replaced is put
// back; an entry changed since is left and listed in Kept), the edits are
// kept, and the file as it was is backed up first. With nothing to undo,
// Undo changes nothing and says so in the Outcome.
func Undo(ctx context.Context, o Options) (*Outcome, error) {
	j, err := o.job()
	if err != nil {
		return nil, err
	}
	if err := j.needState(); err != nil {
		return nil, err
	}
	given := j.settingsFile()
	if given == "" {
		return &Outcome{Notes: []string{fmt.Sprintf("%s has no settings file; setup changed nothing to undo", j.agent.title)}}, nil
	}
	file, err := resolve(given)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.display(given), err)
	}
	unlock, err := lock(ctx, settingsLock(j.o.StateDir, file))
	if err != nil {
		return nil, err
	}
	defer unlock()

	out := &Outcome{File: file}
	// The settings file's lock keeps any other Apply or Undo of this file
	// out, and the state file is replaced atomically: reading it needs no
	// lock of its own.
	st, err := loadState(statePath(j.o.StateDir, j.agent.name))
	if err != nil {
		return nil, err
	}
	rec := st.find(file)
	if rec == nil {
		return out, nil
	}
	mine := j.undoes
	if !slices.ContainsFunc(rec.Layers, mine) {
		return out, nil
	}
	raw, exists, mode, err := readFile(file, maxSettingsBytes)
	if err != nil {
		return nil, j.refused(file, err)
	}
	if !exists {
		out.Notes = append(out.Notes, "the file no longer exists")
		return out, j.updateState(ctx, func(st *state) { st.drop(file) })
	}

	// Peel off the layers whose result the file still is, exactly.
	cur, curExists := raw, true
	var restored []string
	i := len(rec.Layers) - 1
	for ; i >= 0 && curExists; i-- {
		l := rec.Layers[i]
		if !mine(l) || hashBytes(cur) != l.After {
			break // the other integration's layer stays: take ours out below it
		}
		if l.Created {
			cur, curExists = nil, false
			continue
		}
		before, ok, _, err := readFile(l.Backup, maxSettingsBytes)
		if err != nil || !ok || hashBytes(before) != l.Before {
			break // the backup is gone or changed: take the entries out instead
		}
		cur = before
		restored = append(restored, l.Backup)
	}
	surgical := curExists && slices.ContainsFunc(rec.Layers[:i+1], mine)
	if surgical {
		doc, err := parseDocument(cur, j.agent.comments)
		if err != nil {
			return nil, j.refused(file, docErrorf("was edited since setup and %v", err))
		}
		for ; i >= 0; i-- {
			if !mine(rec.Layers[i]) {
				continue
			}
			edits := rec.Layers[i].Edits
			for k := len(edits) - 1; k >= 0; k-- {
				res, err := doc.revert(edits[k])
				if err != nil {
					return nil, j.refused(file, err)
				}
				if res == revertChanged {
					out.Kept = append(out.Kept, dotted(edits[k].Path))
				}
			}
		}
		cur = doc.pack()
	}

	if curExists && bytes.Equal(cur, raw) {
		if len(out.Kept) == 0 {
			out.Notes = append(out.Notes, "execgate's entries are no longer in it")
		}
		return out, j.updateState(ctx, func(st *state) { st.dropLayers(file, mine) })
	}
	if surgical {
		if out.Backup, err = writeBackup(file, raw, mode, j.o.Now()); err != nil {
			return nil, err
		}
	}
	if !curExists {
		if err := sameAs(file, raw, true)(); err != nil {
			return nil, err
		}
		if err := os.Remove(file); err != nil {
			return nil, fmt.Errorf("remove %s: %w", j.display(file), err)
		}
		if err := syncDir(filepath.Dir(file)); err != nil {
			return nil, fmt.Errorf("remove %s: %w", j.display(file), err)
		}
	} else if err := writeAtomic(file, cur, mode, sameAs(file, raw, true)); err != nil {
		return nil, fmt.Errorf("write %s: %w", j.display(file), err)
	}
	// The backups of the layers put back exactly hold what the file (or
	// an intermediate state of it) now is again.
	for _, b := range restored {
		if err := os.Remove(b); err != nil && !errors.Is(err, fs.ErrNotExist) {
			out.Notes = append(out.Notes, fmt.Sprintf("could not remove the backup %s: %v", j.display(b), err))
		}
	}
	out.Changed, out.Restored, out.Created = true, !surgical, !curExists
	return out, j.updateState(ctx, func(st *state) { st.dropLayers(file, mine) })
}

// wantsZsh reports whether the shell an agent is given should be the zsh
// shim: the login shell is a zsh and a real zsh exists for it to run.
func (o Options) wantsZsh() bool {
	return o.Zsh != "" && filepath.Base(o.LoginShell) == "zsh"
}

// LoginShell is the user's login shell: $SHELL, which is what Claude Code
// itself reads to pick a shell when CLAUDE_CODE_SHELL is unset (so the shim
// keeps the shell the user had), else the shell of the user's entry in
// passwd (the file at passwdPath), for a session started without one;
// "" when neither says.
func LoginShell(getenv func(string) string, passwdPath string, uid int) string {
	if sh := getenv("SHELL"); sh != "" {
		return sh
	}
	raw, err := os.ReadFile(passwdPath)
	if err != nil {
		return ""
	}
	want := strconv.Itoa(uid)
	for _, line := range strings.Split(string(raw), "\n") {
		fields := strings.Split(line, ":")
		if len(fields) == 7 && fields[2] == want {
			return fields[6]
		}
	}
	return ""
}
