package policy

import (
	"path/filepath"
	"slices"
	"strings"
)

// npmAuthKeys are the settings of an .npmrc that authenticate to a
// registry, alone or after a registry's //host/path/: prefix
// (https://docs.npmjs.com/cli/configuring-npm/npmrc#auth-related-configuration).
var npmAuthKeys = nameSet{"_auth", "_authtoken", "_password", "certfile", "keyfile"}

// registryTokenFiles notes on seg, a download that could run confined
// through the proxy (confinedFetch), whether a file that sandbox lets
// it read holds a registry's credentials: the .npmrc of the directory it
// runs in or any above (the workspace's own, a gitignored one beside
// package.json), and npm's user and global configuration where the
// environment names them. What it installs could read the token and
// publish as the user, as with NPM_TOKEN in its environment
// (RegistryCredentials); the home directory's ~/.npmrc is out of the
// sandbox's reach. A directory only known at run time counts as one.
func (a *analyzer) registryTokenFiles(seg *Segment, words []word) {
	argv := make([]string, len(words))
	for i, w := range words {
		argv[i] = w.text
	}
	if _, ok := confinedFetch(argv); !ok {
		return
	}
	if a.cwd == "" || npmrcTokens(a.cwd, a.home, a.env) {
		seg.registryToken = true
		return
	}
	if pythonDownload(argv) && pythonIndexTokens(argv, a.cwd, a.home, a.env) {
		seg.registryToken = true
	}
}

// RegistryTokenFiles reports whether code run in dir could read a
// registry's credentials from a file npm, pip or uv would take them from
// there (npmrcTokens, pythonIndexTokens). Code that can is no one's to
// reach the registries with: with the agent's hosts allowed, the shim
// gives such a command no proxy to them.
func RegistryTokenFiles(dir, home string, getenv func(string) string) bool {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return dir == "" || npmrcTokens(dir, home, getenv) || pythonIndexTokens(nil, dir, home, getenv)
}

// npmrcTokens reports whether an .npmrc npm run in dir reads holds a
// registry's credentials: dir's and each one's above (but the home's,
// which the sandbox keeps from it), the user and global configuration the
// environment names, and those these name in turn.
func npmrcTokens(dir, home string, getenv func(string) string) bool {
	resolve := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			p = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return p
	}
	var files []string
	for _, k := range []string{"npm_config_userconfig", "NPM_CONFIG_USERCONFIG", "npm_config_globalconfig", "NPM_CONFIG_GLOBALCONFIG"} {
		if v := getenv(k); v != "" {
			files = append(files, resolve(v))
		}
	}
	for d := dir; d != ""; d = parentDir(d) {
		if d != home {
			files = append(files, filepath.Join(d, ".npmrc"))
		}
	}
	for i := 0; i < len(files); i++ {
		if i == maxNpmrcFiles || npmrcAuthenticates(files[i]) {
			return true
		}
		for _, v := range npmrcNamedConfigs(files[i]) {
			if strings.Contains(v, "${") {
				return true // only known when npm reads it
			}
			if f := resolve(v); !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return false
}

// pythonIndexTokens reports whether a configuration file pip or uv run
// by argv in dir reads holds an index's credentials (pythonIndexFiles).
func pythonIndexTokens(argv []string, dir, home string, getenv func(string) string) bool {
	for _, f := range pythonIndexFiles(argv, dir, home, getenv) {
		if indexFileAuthenticates(f) {
			return true
		}
	}
	return false
}

// maxNpmrcFiles bounds the .npmrc files one download's check reads,
// those that name others included: more asks.
const maxNpmrcFiles = 64

// npmrcConfigKeys are the settings of an .npmrc that name another file
// npm reads its configuration from, credentials included (a project's
// .npmrc may set userconfig=sub/u.npmrc: npm 11 then sends that file's
// token).
var npmrcConfigKeys = nameSet{"globalconfig", "userconfig"}

// npmrcNamedConfigs lists the files the .npmrc at p names as npm's user
// or global configuration (npmrcConfigKeys), as written.
func npmrcNamedConfigs(p string) []string {
	var out []string
	configLines(p, func(line string) bool {
		k, v, ok := strings.Cut(line, "=")
		if ok && npmrcConfigKeys.has(strings.ToLower(strings.Trim(strings.TrimSpace(k), `"'`))) {
			if v = strings.Trim(strings.TrimSpace(v), `"'`); v != "" {
				out = append(out, v)
			}
		}
		return false
	})
	return out
}

// resolveFrom is p made absolute against the analyzer's directory.
func (a *analyzer) resolveFrom(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.cwd, p)
}

