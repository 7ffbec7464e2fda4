package policy

import "strings"

// npmCommands are the names npm takes for its commands, each with the
// command it runs: the commands themselves, their aliases and its own
// typos (npm i, npm isntall, npm cit, npm udpate). Made from npm 11's
// lib/utils/cmd-list.js (https://github.com/npm/cli). Sorted.
var npmCommands = table[string]{
	{"access", "access"},
	{"add", "install"},
	{"add-user", "adduser"},
	{"adduser", "adduser"},
	{"approve-scripts", "approve-scripts"},
	{"audit", "audit"},
	{"author", "owner"},
	{"bugs", "bugs"},
	{"c", "config"},
	{"cache", "cache"},
	{"ci", "ci"},
	{"cit", "install-ci-test"},
	{"clean-install", "ci"},
	{"clean-install-test", "install-ci-test"},
	{"completion", "completion"},
	{"config", "config"},
	{"create", "init"},
	{"ddp", "dedupe"},
	{"dedupe", "dedupe"},
	{"deny-scripts", "deny-scripts"},
	{"deprecate", "deprecate"},
	{"diff", "diff"},
	{"dist-tag", "dist-tag"},
	{"dist-tags", "dist-tag"},
	{"docs", "docs"},
	{"doctor", "doctor"},
	{"edit", "edit"},
	{"exec", "exec"},
	{"explain", "explain"},
	{"explore", "explore"},
	{"find", "search"},
	{"find-dupes", "find-dupes"},
	{"fund", "fund"},
	{"get", "get"},
	{"help", "help"},
	{"help-search", "help-search"},
	{"hlep", "help"},
	{"home", "docs"},
	{"i", "install"},
	{"ic", "ci"},
	{"in", "install"},
	{"info", "view"},
	{"init", "init"},
	{"innit", "init"},
	{"ins", "install"},
	{"inst", "install"},
	{"insta", "install"},
	{"instal", "install"},
	{"install", "install"},
	{"install-ci-test", "install-ci-test"},
	{"install-clean", "ci"},
	{"install-scripts", "install-scripts"},
	{"install-test", "install-test"},
	{"isnt", "install"},
	{"isnta", "install"},
	{"isntal", "install"},
	{"isntall", "install"},
	{"isntall-clean", "ci"},
	{"issues", "bugs"},
	{"it", "install-test"},
	{"la", "ll"},
	{"link", "link"},
	{"list", "ls"},
	{"ll", "ll"},
	{"ln", "link"},
	{"login", "login"},
	{"logout", "logout"},
	{"ls", "ls"},
	{"ogr", "org"},
	{"org", "org"},
	{"outdated", "outdated"},
	{"owner", "owner"},
	{"pack", "pack"},
	{"ping", "ping"},
	{"pkg", "pkg"},
	{"prefix", "prefix"},
	{"profile", "profile"},
	{"prune", "prune"},
	{"publish", "publish"},
	{"query", "query"},
	{"r", "uninstall"},
	{"rb", "rebuild"},
	{"rebuild", "rebuild"},
	{"remove", "uninstall"},
	{"repo", "repo"},
	{"restart", "restart"},
	{"rm", "uninstall"},
	{"root", "root"},
	{"rum", "run"},
	{"run", "run"},
	{"run-script", "run"},
	{"s", "search"},
	{"sbom", "sbom"},
	{"se", "search"},
	{"search", "search"},
	{"set", "set"},
	{"show", "view"},
	{"shrinkwrap", "shrinkwrap"},
	{"sit", "install-ci-test"},
	{"stage", "stage"},
	{"star", "star"},
	{"stars", "stars"},
	{"start", "start"},
	{"stop", "stop"},
	{"t", "test"},
	{"team", "team"},
	{"test", "test"},
	{"token", "token"},
	{"trust", "trust"},
	{"tst", "test"},
	{"u", "update"},
	{"udpate", "update"},
	{"un", "uninstall"},
	{"undeprecate", "undeprecate"},
	{"uninstall", "uninstall"},
	{"unlink", "uninstall"},
	{"unpublish", "unpublish"},
	{"unstar", "unstar"},
	{"up", "update"},
	{"update", "update"},
	{"upgrade", "update"},
	{"urn", "run"},
	{"v", "view"},
	{"verison", "version"},
	{"version", "version"},
	{"view", "view"},
	{"whoami", "whoami"},
	{"why", "explain"},
	{"x", "exec"},
}

