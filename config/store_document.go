package config

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/execgate/execgate/pattern"
)

// Document is the configuration file as Store.Update hands it to an edit: the
// decoded JSON tree, so that fields this version does not know, at any
// level, survive every edit. Methods that name an agent treat "" as the
// top-level "defaults" for policy fields and as "*" for pattern lists, which
// only agents have.
//
// When an edit meets a part of the file with the wrong shape (say, an agent
// that is a string) it changes nothing there, and Update refuses to write.
type Document struct {
	root map[string]any
	// err is the first structural problem an edit met.
	err error
}

func newDocument() *Document {
	return &Document{root: map[string]any{"version": json.Number("1")}}
}

func (d *Document) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *Document) tree() map[string]any {
	if d.root == nil {
		d.root = newDocument().root
	}
	return d.root
}

// object returns parent[key] as an object, creating it when create is set
// and it is absent. A present value of another type is an error: replacing
// it would throw away what the user wrote.
func object(parent map[string]any, key, path string, create bool) (map[string]any, error) {
	v, ok := parent[key]
	if !ok || v == nil {
		if !create {
			return nil, nil
		}
		m := map[string]any{}
		parent[key] = m
		return m, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object, got %s; fix the file by hand", path, describe(v))
	}
	return m, nil
}

// level returns the object holding agent's settings ("" is defaults).
func (d *Document) level(agent string, create bool) (map[string]any, string, error) {
	if agent == "" {
		m, err := object(d.tree(), "defaults", "defaults", create)
		return m, "defaults", err
	}
	agents, err := object(d.tree(), "agents", "agents", create)
	if err != nil || agents == nil {
		return nil, "", err
	}
	path := joinPath("agents", agent)
	m, err := object(agents, agent, path, create)
	return m, path, err
}

// list returns agent's allowlist or denylist items and the object they sit
// in; a missing list is an empty one.
func (d *Document) list(agent, key string, create bool) ([]any, map[string]any, error) {
	if agent == "" {
		agent = WildcardAgent
	}
	m, path, err := d.level(agent, create)
	if err != nil || m == nil {
		return nil, nil, err
	}
	v, ok := m[key]
	if !ok || v == nil {
		return nil, m, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("%s.%s: want an array, got %s; fix the file by hand", path, key, describe(v))
	}
	return items, m, nil
}

// AddAllowlist adds e to agent's allowlist, giving it a random ID when it has
// none. It reports false, changing nothing, when that agent's allowlist
// already has the pattern or ValidatePattern rejects it.
func (d *Document) AddAllowlist(agent string, e pattern.Entry) bool {
	return d.addEntry(agent, "allowlist", e)
}

// AddDenylist is AddAllowlist for the denylist.
func (d *Document) AddDenylist(agent string, e pattern.Entry) bool {
	return d.addEntry(agent, "denylist", e)
}

func (d *Document) addEntry(agent, key string, e pattern.Entry) bool {
	if pattern.ValidatePattern(e.Pattern) != nil {
		return false
	}
	items, m, err := d.list(agent, key, true)
	if err != nil {
		d.fail(err)
		return false
	}
	for _, it := range items {
		if obj, ok := it.(map[string]any); ok && obj["pattern"] == e.Pattern {
			return false
		}
	}
	if e.ID == "" {
		e.ID = newID()
	}
	m[key] = append(items, entryTree(e))
	return true
}

// entryTree converts e to the generic form, following Entry's JSON tags.
func entryTree(e pattern.Entry) map[string]any {
	m := map[string]any{"pattern": e.Pattern}
	for k, v := range map[string]string{
		"id": e.ID, "source": e.Source,
		"lastUsedCommand": e.LastUsedCommand, "lastResolvedPath": e.LastResolvedPath,
	} {
		if v != "" {
			m[k] = v
		}
	}
	if e.LastUsedAt != 0 {
		m["lastUsedAt"] = json.Number(strconv.FormatInt(e.LastUsedAt, 10))
	}
	return m
}

// newID returns 12 random hex characters.
func newID() string {
	var b [6]byte
	rand.Read(b[:]) // never fails (crypto/rand crashes the program instead)
	return hex.EncodeToString(b[:])
}

// RemoveEntry removes the entries of agent's allowlist and denylist whose
// pattern or ID is patternOrID, and reports how many it removed.
func (d *Document) RemoveEntry(agent, patternOrID string) (removed int) {
	for _, key := range listKeys {
		items, m, err := d.list(agent, key, false)
		if err != nil || m == nil || items == nil {
			continue
		}
		kept := items[:0:0]
		for _, it := range items {
			if obj, ok := it.(map[string]any); ok && (obj["pattern"] == patternOrID || obj["id"] == patternOrID) {
				removed++
				continue
			}
			kept = append(kept, it)
		}
		m[key] = kept
	}
	return removed
}

