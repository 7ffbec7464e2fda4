package policy

import (
	"path"
	"strings"
)

// fetchers are the package managers' subcommands whose work is to
// download from a registry or index (or upload to one): installing,
// adding, updating, resolving or publishing packages. Their analysis
// says they run the project's code or write the workspace, which the
// sandbox holds, but their purpose needs the network, which it refuses:
// confined they could only fail, so they ask as curl and git fetch do.
// Keyed by "PROGRAM SUBCOMMAND" (two subcommand words for go mod, uv pip,
// uv tool), or the program alone when any use of it fetches (tox builds
// its environments from the index). Sorted; the value is the registry.
var fetchers = table[string]{
	{"brew fetch", "Homebrew's servers"}, // https://docs.brew.sh/Manpage
	{"brew install", "Homebrew's servers"},
	{"brew reinstall", "Homebrew's servers"},
	{"brew tap", "Homebrew's servers"},
	{"brew update", "Homebrew's servers"},
	{"brew upgrade", "Homebrew's servers"},
	{"bun add", "the npm registry"}, // https://bun.sh/docs/cli/install
	{"bun i", "the npm registry"},
	{"bun install", "the npm registry"},
	{"bun publish", "the npm registry"},
	{"bun update", "the npm registry"},
	{"bundle add", "RubyGems"}, // https://bundler.io/man/bundle.1.html
	{"bundle install", "RubyGems"},
	{"bundle update", "RubyGems"},
	{"cargo add", "crates.io"}, // https://doc.rust-lang.org/cargo/commands/
	{"cargo fetch", "crates.io"},
	{"cargo install", "crates.io"},
	{"cargo login", "crates.io"},
	{"cargo publish", "crates.io"},
	{"cargo search", "crates.io"},
	{"cargo update", "crates.io"},
	{"cargo yank", "crates.io"},
	{"composer install", "Packagist"}, // https://getcomposer.org/doc/03-cli.md
	{"composer require", "Packagist"},
	{"composer update", "Packagist"},
	{"conda create", "its channels"}, // https://docs.conda.io/projects/conda/en/latest/commands/
	{"conda install", "its channels"},
	{"conda update", "its channels"},
	{"gem install", "RubyGems"}, // https://guides.rubygems.org/command-reference/
	{"gem push", "RubyGems"},
	{"gem update", "RubyGems"},
	{"go get", "the module proxy"}, // https://go.dev/ref/mod#go-get
	{"go mod download", "the module proxy"},
	{"go mod tidy", "the module proxy"}, // resolves every import, downloading what the cache lacks
	{"mamba create", "its channels"},
	{"mamba install", "its channels"},
	{"mamba update", "its channels"},
	// npm's commands by the name npm runs (npmCommand: npm i is npm
	// install): https://docs.npmjs.com/cli/commands. Those that act on the
	// registry as the user are uploads, as publish is.
	{"npm access", "the npm registry"},
	{"npm adduser", "the npm registry"},
	{"npm audit", "the npm registry"},
	{"npm ci", "the npm registry"},
	{"npm dedupe", "the npm registry"},
	{"npm deprecate", "the npm registry"},
	{"npm dist-tag", "the npm registry"},
	{"npm install", "the npm registry"},
	{"npm install-ci-test", "the npm registry"},
	{"npm install-test", "the npm registry"},
	{"npm login", "the npm registry"},
	{"npm logout", "the npm registry"},
	{"npm org", "the npm registry"},
	{"npm outdated", "the npm registry"},
	{"npm owner", "the npm registry"},
	{"npm profile", "the npm registry"},
	{"npm publish", "the npm registry"},
	{"npm star", "the npm registry"},
	{"npm team", "the npm registry"},
	{"npm token", "the npm registry"},
	{"npm trust", "the npm registry"},
	{"npm undeprecate", "the npm registry"},
	{"npm unpublish", "the npm registry"},
	{"npm unstar", "the npm registry"},
	{"npm update", "the npm registry"},
	{"pip download", "the package index"}, // https://pip.pypa.io/en/stable/cli/
	{"pip install", "the package index"},
	{"pip3 download", "the package index"},
	{"pip3 install", "the package index"},
	{"pipx install", "the package index"}, // https://pipx.pypa.io/stable/docs/
	{"pipx run", "the package index"},
	{"pnpm add", "the npm registry"}, // https://pnpm.io/cli/add
	{"pnpm dlx", "the npm registry"},
	{"pnpm fetch", "the npm registry"},
	{"pnpm i", "the npm registry"},
	{"pnpm install", "the npm registry"},
	{"pnpm publish", "the npm registry"},
	{"pnpm up", "the npm registry"},
	{"pnpm update", "the npm registry"},
	{"poetry add", "the package index"}, // https://python-poetry.org/docs/cli/
	{"poetry install", "the package index"},
	{"poetry lock", "the package index"},
	{"poetry publish", "the package index"},
	{"poetry update", "the package index"},
	{"tox", "the package index"},    // https://tox.wiki/en/latest/user_guide.html: each environment is installed from the index
	{"uv add", "the package index"}, // https://docs.astral.sh/uv/reference/cli/
	{"uv lock", "the package index"},
	{"uv pip install", "the package index"},
	{"uv sync", "the package index"},
	{"uv tool install", "the package index"},
	{"yarn", "the npm registry"}, // bare yarn installs: https://yarnpkg.com/cli/install
	{"yarn add", "the npm registry"},
	{"yarn dlx", "the npm registry"},
	{"yarn install", "the npm registry"},
	{"yarn npm", "the npm registry"},
	{"yarn publish", "the npm registry"},
	{"yarn up", "the npm registry"},
	{"yarn upgrade", "the npm registry"},
}

