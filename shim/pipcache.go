package shim

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/execgate/execgate/policy"
)

// A confined pip whose cache directory does not exist yet warns "The
// directory '~/.cache/pip' or its parent directory is not owned or is not
// writable by the current user. The cache has been disabled." on stderr,
// which bash's run of the same command does not: pip checks who owns the
// nearest directory of the cache's path that exists, by opening it, and
// ~/.cache and the home are not the sandbox's to read. So before a
// confined command that runs pip, its cache directory is made (pip makes
// it itself on most runs), 0700; the sandbox grants reading it (see
// codeStores), which is all pip's check needs, and pip ignores a cache it
// cannot write.

// runsPip reports whether a segment of res runs pip: pip, pip3, pip3.12,
// or python -m pip.
func runsPip(res policy.Result) bool {
	for _, seg := range res.Segments {
		if len(seg.Argv) == 0 {
			continue
		}
		name := path.Base(seg.Argv[0])
		if name == "pip" || strings.HasPrefix(name, "pip3") {
			return true
		}
		if strings.HasPrefix(name, "python") && len(seg.Argv) > 2 && seg.Argv[1] == "-m" && seg.Argv[2] == "pip" {
			return true
		}
	}
	return false
}

// pipCacheDir is where pip keeps its cache, $XDG_CACHE_HOME/pip or
// ~/.cache/pip — the place codeStores grants reading — and "" when pip
// is told another ($PIP_CACHE_DIR) or none can be known.
func pipCacheDir(getenv func(string) string, home string) string {
	if getenv("PIP_CACHE_DIR") != "" {
		return ""
	}
	if v := getenv("XDG_CACHE_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "pip")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cache", "pip")
}

// makePipCache makes pip's cache directory before a confined command that
// runs pip, so that pip finds it as under bash (see above).
func (s *session) makePipCache(res policy.Result, home string) {
	if !runsPip(res) {
		return
	}
	if dir := pipCacheDir(s.getenv, home); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			s.log.Debug("pip cache", "dir", dir, "err", err)
		}
	}
}
