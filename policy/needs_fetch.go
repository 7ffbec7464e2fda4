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
	{"npm add", "the npm registry"}, // https://docs.npmjs.com/cli/commands
	{"npm audit", "the npm registry"},
	{"npm ci", "the npm registry"},
	{"npm clean-install", "the npm registry"},
	{"npm i", "the npm registry"},
	{"npm install", "the npm registry"},
	{"npm install-ci-test", "the npm registry"},
	{"npm install-test", "the npm registry"},
	{"npm it", "the npm registry"},
	{"npm outdated", "the npm registry"},
	{"npm publish", "the npm registry"},
	{"npm unpublish", "the npm registry"},
	{"npm up", "the npm registry"},
	{"npm update", "the npm registry"},
	{"npm upgrade", "the npm registry"},
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

// fetches reports whether argv asks a package manager to download from
// (or upload to) its registry, and names what it reaches. python -m pip
// is pip.
func fetches(argv []string) (what string, ok bool) {
	if len(argv) == 0 || printsOnly(argv) {
		return "", false
	}
	prog := path.Base(argv[0])
	args := argv[1:]
	if strings.HasPrefix(prog, "python") && len(args) >= 2 && args[0] == "-m" {
		prog, args = args[1], args[2:]
	}
	var words []string // the words that are not options, before "--"
	for _, a := range args {
		if a == "--" {
			break
		}
		if offlineFlags.has(a) || a == "--help" {
			return "", false // only what is on disk, or it prints its help
		}
		if !isOption(a) && len(words) < 2 {
			words = append(words, a)
		}
	}
	if what, ok := fetchers.lookup(prog); ok && (prog != "yarn" || len(words) == 0) {
		return prog + " downloads from " + what, true
	}
	for n := min(len(words), 2); n >= 1; n-- {
		key := prog + " " + strings.Join(words[:n], " ")
		if what, ok := fetchers.lookup(key); ok {
			return key + " downloads from " + what, true
		}
	}
	return "", false
}