// offlineFlags make a fetcher use only what is on disk.
var offlineFlags = nameSet{"--frozen", "--no-index", "--offline"}

// The public registries' hosts, as an agent allows them
// (agents.NAME.sandbox.hosts).
var (
	pypiHosts = []string{"files.pythonhosted.org", "pypi.org"}
	npmHosts  = []string{"registry.npmjs.org"}
)

// confinedFetches are the downloads that can run confined through the
// shim's proxy, with their registry's hosts: everything they write lands
// in the workspace (a virtual environment, node_modules, a lock file) or
// in a cache the shim gives the workspace of its own (npm's, pip's, uv's:
// see shim.toolchains), and what they install runs confined like any of
// the workspace's code. Not here: uploads (publish, push: what they send
// is the point), and the fetchers whose download lands in a store other
// projects build or run later unchecked (Go's module cache, Cargo's
// registry, pnpm's and yarn's stores, Poetry's environments, pipx's, a
// user's or the global site: see shim.codeStores) — confined, those
// could only fail. Sorted.
var confinedFetches = table[[]string]{
	{"npm audit", npmHosts}, // sends the dependency tree, reads advisories
	{"npm ci", npmHosts},
	{"npm dedupe", npmHosts},
	{"npm install", npmHosts},
	{"npm install-ci-test", npmHosts},
	{"npm install-test", npmHosts},
	{"npm outdated", npmHosts},
	{"npm update", npmHosts},
	{"pip download", pypiHosts},
	{"pip install", pypiHosts},
	{"pip3 download", pypiHosts},
	{"pip3 install", pypiHosts},
	{"tox", pypiHosts}, // its environments are .tox/ in the workspace, installed with pip
	{"uv add", pypiHosts},
	{"uv lock", pypiHosts},
	{"uv pip install", pypiHosts},
	{"uv sync", pypiHosts},
}