// SetPolicyField sets one policy field (security, ask, askFallback,
// timeoutMs or autoAllowSafe) at agent's level, "" meaning defaults, from
// its command-line text; an empty value removes the field so that it falls
// through to the next level. An unknown key or invalid value is an error and
// changes nothing.
func (d *Document) SetPolicyField(agent, key, value string) error {
	spec, ok := lookupField(key)
	if !ok {
		keys := make([]string, len(policyFieldSpecs))
		for i := range policyFieldSpecs {
			keys[i] = policyFieldSpecs[i].key
		}
		return fmt.Errorf("unknown policy key %s (want %s)", quote(key), orList(keys))
	}
	var stored any
	if value != "" {
		stored = spec.textValue(value)
		if _, problem := spec.validate(stored); problem != "" {
			if s, isText := stored.(string); isText && spec.values == nil {
				problem = fmt.Sprintf("want %s, got %s", spec.want, quote(s))
			}
			return fmt.Errorf("%s: %s", key, problem)
		}
	}
	m, _, err := d.level(agent, value != "")
	if err != nil {
		return err
	}
	if value == "" {
		if m != nil {
			delete(m, key)
		}
		return nil
	}
	m[key] = stored
	return nil
}

// Touch records that an allowlist entry just let a command through: its
// lastUsedAt (Unix milliseconds), lastUsedCommand and lastResolvedPath (empty
// strings remove the stale values). The entry is looked up by pattern in
// agent's allowlist, then in "*"'s, since an agent's effective allowlist
// holds both. It reports whether an entry was found.
func (d *Document) Touch(agent, pattern, command, resolvedPath string, at time.Time) bool {
	for _, a := range []string{agent, WildcardAgent} {
		items, _, err := d.list(a, "allowlist", false)
		if err != nil {
			continue
		}
		for _, it := range items {
			obj, ok := it.(map[string]any)
			if !ok || obj["pattern"] != pattern {
				continue
			}
			obj["lastUsedAt"] = json.Number(strconv.FormatInt(at.UnixMilli(), 10))
			for k, v := range map[string]string{"lastUsedCommand": command, "lastResolvedPath": resolvedPath} {
				if v == "" {
					delete(obj, k)
				} else {
					obj[k] = v
				}
			}
			return true
		}
	}
	return false
}

// Config returns the typed view of the document as it stands, as ParseConfig
// would read it (warnings are dropped).
func (d *Document) Config() (*Config, error) {
	if d.err != nil {
		return nil, d.err
	}
	cfg, _, err := parseTree(d.tree())
	return cfg, err
}

// EnsureToken returns socket.token, first creating it (32 random bytes,
// base64url) when it is missing or empty.
func (d *Document) EnsureToken() (string, error) {
	socket, err := object(d.tree(), "socket", "socket", true)
	if err != nil {
		return "", err
	}
	if t, ok := socket["token"].(string); ok && t != "" {
		return t, nil
	}
	var b [32]byte
	rand.Read(b[:])
	t := base64.RawURLEncoding.EncodeToString(b[:])
	socket["token"] = t
	return t, nil
}

// Replace swaps in a whole new file (raw), as a remote editor sends it. It
// must parse; socket.path and socket.token are kept as they are, whatever raw
// says, so that whoever edits the policy cannot move or take over the hub.
func (d *Document) Replace(raw []byte) error {
	root, err := decodeObject(raw)
	if err != nil {
		return fmt.Errorf("replace config: %w", err)
	}
	if _, _, err := ParseConfig(raw); err != nil {
		return fmt.Errorf("replace config: %w", err)
	}
	old, err := object(d.tree(), "socket", "socket", false)
	if err != nil {
		// The old socket is unreadable, so there is nothing to carry over;
		// the new one's secrets must not be taken either.
		old = nil
	}
	socket, ok := root["socket"].(map[string]any)
	if !ok {
		socket = map[string]any{}
	}
	for _, k := range []string{"path", "token"} {
		if v, ok := old[k]; ok {
			socket[k] = v
		} else {
			delete(socket, k)
		}
	}
	if len(socket) == 0 {
		delete(root, "socket")
	} else {
		root["socket"] = socket
	}
	if _, ok := root["version"]; !ok {
		root["version"] = json.Number("1")
	}
	d.root = root
	return nil
}
