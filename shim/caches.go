package shim

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/sandbox"
)

// A tool makes its cache directory itself, the first time it runs. Confined,
// it cannot: the home and ~/.cache are not the sandbox's to write, and a
// path that does not exist yet cannot be granted. So in a fresh home `go
// test` failed ("failed to initialize build cache at ~/.cache/go-build:
// mkdir ~/.cache: permission denied"), npm could not write its logs, and
// pip warned that its cache directory "or its parent directory is not owned
// or is not writable" — where bash's run of the same command did not. Before
// a confined command runs, the caches its tools would make are made, 0700,
// as the tools make them: only those the sandbox grants, and only for the
// tools the command names, or, when it runs code (make, a test script),
// those of the tools on its PATH.

// toolCache is one tool's cache directory, and the programs that use it.
type toolCache struct {
	// tools are program names; a name ending in "*" is a prefix
	// (pip3.12).
	tools []string
	// dirs lists them; key is the workspace's workspaceCacheKey.
	dirs func(getenv func(string) string, home, cache, key string) []string
}

// toolCaches are the caches made before a confined run: each is granted by
// toolchains (written) or codeStores (read only).
var toolCaches = [...]toolCache{
	{[]string{"go", "gopls", "golangci-lint"}, func(getenv func(string) string, _, cache, key string) []string {
		if gc := confinedGoCache(getenv, cache, key); gc != "" {
			return []string{gc}
		}
		return nil
	}},
	{[]string{"npm", "npx"}, func(getenv func(string) string, home, _, _ string) []string {
		npm := filepath.Join(home, ".npm")
		if v := getenv("npm_config_cache"); v != "" {
			if !filepath.IsAbs(v) {
				return nil
			}
			npm = v
		}
		return []string{filepath.Join(npm, "_logs")}
	}},
	{[]string{"pip", "pip3*"}, func(getenv func(string) string, _, cache, _ string) []string {
		if getenv("PIP_CACHE_DIR") != "" {
			return nil // pip is told where; not the place the sandbox grants
		}
		return []string{filepath.Join(cache, "pip")}
	}},
	{[]string{"golangci-lint"}, func(_ func(string) string, _, cache, key string) []string {
		return []string{confinedLintCache(cache, key)}
	}},
	{[]string{"uv", "uvx"}, func(_ func(string) string, _, cache, key string) []string {
		return []string{confinedUVCache(cache, key)}
	}},
	// Granted only to a command that reaches the agent's allowed hosts.
	{[]string{"npm", "npx", "pip", "pip3*", "tox"}, func(_ func(string) string, _, cache, key string) []string {
		npm, pip := confinedFetchCaches(cache, key)
		return []string{npm, pip}
	}},
}

// cachesToMake lists the cache directories to make before res runs
// confined with g: the granted caches, not made yet, of the tools it
// names, or of every tool on PATH when it runs code. Nothing is made
// here. PATH is searched only for a cache that is missing: once made, a
// cache costs one stat per command.
func (s *session) cachesToMake(res policy.Result, g *sandbox.Grants, home string) []string {
	if g == nil || home == "" {
		return nil
	}
	cache := filepath.Join(home, ".cache")
	if v := s.getenv("XDG_CACHE_HOME"); v != "" && filepath.IsAbs(v) {
		cache = v
	}
	named := programsOf(res)
	key := workspaceCacheKey(g.Workspace)
	var out []string
	for _, tc := range toolCaches {
		var missing []string
		for _, d := range tc.dirs(s.getenv, home, cache, key) {
			if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) && granted(g, d) && !slices.Contains(out, d) {
				missing = append(missing, d)
			}
		}
		if len(missing) == 0 {
			continue
		}
		if slices.ContainsFunc(tc.tools, func(t string) bool { return named(t) }) || g.RunCode && s.onPath(tc.tools) {
			out = append(out, missing...)
		}
	}
	return out
}

// programsOf says whether a segment of res runs a program of that name (a
// trailing "*" matches a prefix), counting `python -m NAME`.
func programsOf(res policy.Result) func(string) bool {
	return func(tool string) bool {
		for _, seg := range res.Segments {
			if len(seg.Argv) == 0 {
				continue
			}
			name := path.Base(seg.Argv[0])
			if strings.HasPrefix(name, "python") && len(seg.Argv) > 2 && seg.Argv[1] == "-m" {
				name = seg.Argv[2]
			}
			if toolIs(name, tool) {
				return true
			}
		}
		return false
	}
}

func toolIs(name, tool string) bool {
	if p, ok := strings.CutSuffix(tool, "*"); ok {
		return strings.HasPrefix(name, p)
	}
	return name == tool
}

// onPath reports whether one of tools (exact names only) is a program on
// the command's PATH.
func (s *session) onPath(tools []string) bool {
	for _, dir := range filepath.SplitList(s.getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue
		}
		for _, t := range tools {
			if strings.HasSuffix(t, "*") {
				continue
			}
			if fi, err := os.Stat(filepath.Join(dir, t)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return true
			}
		}
	}
	return false
}

// granted reports whether g names dir itself to read or write, or holds it
// inside a cache it may write.
func granted(g *sandbox.Grants, dir string) bool {
	return slices.Contains(g.Read, dir) || slices.ContainsFunc(g.Caches, func(c string) bool {
		return dir == c || strings.HasPrefix(dir, c+string(filepath.Separator))
	})
}

// makeCaches makes the directories cachesToMake listed, as the tools would
// (0700, parents included); a failure is left to the tool to report, as it
// would under bash. A cache of the workspace ws's own (workspaceCacheKey)
// is named as its, and the caches of workspaces that are gone or were
// replaced are removed.
func (s *session) makeCaches(dirs []string, ws string) {
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			s.log.Debug("tool cache", "dir", dir, "err", err)
			continue
		}
		if filepath.Base(dir) == workspaceCacheKey(ws) {
			if err := os.WriteFile(dir+ownerSuffix, []byte(ws), 0o600); err != nil {
				s.log.Debug("tool cache", "dir", dir, "err", err)
			}
			s.pruneCaches(filepath.Dir(dir))
		}
	}
}

// ownerSuffix names the file beside a workspace's cache that says whose
// it is.
const ownerSuffix = ".workspace"

// maxPruned bounds how many caches one command removes: a build cache
// can hold thousands of files, and this runs before the command.
const maxPruned = 2

// pruneCaches removes, from parent, the caches whose workspace is gone or
// is another directory now (a repository cloned again at its path): no
// confined command will use them again, and nothing else trims them.
func (s *session) pruneCaches(parent string) {
	owners, _ := filepath.Glob(filepath.Join(parent, "*"+ownerSuffix))
	pruned := 0
	for _, owner := range owners {
		if pruned == maxPruned {
			return
		}
		ws, err := os.ReadFile(owner)
		if err != nil {
			continue
		}
		dir := strings.TrimSuffix(owner, ownerSuffix)
		if workspaceCacheKey(string(ws)) == filepath.Base(dir) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			s.log.Debug("prune cache", "dir", dir, "err", err)
			continue
		}
		os.Remove(owner)
		pruned++
	}
}