// registryCredentials are variables that authenticate to a registry:
// npm's, PyPI's and their tools'. The token that installs a private
// package also publishes (the npm registry takes both on the same host),
// so a download confined with one in its environment would hand code it
// installs a way to publish as the user: such a download asks instead.
var registryCredentials = nameSet{
	"NODE_AUTH_TOKEN", "NPM_AUTH_TOKEN", "NPM_CONFIG__AUTH", "NPM_CONFIG__AUTHTOKEN", "NPM_TOKEN",
	"POETRY_PYPI_TOKEN_PYPI", "PYPI_API_TOKEN", "PYPI_TOKEN", "TWINE_PASSWORD", "UV_PUBLISH_PASSWORD",
	"UV_PUBLISH_TOKEN", "YARN_NPM_AUTH_TOKEN", "npm_config__auth", "npm_config__authToken",
}

// indexVars name an index or registry by URL, which may carry a user and
// password (https://user:token@host/simple).
var indexVars = nameSet{
	"NPM_CONFIG_REGISTRY", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL",
	"UV_INDEX", "UV_INDEX_URL", "npm_config_registry",
}

// RegistryCredentials lists the variables of the environment getenv
// reads that hold a registry's credentials (registryCredentials, or an
// index URL with a user in it).
func RegistryCredentials(getenv func(string) string) []string {
	if getenv == nil {
		return nil
	}
	var out []string
	for _, name := range registryCredentials {
		if getenv(name) != "" {
			out = append(out, name)
		}
	}
	for _, name := range indexVars {
		if carriesUserinfo(getenv(name)) {
			out = append(out, name)
		}
	}
	return out
}

// setsCredential reports whether a command of res assigns a registry's
// credential or an index URL (NPM_TOKEN=… npm ci, export PIP_INDEX_URL=…):
// one that, from the environment, would keep a download asking.
func setsCredential(res Result) bool {
	for _, seg := range res.Segments {
		if setsDownloadConfig(seg.Text) {
			return true // npm_config_prefix=/x, PIP_TARGET=/x, UV_CONFIG_FILE=ci.toml
		}
		for _, names := range []nameSet{registryCredentials, indexVars} {
			for _, name := range names {
				if strings.Contains(seg.Text, name+"=") {
					return true
				}
			}
		}
	}
	return false
}

// elsewhereOptions name a place to install outside the workspace (the
// user's site, the global prefix, a target directory) or a source other
// than the registry (an index, a registry, a directory of links): a
// download with one of them reaches what its registry's hosts do not say,
// and asks. A value given in the same word (--prefix=/x) counts.
var elsewhereOptions = nameSet{
	"--default-index", "--extra-index-url", "--find-links", "--global", "--index", "--index-url",
	"--location", "--prefix", "--reg", "--registry", "--root", "--system", "--target", "--trusted-host",
	"--user", "--userconfig", "-C", "-L", "-f", "-g", "-i", "-t",
}

// fetches reports whether argv asks a package manager to download from
// (or upload to) its registry, and names what it reaches. python -m pip
// is pip.
func fetches(argv []string) (what string, ok bool) {
	what, _, _, ok = fetchOf(argv)
	return what, ok
}

// confinedFetch reports whether argv is a download that can run confined
// through the shim's proxy (confinedFetches), and the registry's hosts.
func confinedFetch(argv []string) (hosts []string, ok bool) {
	_, key, args, ok := fetchOf(argv)
	if !ok {
		return nil, false
	}
	hosts, ok = confinedFetches.lookup(key)
	if !ok {
		return nil, false
	}
	if key == "npm" || strings.HasPrefix(key, "npm ") {
		if !npmConfined(args) {
			return nil, false
		}
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		if elsewhereOptions.has(name) || strings.Contains(a, "://") || strings.HasPrefix(a, "git+") ||
			strings.ContainsAny(a, "$`") || elsewhereLetter(a) {
			return nil, false
		}
	}
	return hosts, true
}

