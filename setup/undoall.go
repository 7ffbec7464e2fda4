package setup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"time"
)

// Undone is what UndoAll did to one settings file, or the problem that
// kept it from undoing an agent's setup.
type Undone struct {
	// Agent is the integration the record belongs to.
	Agent string
	// File is the settings file as recorded; empty when the agent's
	// record itself could not be read.
	File string
	// Outcome is what Undo did, when Err is nil.
	Outcome *Outcome
	// Err is why this file (or, with File empty, this agent's whole
	// record) was not undone: the settings file still has execgate's
	// entries.
	Err error
}

// applied is one settings file the records say setup changed.
type applied struct {
	agent, file string
	at          time.Time // the latest Apply
}

// UndoAll undoes every integration the records in o.StateDir say Apply
// made, newest first, as Undo does for each (o.Agent, o.Hook and
// o.Settings are ignored: each record names its agent and file). A problem
// with one file or one agent's record does not stop the others: each is
// reported in its Undone, so that one damaged file does not leave every
// other agent pointing at execgate. With nothing recorded it returns none.
func UndoAll(ctx context.Context, o Options) ([]Undone, error) {
	// Check the rest of o once, with an agent every build knows.
	probe := o
	probe.Agent, probe.Hook, probe.Settings = agentTable()[0].name, false, ""
	j, err := probe.job()
	if err != nil {
		return nil, err
	}
	if err := j.needState(); err != nil {
		return nil, err
	}
	list, problems := appliedIn(o.StateDir)
	var done []Undone
	for _, a := range list {
		one := o
		one.Agent, one.Hook, one.Settings, one.AllVariants = a.agent, false, a.file, true
		out, err := Undo(ctx, one)
		if err == nil {
			removeLock(a.file)
		}
		done = append(done, Undone{Agent: a.agent, File: a.file, Outcome: out, Err: err})
	}
	return append(done, problems...), nil
}

// appliedIn reads every agent's record in stateDir: the files setup
// changed, newest first, and an Undone with Err for each record that
// cannot be read.
func appliedIn(stateDir string) ([]applied, []Undone) {
	var list []applied
	var problems []Undone
	for _, a := range agentTable() {
		st, err := loadState(statePath(stateDir, a.name))
		if err != nil {
			problems = append(problems, Undone{Agent: a.name, Err: fmt.Errorf("%w; the settings files it lists keep execgate's entries until it is fixed", err)})
			continue
		}
		for _, r := range st.Files {
			var at time.Time
			if n := len(r.Layers); n > 0 {
				at = r.Layers[n-1].At
			}
			list = append(list, applied{agent: a.name, file: r.File, at: at})
		}
	}
	// Newest first: the reverse of the order they were applied in.
	slices.SortStableFunc(list, func(x, y applied) int { return cmp.Compare(y.at.UnixNano(), x.at.UnixNano()) })
	return list, problems
}

// removeLock removes the lock file that execgate versions before the locks
// moved to the state directory left beside a settings file, once its setup
// is undone: UndoAll is the uninstall, and the agents' directories should
// not keep execgate's litter. Only such an older execgate running setup on
// the same file at this very moment could be holding it.
func removeLock(file string) {
	if err := os.Remove(file + ".execgate.lock"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		slog.Debug("setup: remove lock file", "file", file, "err", err)
	}
}
