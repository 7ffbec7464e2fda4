package shim

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/execgate/execgate/internal/gitconfig"
)

// hookFiles are more of the workspace's files that run code outside the
// sandbox later, beside .git/hooks: the hooks in a directory that
// core.hooksPath names inside the workspace (.githooks, .husky/_), and
// the files the common hook managers read when git runs their hook —
// pre-commit's configuration (its local hooks are commands), husky's
// scripts (.husky/pre-commit, sourced by the stub in .husky/_),
// lefthook's configuration. A confined command rewriting one of them
// plants code that the next `git commit` or an approved `git push` runs,
// unconfined, as surely as a new .git/hooks/pre-push would.
//
// unreadable says why git's configuration could not be read ("" when it
// was): then the directories and files it names are not known, and the
// record says so (codeSnapshot.Unreadable).
func (s *session) hookFiles(ws string) (files []string, unreadable string) {
	if ws == "" {
		return nil, ""
	}
	out := []string{
		filepath.Join(ws, ".pre-commit-config.yaml"), filepath.Join(ws, ".pre-commit-config.yml"),
		filepath.Join(ws, "lefthook.yml"), filepath.Join(ws, ".lefthook.yml"),
		filepath.Join(ws, "lefthook-local.yml"), filepath.Join(ws, ".lefthook-local.yml"),
	}
	dirs := []string{filepath.Join(ws, ".husky")}
	c, err := s.gitConfigs.Load(gitconfig.Options{Dir: ws, Getenv: s.getenv, Home: s.getenv("HOME")})
	if err != nil {
		unreadable = err.Error()
	} else {
		if hd, err := c.HookDirs(); err == nil {
			dirs = append(dirs, hd...)
		} else {
			unreadable = err.Error()
		}
		// And the files it was read from that a confined command may
		// write: an include in the work tree (include.path =
		// ../team.gitconfig), the config of a directory a commondir file
		// names there. git runs what they set (core.fsmonitor) as surely
		// as what .git/config sets.
		for _, f := range c.Files() {
			if insideOnDisk(f, ws) {
				out = append(out, f)
			}
		}
	}
	own := "" // what watchedFiles lists already: the hooks of a .git directory
	if fi, err := os.Lstat(filepath.Join(ws, ".git")); err == nil && fi.IsDir() {
		own = filepath.Join(ws, ".git", "hooks")
	}
	for _, d := range dirs {
		if d == own || !insideOnDisk(d, ws) {
			continue // outside the workspace: no confined command writes there
		}
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".sample") {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	return out, unreadable
}