// elsewhereLetter reports whether the word a is single-letter options
// run together (npm -gf, pip -Ut DIR, -iHOST) one of which is an
// elsewhereOptions: npm and pip read each letter as its own option. A
// word only known at run time ("$FLAGS", written so by the analysis)
// is refused above: what it holds is not proven.
func elsewhereLetter(a string) bool {
	if len(a) < 3 || a[0] != '-' || a[1] == '-' {
		return false
	}
	for _, c := range a[1:] {
		if elsewhereOptions.has("-" + string(c)) {
			return true
		}
	}
	return false
}

// fetchOf is fetches, with the key of fetchers it matched and the
// fetcher's arguments (pip's, not python's, in python -m pip).
func fetchOf(argv []string) (what, key string, args []string, ok bool) {
	if len(argv) == 0 || printsOnly(argv) {
		return "", "", nil, false
	}
	prog := path.Base(argv[0])
	args = argv[1:]
	if strings.HasPrefix(prog, "python") {
		if module, rest, ok := pythonModule(args); ok {
			prog, args = module, rest // python3 -I -m pip install, -mpip
		}
	}
	if strings.HasPrefix(prog, "pip3.") {
		prog = "pip3" // pip3.12
	}
	var words []string // the words that are not options, before "--"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if offlineFlags.has(a) || a == "--help" {
			return "", "", nil, false // only what is on disk, or it prints its help
		}
		if !isOption(a) && len(words) < 2 {
			words = append(words, a)
		}
	}
	if prog == "npm" {
		_, words, _ = npmRead(args) // npm --loglevel warn install: the value is no command
		words = words[:min(len(words), 2)]
	}
	if prog == "npm" && len(words) > 0 {
		if cmd := npmCommand(words[0]); cmd != "" {
			words[0] = cmd // npm pub, npm inst, npm cit
		}
	}
	if what, ok := fetchers.lookup(prog); ok && (prog != "yarn" || len(words) == 0) {
		return prog + " downloads from " + what, prog, args, true
	}
	for n := min(len(words), 2); n >= 1; n-- {
		key := prog + " " + strings.Join(words[:n], " ")
		if what, ok := fetchers.lookup(key); ok {
			verb := " downloads from "
			if registryActions.has(words[n-1]) {
				verb = " acts as you on " // publish, owner, login …
			}
			return key + verb + what, key, args, true
		}
	}
	return "", "", nil, false
}

// registryActions are the fetchers' subcommands that act on the registry
// as the user rather than download from it: what the question says they
// do.
var registryActions = nameSet{
	"access", "adduser", "deprecate", "dist-tag", "login", "logout", "org", "owner", "profile", "publish",
	"push", "star", "team", "token", "unpublish", "unstar", "yank",
}

// pythonModule reads the interpreter's options before -m in args (the
// arguments of python): the module it runs and the module's arguments.
// Python takes options as getopt does, so -m may come after others, be
// joined to them or to its value (python3 -I -m pip, -Im pip, -mpip, -W
// ignore -m pip: https://docs.python.org/3/using/cmdline.html). Not ok
// for a script, -c, or an option it does not know.
func pythonModule(args []string) (module string, rest []string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--check-hash-based-pycs" {
			i++
			continue
		}
		if len(a) < 2 || a[0] != '-' || a[1] == '-' {
			return "", nil, false // a script, stdin, --, --help
		}
	letters:
		for j := 1; j < len(a); j++ {
			switch c := a[j]; {
			case c == 'm':
				if j+1 < len(a) {
					return a[j+1:], args[i+1:], true
				}
				if i+1 < len(args) {
					return args[i+1], args[i+2:], true
				}
				return "", nil, false
			case c == 'W' || c == 'X':
				if j+1 == len(a) {
					i++ // its value is the next word
				}
				break letters
			case strings.IndexByte("bBdEhiIOPqRsSuvVx", c) >= 0:
			default:
				return "", nil, false // -c, or one it does not know
			}
		}
	}
	return "", nil, false
}
