package shim

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// codeStores are caches that hold code other projects build or run later,
// outside any sandbox, without checking it again: Go's extracted modules
// (go build compiles $GOMODCACHE/mod@v as it finds it; only go mod verify
// would notice), Cargo's extracted crates (build.rs included), pip's
// cache of wheels it built (installed again without a hash), Poetry's
// virtual environments (a .pth file there runs at every start of that
// project's Python), pre-commit's hook environments (run by every git
// commit), node-gyp's headers (compiled into native modules), yarn 1's
// unpacked packages (copied into the next project's node_modules) and
// pnpm's package metadata. A confined command may read them — builds
// need the modules — but not change them: what it would write there needs
// the network anyway (a download), which is not confined.
func codeStores(getenv func(string) string, home, cache string) []string {
	return []string{
		goModCache(getenv, home),
		filepath.Join(home, ".cargo", "registry"), filepath.Join(home, ".cargo", "git"),
		filepath.Join(cache, "pip"), filepath.Join(cache, "pypoetry"),
		filepath.Join(cache, "pre-commit"), filepath.Join(cache, "node-gyp"),
		filepath.Join(cache, "yarn"), filepath.Join(cache, "pnpm"),
	}
}

// confinedGoCache is the build cache of confined Go commands in the
// workspace ws, $XDG_CACHE_HOME/execgate/go-builds/HASH-of-ws, set as
// their GOCACHE; "" when go is told to keep none (GOCACHE=off). Go trusts
// what its build cache holds: an entry is found by a hash of its inputs,
// and its output — compiled code — is linked as it is. A confined command
// writing the cache that unconfined builds use (the user's own, an
// approved go install) could rewrite the compiled standard library it just
// built, and the next build outside the sandbox would link it. So confined
// builds keep a cache of their own, which no unconfined build reads — one
// per workspace: shared, a confined command in one repository rewrote what
// the confined build of another linked into the program it wrote there,
// for the user to run. It starts cold once per workspace. (Not under
// go-build, which earlier confined commands could write.) key is the
// workspace's workspaceCacheKey, as for the other caches below: made once
// per command, it costs a statx.
func confinedGoCache(getenv func(string) string, cache, key string) string {
	if v := getenv("GOCACHE"); v != "" && !filepath.IsAbs(v) {
		return ""
	}
	return filepath.Join(cache, "execgate", "go-builds", key)
}

// workspaceCacheKey names the caches of the workspace ws: its path and
// the identity of its directory on disk (inode, and birth time where the
// file system keeps one). A repository deleted and another cloned at the
// same path gets caches of its own: what the first one's confined builds
// wrote (a planted compiled package) must not be linked into the second
// one's binaries.
func workspaceCacheKey(ws string) string {
	sum := sha256.Sum256([]byte(ws + dirIdentity(ws)))
	return hex.EncodeToString(sum[:8])
}

// confinedUVCache is uv's cache for confined commands in the workspace
// ws, $XDG_CACHE_HOME/execgate/uv/HASH-of-ws, set as UV_CACHE_DIR: uv's
// own cache holds the index answers and unpacked wheels the next
// unconfined uv sync installs from, which a confined command must not
// write (as npm's and Poetry's are read only to it); uv needs a cache it
// may write even to run, so it gets one of its own, per workspace as
// Go's. A confined uv that needs a package this cache lacks needs the
// network, which asks.
func confinedUVCache(cache, key string) string {
	return filepath.Join(cache, "execgate", "uv", key)
}

// confinedLintCache is golangci-lint's cache for confined commands in the
// workspace ws, $XDG_CACHE_HOME/execgate/golangci-lint/KEY, set as
// GOLANGCI_LINT_CACHE: it keeps the findings of packages it has seen, and
// one a repository's confined command rewrote would hide findings from
// the user's own runs elsewhere.
func confinedLintCache(cache, key string) string {
	return filepath.Join(cache, "execgate", "golangci-lint", key)
}

// confinedFetchCaches are npm's and pip's caches for the confined commands
// of the workspace whose key is key that reach the agent's allowed hosts
// (sandbox.Grants.Proxy), set as npm_config_cache and PIP_CACHE_DIR. The
// user's own are read only to a confined command (npm's cache answers the
// next project's installs from its index; pip's holds wheels it built,
// installed again without a hash), and a download cannot work without
// writing one: npm fails outright, pip warns and goes without.
func confinedFetchCaches(cache, key string) (npm, pip string) {
	return filepath.Join(cache, "execgate", "npm", key), filepath.Join(cache, "execgate", "pip", key)
}

// goModCache is Go's module cache: $GOMODCACHE, else the first $GOPATH
// entry's pkg/mod, else ~/go/pkg/mod.
func goModCache(getenv func(string) string, home string) string {
	if v := getenv("GOMODCACHE"); v != "" && filepath.IsAbs(v) {
		return v
	}
	gopath := filepath.Join(home, "go")
	if v := getenv("GOPATH"); v != "" {
		gopath = filepath.SplitList(v)[0]
	}
	return filepath.Join(gopath, "pkg", "mod")
}

// gitXDGFiles are the files git reads from its XDG directory: its
// configuration, ignore and attributes files — not the directory, which
// also holds git-credential-store's plain-text tokens (credentials).
func gitXDGFiles(getenv func(string) string, home string) []string {
	dir := filepath.Join(home, ".config")
	if v := getenv("XDG_CONFIG_HOME"); v != "" && filepath.IsAbs(v) {
		dir = v
	}
	dir = filepath.Join(dir, "git")
	return []string{filepath.Join(dir, "config"), filepath.Join(dir, "ignore"), filepath.Join(dir, "attributes")}
}
