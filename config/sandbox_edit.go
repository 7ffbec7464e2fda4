package config

import "fmt"

// CheckSandboxPath says why p cannot be granted to confined commands for
// kind ("read" or "write"), or nil: the same rule the parser applies, which
// drops such an entry with a warning. An edit refuses it instead.
func CheckSandboxPath(kind, p string) error {
	switch kind {
	case "read", "write":
	case "hosts":
		if why := badSandboxHost(p); why != "" {
			return fmt.Errorf("%q: %s", p, why)
		}
		return nil
	default:
		return fmt.Errorf("unknown sandbox list %q (want read, write or hosts)", kind)
	}
	if why := badSandboxPath(p); why != "" {
		return fmt.Errorf("%q: %s", p, why)
	}
	if kind == "write" && systemPath(p) {
		return fmt.Errorf("%q: the system's files are never writable confined", p)
	}
	return nil
}

// sandboxList returns agent's sandbox list kind and the object it sits in
// ("" is "*"); a missing list is an empty one.
func (d *Document) sandboxList(agent, kind string, create bool) ([]any, map[string]any, error) {
	if agent == "" {
		agent = WildcardAgent
	}
	m, path, err := d.level(agent, create)
	if err != nil || m == nil {
		return nil, nil, err
	}
	sb, err := object(m, "sandbox", joinPath(path, "sandbox"), create)
	if err != nil || sb == nil {
		return nil, nil, err
	}
	v, ok := sb[kind]
	if !ok || v == nil {
		return nil, sb, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("%s.sandbox.%s: want an array, got %s; fix the file by hand", path, kind, describe(v))
	}
	return items, sb, nil
}

// AddSandboxPath adds p to agent's sandbox list kind ("" is "*"). It
// reports false, changing nothing, when the list has it already; a path
// CheckSandboxPath refuses is an error.
func (d *Document) AddSandboxPath(agent, kind, p string) (bool, error) {
	if err := CheckSandboxPath(kind, p); err != nil {
		return false, err
	}
	items, sb, err := d.sandboxList(agent, kind, true)
	if err != nil {
		d.fail(err)
		return false, err
	}
	for _, it := range items {
		if it == p {
			return false, nil
		}
	}
	sb[kind] = append(items, p)
	return true, nil
}

// RemoveSandboxPath removes p from agent's sandbox list kind ("" is "*")
// and reports whether it was there. An emptied list, and an emptied
// sandbox object, are removed.
func (d *Document) RemoveSandboxPath(agent, kind, p string) (bool, error) {
	if kind != "read" && kind != "write" && kind != "hosts" {
		return false, fmt.Errorf("unknown sandbox list %q (want read, write or hosts)", kind)
	}
	items, sb, err := d.sandboxList(agent, kind, false)
	if err != nil {
		d.fail(err)
		return false, err
	}
	if sb == nil {
		return false, nil
	}
	kept := items[:0:0]
	for _, it := range items {
		if it != p {
			kept = append(kept, it)
		}
	}
	if len(kept) == len(items) {
		return false, nil
	}
	if len(kept) == 0 {
		delete(sb, kind)
	} else {
		sb[kind] = kept
	}
	if len(sb) == 0 {
		if m, _, err := d.level(agentOrWildcard(agent), false); err == nil && m != nil {
			delete(m, "sandbox")
		}
	}
	return true, nil
}

func agentOrWildcard(agent string) string {
	if agent == "" {
		return WildcardAgent
	}
	return agent
}