// npmCommand is the command npm runs for name, as npm reads it: a
// camelCase name as its dashed form (installTest), a command or alias,
// else the one name it is the start of (npm pub is npm publish, npm
// inst an alias of npm install); "" for none, or more than one.
func npmCommand(name string) string {
	if strings.ContainsFunc(name, func(r rune) bool { return r >= 'A' && r <= 'Z' }) {
		var b strings.Builder
		for _, r := range name {
			if r >= 'A' && r <= 'Z' {
				b.WriteByte('-')
				r += 'a' - 'A'
			}
			b.WriteRune(r)
		}
		name = b.String()
	}
	if cmd, ok := npmCommands.lookup(name); ok || name == "" {
		return cmd
	}
	var found string
	for key, cmd := range npmCommands.all() {
		if strings.HasPrefix(key, name) {
			if found != "" {
				return "" // the start of two names: npm says which
			}
			found = cmd
		}
	}
	return found
}

// npmValueOptions are npm's options that take the next word as their
// value (their type has no Boolean: npm --loglevel warn install installs):
// every other option npm reads as a flag, and a word after it as the
// command or an argument. Made from npm 11.19's
// workspaces/config/lib/definitions/definitions.js
// (https://github.com/npm/cli); TestNpmValueOptionsMatchNpm compares them
// with the npm installed, where there is one. Sorted.
var npmValueOptions = nameSet{
	"_auth", "access", "allow-directory", "allow-file", "allow-git", "allow-remote", "allow-scripts", "also",
	"audit-level", "auth-type", "before", "ca", "cache", "cache-max", "cache-min", "cafile", "call", "cert",
	"cidr", "cpu", "depth", "diff", "diff-dst-prefix", "diff-src-prefix", "diff-unified", "editor",
	"expect-result-count", "expires", "fetch-retries", "fetch-retry-factor", "fetch-retry-maxtimeout",
	"fetch-retry-mintimeout", "fetch-timeout", "git", "globalconfig", "heading", "https-proxy", "include",
	"init-author-email", "init-author-name", "init-author-url", "init-license", "init-module", "init-type",
	"init-version", "init.author.email", "init.author.name", "init.author.url", "init.license", "init.module",
	"init.version", "install-strategy", "key", "libc", "local-address", "location", "lockfile-version",
	"loglevel", "logs-dir", "logs-max", "maxsockets", "message", "min-release-age", "min-release-age-exclude",
	"name", "node-gyp", "node-options", "noproxy", "omit", "only", "orgs", "orgs-permission", "os", "otp",
	"pack-destination", "package", "packages", "packages-and-scopes-permission", "password", "prefix", "preid",
	"provenance-file", "proxy", "registry", "replace-registry-host", "save-prefix", "sbom-format", "sbom-type",
	"scope", "scopes", "script-shell", "searchexclude", "searchlimit", "searchopts", "searchstaleness", "shell",
	"tag", "tag-version-prefix", "token-description", "umask", "user-agent", "userconfig", "viewer", "which",
	"workspace",
}

// npmFlagOptions are npm's other options: those it reads as a flag (their
// type has Boolean), needed to tell which option an abbreviation is. From
// the same file. Sorted.
var npmFlagOptions = nameSet{
	"all", "allow-same-version", "allow-scripts-pending", "allow-scripts-pin", "audit", "bin-links", "browser",
	"bypass-2fa", "color", "commit-hooks", "dangerously-allow-all-scripts", "description", "dev",
	"diff-ignore-all-space", "diff-name-only", "diff-no-prefix", "diff-text", "dry-run", "engine-strict",
	"expect-results", "force", "foreground-scripts", "format-package-lock", "fund", "git-tag-version", "global",
	"global-style", "if-present", "ignore-scripts", "include-attestations", "include-staged",
	"include-workspace-root", "init-private", "install-links", "json", "legacy-bundling", "legacy-peer-deps",
	"link", "long", "offline", "omit-lockfile-registry-resolved", "optional", "package-lock",
	"package-lock-only", "packages-all", "parseable", "prefer-dedupe", "prefer-offline", "prefer-online",
	"production", "progress", "provenance", "read-only", "rebuild-bundle", "save", "save-bundle", "save-dev",
	"save-exact", "save-optional", "save-peer", "save-prod", "shrinkwrap", "sign-git-commit", "sign-git-tag",
	"strict-allow-scripts", "strict-peer-deps", "strict-ssl", "timing", "unicode", "update-notifier", "usage",
	"version", "versions", "workspaces", "workspaces-update", "yes",
}