// npmrcAuthenticates reports whether the .npmrc at p sets a registry's
// credentials (npmAuthKeys), or cannot be read whole: one that exists
// but does not open counts.
func npmrcAuthenticates(p string) bool {
	return configLines(p, func(line string) bool {
		k, _, ok := strings.Cut(line, "=")
		if !ok {
			return false
		}
		k = strings.ToLower(strings.Trim(strings.TrimSpace(k), `"'`))
		if i := strings.LastIndex(k, ":"); i >= 0 {
			k = k[i+1:] // //registry.npmjs.org/:_authToken
		}
		return npmAuthKeys.has(k)
	})
}

// registryToken reports whether a download of res may read a registry's
// credentials from a file (registryTokenFiles): what any of its downloads
// installs could read them, so none of them runs unasked.
func registryToken(res Result) bool {
	for _, seg := range res.Segments {
		if seg.registryToken {
			return true
		}
	}
	return false
}

// EnvironCredentials lists the variables of environ that give npm, uv or
// pip a registry's credentials under a name no list holds: npm reads any
// npm_config_* variable, whatever its case, as a setting
// (npm_config_//registry.npmjs.org/:_authToken, which a shell passes on
// though it cannot set it); uv reads an index's user and password from
// UV_INDEX_NAME_USERNAME and _PASSWORD; pip and uv read the netrc file
// NETRC names. A download with one asks, as with RegistryCredentials: the
// tool holds the credential, and what it installs could take it from the
// tool's environment and publish.
func EnvironCredentials(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if uvIndexCredential(name) || name == "NETRC" && value != "" {
			out = append(out, name)
			continue
		}
		if len(name) <= len("npm_config_") || !strings.EqualFold(name[:len("npm_config_")], "npm_config_") {
			continue
		}
		k := strings.ToLower(name[len("npm_config_"):])
		if i := strings.LastIndex(k, ":"); i >= 0 {
			k = k[i+1:]
		}
		if npmAuthKeys.has(k) {
			out = append(out, name)
		}
	}
	return out
}

// RegistryTokens lists the variables of environ that hold a registry's
// credentials: RegistryCredentials's and EnvironCredentials's, once each.
func RegistryTokens(environ []string) []string {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok {
			vars[name] = value
		}
	}
	out := RegistryCredentials(func(k string) string { return vars[k] })
	for _, name := range EnvironCredentials(environ) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// SecretVariables lists the variables of environ whose names say they
// hold a secret (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD: the
// names echo "$NAME" is refused for), those whose value is a URL with
// credentials in it (DATABASE_URL, GOPROXY: carriesUserinfo), and every
// registry token (RegistryTokens), once each. Code that runs confined but reaches the
// network runs without them: an allowed host that takes uploads (a
// registry, a code host) would carry them off as surely as any other.
func SecretVariables(environ []string) []string {
	out := RegistryTokens(environ)
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name != "" && !slices.Contains(out, name) && !publicParams.has(name) && !publicByConvention(name) &&
			(secretName.get().MatchString(name) || carriesUserinfo(value)) {
			out = append(out, name)
		}
	}
	return out
}

// uvIndexCredential reports whether name is one of uv's variables for an
// index's credentials: UV_INDEX_NAME_USERNAME, UV_INDEX_NAME_PASSWORD
// (https://docs.astral.sh/uv/concepts/indexes/#providing-credentials-directly).
func uvIndexCredential(name string) bool {
	rest, ok := strings.CutPrefix(name, "UV_INDEX_")
	if !ok {
		return false
	}
	for _, suffix := range []string{"_USERNAME", "_PASSWORD"} {
		if index, ok := strings.CutSuffix(rest, suffix); ok && index != "" {
			return true
		}
	}
	return false
}
