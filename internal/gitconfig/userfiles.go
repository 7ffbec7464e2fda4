package gitconfig

import (
	"path/filepath"
	"slices"
	"strings"
)

// UserFiles lists the user's own configuration files that exist — the
// global ones (GIT_CONFIG_GLOBAL, or $XDG_CONFIG_HOME/git/config and
// ~/.gitconfig) and every file they include, includeIf's whatever their
// condition — as git would read them, then the files they name for git
// to read (readFileKeys: a global ignore file, attributes, a commit
// template). A sandbox that lets git read ~/.gitconfig but not these
// makes git fail ("fatal: bad config line", "fatal: cannot use
// ~/.gitignore_global as an exclude file"). The repository's own
// configuration is left out: its includes and files are the repository's
// to choose, and may name any file. An error means a file could not be
// read or parsed, or an include not followed; the files read until then
// are returned with it.
func UserFiles(getenv func(string) string, home string) ([]string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c := &Config{env: getenv, home: cmpOr(getenv("HOME"), home), dir: "/"}
	for _, f := range c.globalFiles() {
		if err := c.readFile(f, 0); err != nil {
			return c.files, err
		}
	}
	files := c.files
	for _, e := range c.Entries {
		if !slices.Contains(readFileKeys[:], e.Name) || e.NoValue {
			continue
		}
		// Only a place the user's file fixes: a relative one is taken
		// from wherever git runs.
		if e.Value != "~" && !strings.HasPrefix(e.Value, "~/") && !filepath.IsAbs(e.Value) {
			continue
		}
		if p, err := c.userPath(e); err == nil && !slices.Contains(files, p) {
			files = append(files, p)
		}
	}
	return files, nil
}

// readFileKeys name files git reads (never runs) from the user's
// configuration: git-config(1) core.excludesFile, core.attributesFile,
// commit.template, mailmap.file.
var readFileKeys = [...]string{"core.excludesfile", "core.attributesfile", "commit.template", "mailmap.file"}
