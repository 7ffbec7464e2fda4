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
