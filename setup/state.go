package setup

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// state is what Apply did to one agent's settings files, kept in
// <state dir>/setup/<agent>.json for Undo.
type state struct {
	Version int      `json:"version"`
	Files   []record `json:"files"`
}

// record is what Apply did to one settings file: one layer per Apply that
// changed it, oldest first.
type record struct {
	File   string  `json:"file"` // symbolic links resolved
	Layers []layer `json:"layers"`
}

// layer is one Apply. Undo can restore the file exactly, layer by layer,
// for as long as the file still has the bytes the layer wrote.
type layer struct {
	Backup  string        `json:"backup,omitempty"` // the file as it was before, unless Created
	Created bool          `json:"created,omitempty"`
	Before  string        `json:"before,omitempty"` // hash of the file before
	After   string        `json:"after"`            // hash of the file Apply wrote
	Edits   []appliedEdit `json:"edits"`
	At      time.Time     `json:"at"`
	// Hook is set when the layer is an agent's hook integration rather
	// than its shim one; records written before it was kept tell by the
	// paths they edited (see layer.hook).
	Hook bool `json:"hook,omitempty"`
}

// hook reports whether l is a hook integration's layer.
func (l layer) hook() bool {
	if l.Hook {
		return true
	}
	for _, e := range l.Edits {
		if len(e.Path) > 0 && e.Path[0] == "hooks" {
			return true
		}
	}
	return false
}

const stateVersion = 1

func statePath(dir, agent string) string {
	return filepath.Join(dir, "setup", agent+".json")
}

// loadState reads the state file; a missing one is empty. A damaged one is
// an error: rewriting it would lose what Undo needs for other files.
func loadState(path string) (*state, error) {
	raw, exists, _, err := readFile(path, maxSettingsBytes)
	if err != nil {
		return nil, fmt.Errorf("read setup state %s: %w", path, err)
	}
	st := &state{Version: stateVersion}
	if !exists {
		return st, nil
	}
	if err := json.Unmarshal(raw, st); err != nil {
		return nil, fmt.Errorf("setup state %s is damaged (%v); move it aside to go on", path, err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("setup state %s has version %d, this execgate knows %d", path, st.Version, stateVersion)
	}
	return st, nil
}

func (st *state) find(file string) *record {
	i := slices.IndexFunc(st.Files, func(r record) bool { return r.File == file })
	if i < 0 {
		return nil
	}
	return &st.Files[i]
}

func (st *state) add(file string, l layer) {
	if r := st.find(file); r != nil {
		r.Layers = append(r.Layers, l)
		return
	}
	st.Files = append(st.Files, record{File: file, Layers: []layer{l}})
}

// dropLayers forgets the layers of file that undone reports, and the file
// once none is left.
func (st *state) dropLayers(file string, undone func(layer) bool) {
	if r := st.find(file); r != nil {
		r.Layers = slices.DeleteFunc(r.Layers, undone)
		if len(r.Layers) > 0 {
			return
		}
	}
	st.drop(file)
}

func (st *state) drop(file string) {
	st.Files = slices.DeleteFunc(st.Files, func(r record) bool { return r.File == file })
}

// save writes the state atomically (0600, directory 0700), or removes the
// file when nothing is left in it.
func (st *state) save(path string) error {
	if len(st.Files) == 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove setup state %s: %w", path, err)
		}
		return nil
	}
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode setup state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create setup state directory: %w", err)
	}
	if err := writeAtomic(path, append(out, '\n'), 0o600, nil); err != nil {
		return fmt.Errorf("write setup state %s: %w", path, err)
	}
	return nil
}
