package gitconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// hookDirs are the directories git may run hooks from: core.hooksPath
// wherever it is set (relative to the top of the working tree, or the git
// directory of a bare repository), else COMMON/hooks; and the hooks of
// every submodule, which git runs when it works inside one. Every
// candidate is returned: a hooks directory git would not use can only
// make for a false alarm.
func (c *Config) hookDirs() ([]string, error) {
	if c.Repo.GitDir == "" {
		return nil, nil
	}
	dirs := []string{filepath.Join(c.Repo.CommonDir, "hooks")}
	for _, m := range c.Modules {
		dirs = append(dirs, filepath.Join(m, "hooks"))
	}
	bases := []string{c.Repo.WorkTree, c.Repo.GitDir}
	bases = append(bases, c.Modules...)
	for _, e := range c.Entries {
		if e.Name != "core.hookspath" {
			continue
		}
		p := e.Value
		switch {
		case e.NoValue:
			return nil, fmt.Errorf("%s: core.hooksPath has no value", e.Where())
		case p == "":
			continue
		case p == "~" || strings.HasPrefix(p, "~/"):
			if c.home == "" {
				return nil, fmt.Errorf("%s: core.hooksPath uses ~ with no home directory", e.Where())
			}
			dirs = append(dirs, filepath.Join(c.home, p[1:]))
		case strings.HasPrefix(p, "~"), strings.HasPrefix(p, "%(prefix)/"):
			return nil, fmt.Errorf("%s: core.hooksPath = %s names a place execgate does not resolve", e.Where(), p)
		case filepath.IsAbs(p):
			dirs = append(dirs, filepath.Clean(p))
		default:
			for _, b := range bases {
				if b != "" {
					dirs = append(dirs, filepath.Join(b, p))
				}
			}
		}
	}
	return dirs, nil
}

// hooks lists the hooks among names that exist as executable files in a
// hooks directory (git runs a hook only then: run-command.c's find_hook).
func (c *Config) hooks(names []string) ([]Finding, error) {
	if len(names) == 0 {
		return nil, nil
	}
	dirs, err := c.hookDirs()
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, d := range dirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			fi, err := os.Stat(p)
			if err != nil {
				if notExist(err) {
					continue
				}
				return nil, fmt.Errorf("cannot read the hook %s: %w", p, err)
			}
			if fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
				out = append(out, Finding{Name: "hooks/" + n, Where: p, Runs: "the " + n + " hook"})
			}
		}
	}
	return out, nil
}
