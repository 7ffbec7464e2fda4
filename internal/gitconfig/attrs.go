package gitconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// maxWalk bounds the working-tree entries looked at for .gitattributes
// files; a larger tree cannot be proven free of them in the time a
// command may take to judge.
const maxWalk = 100000

// maxAttrFile bounds one attributes file.
const maxAttrFile = 1 << 20

// errTooLarge stops the walk.
const errTooLarge = Error("too many files")

// systemAttributes are where git installations keep the system-wide
// attributes file (ETC_GITATTRIBUTES; see systemConfigs).
var systemAttributes = [...]string{"/etc/gitattributes", "/usr/local/etc/gitattributes", "/opt/homebrew/etc/gitattributes", "/usr/etc/gitattributes"}

// attributeDrivers returns which of the drivers' ATTR=DRIVER assignments
// some attribute file git may read makes (the driver in lower case):
// every .gitattributes in the working tree (and the index's, through
// index.go), COMMON/info/attributes, core.attributesFile or
// $XDG_CONFIG_HOME/git/attributes, and the system file. A macro
// ([attr]NAME diff=x) is read as the assignments it holds, wherever it is
// used. It is an error when git may read attributes execgate cannot:
// from a tree (GIT_ATTR_SOURCE, attr.tree, a bare repository), or from a
// file or index it cannot read.
func (c *Config) attributeDrivers(drivers []driverUse, checkout bool) (map[string]bool, error) {
	want := map[string]bool{}
	for _, d := range drivers {
		want[d.attr+"="+strings.ToLower(d.driver)] = true
	}
	if c.env("GIT_ATTR_SOURCE") != "" {
		return nil, errors.New("GIT_ATTR_SOURCE makes git read attributes from a tree")
	}
	for _, e := range c.Entries {
		if e.Name == "attr.tree" {
			return nil, fmt.Errorf("%s: attr.tree makes git read attributes from a tree", e.Where())
		}
	}
	found := map[string]bool{}
	scan := func(p string) error {
		b, err := readLimited(p, maxAttrFile)
		if err != nil {
			if notExist(err) {
				return nil
			}
			return fmt.Errorf("cannot read the attributes file %s: %w", p, err)
		}
		scanAttributes(b, want, found)
		return nil
	}
	var files []string
	if c.env("GIT_ATTR_NOSYSTEM") == "" || !boolTrue(c.env("GIT_ATTR_NOSYSTEM")) {
		files = append(files, systemAttributes[:]...)
	}
	global := false
	for _, e := range c.Entries {
		if e.Name == "core.attributesfile" && !e.NoValue && e.Value != "" {
			p, err := c.userPath(e)
			if err != nil {
				return nil, err
			}
			files, global = append(files, p), true
		}
	}
	if !global {
		if x := c.env("XDG_CONFIG_HOME"); x != "" {
			files = append(files, filepath.Join(x, "git", "attributes"))
		} else if c.home != "" {
			files = append(files, filepath.Join(c.home, ".config", "git", "attributes"))
		}
	}
	if c.Repo.GitDir != "" {
		files = append(files, filepath.Join(c.Repo.CommonDir, "info", "attributes"))
		for _, m := range c.Modules {
			files = append(files, filepath.Join(m, "info", "attributes"))
		}
	}
	for _, f := range files {
		if err := scan(f); err != nil {
			return nil, err
		}
	}
	if c.Repo.GitDir == "" {
		return found, nil
	}
	roots, err := c.workTrees()
	if err != nil {
		return nil, err
	}
	if len(roots) == 0 {
		return nil, fmt.Errorf("%s is a bare repository: git reads its attributes from HEAD", c.Repo.GitDir)
	}
	walked := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == root && notExist(err) {
					return fs.SkipAll
				}
				return err
			}
			walked++
			if walked > maxWalk {
				return errTooLarge
			}
			if d.Name() == ".git" && p != root {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.Name() == ".gitattributes" && !d.IsDir() {
				return scan(p)
			}
			return nil
		})
		if errors.Is(err, errTooLarge) {
			return nil, fmt.Errorf("the working tree %s has more than %d files to look through for .gitattributes", root, maxWalk)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot look through %s for .gitattributes: %w", root, err)
		}
	}
	if err := c.indexAttributes(roots[0], checkout); err != nil {
		return nil, err
	}
	return found, nil
}

// workTrees are the working trees whose attributes apply: the one
// discovery found, and any core.worktree (relative to the git directory).
func (c *Config) workTrees() ([]string, error) {
	var out []string
	if c.Repo.WorkTree != "" {
		out = append(out, c.Repo.WorkTree)
	}
	for _, e := range c.Entries {
		if e.Name != "core.worktree" || e.NoValue || e.Value == "" {
			continue
		}
		if strings.HasPrefix(e.Value, "~") {
			p, err := c.userPath(e)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
			continue
		}
		out = append(out, absFrom(c.Repo.GitDir, e.Value))
	}
	return out, nil
}

// userPath resolves a path-valued variable (git_config_pathname): ~/ is
// the home directory; ~user and %(prefix) are not resolved.
func (c *Config) userPath(e Entry) (string, error) {
	p := e.Value
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if c.home == "" {
			return "", fmt.Errorf("%s: %s uses ~ with no home directory", e.Where(), e.Name)
		}
		return filepath.Join(c.home, p[1:]), nil
	case strings.HasPrefix(p, "~"), strings.HasPrefix(p, "%(prefix)/"):
		return "", fmt.Errorf("%s: %s = %s names a place execgate does not resolve", e.Where(), e.Name, p)
	}
	return absFrom(c.dir, p), nil
}

// isAttrBlank is attr.c's blank: space, tab, CR and LF separate a
// line's fields, nothing else.
func isAttrBlank(r rune) bool {
	return r == ' ' || r == '\t' || r == '\r' || r == '\n'
}

// scanAttributes records the wanted ATTR=VALUE assignments an attributes
// file makes. Every field after a line's first is read as an assignment,
// whatever quoting the pattern has: a pattern with spaces can only add
// fields, never hide one.
func scanAttributes(b []byte, want, found map[string]bool) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		fields := strings.FieldsFunc(string(line), isAttrBlank)
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		for _, f := range fields[1:] {
			name, value, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			if k := name + "=" + strings.ToLower(value); want[k] {
				found[k] = true
			}
		}
	}
}
