package policy

import (
	"slices"
	"strings"
)

// npmShorthands are npm's shorthands, each with the words npm reads in
// its place (npm -q is --loglevel warn, -D --save-dev, --reg --registry).
// npm's parser (nopt) takes them with one dash or two, a single-letter
// group (-Dw) as its letters, and the start of one no option's name
// starts with (--enj is --enjoy-by). From npm 11.19's
// workspaces/config/lib/definitions/index.js (https://github.com/npm/cli);
// TestNpmReadsAsNpm compares the reading with the npm installed. Sorted.
var npmShorthands = table[string]{
	{"?", "--usage"},
	{"B", "--save-bundle"},
	{"C", "--prefix"},
	{"D", "--save-dev"},
	{"E", "--save-exact"},
	{"H", "--usage"},
	{"L", "--location"},
	{"O", "--save-optional"},
	{"P", "--save-prod"},
	{"S", "--save"},
	{"a", "--all"},
	{"c", "--call"},
	{"d", "--loglevel info"},
	{"dd", "--loglevel verbose"},
	{"ddd", "--loglevel silly"},
	{"desc", "--description"},
	{"enjoy-by", "--before"},
	{"f", "--force"},
	{"g", "--global"},
	{"h", "--usage"},
	{"help", "--usage"},
	{"iwr", "--include-workspace-root"},
	{"l", "--long"},
	{"local", "--no-global"},
	{"m", "--message"},
	{"n", "--no-yes"},
	{"no", "--no-yes"},
	{"p", "--parseable"},
	{"porcelain", "--parseable"},
	{"q", "--loglevel warn"},
	{"quiet", "--loglevel warn"},
	{"readonly", "--read-only"},
	{"reg", "--registry"},
	{"s", "--loglevel silent"},
	{"silent", "--loglevel silent"},
	{"v", "--version"},
	{"verbose", "--loglevel verbose"},
	{"w", "--workspace"},
	{"ws", "--workspaces"},
	{"y", "--yes"},
}

// npmFlagValues are npm's flags whose type takes a word too, each with
// the word it takes: "" for any that does not start with one dash
// (npm --browser install publish publishes: install is the browser).
// Every flag, these and npmFlagOptions, takes true or false. From the
// same file.
var npmFlagValues = table[string]{
	{"browser", ""},
	{"color", "always"},
	{"expect-results", "null"},
	{"optional", "null"},
	{"production", "null"},
	{"workspaces", "null"},
	{"yes", "null"},
}

// npmOption is one option npm read: its full name (--logl is loglevel),
// and whether it was negated (--no-global).
type npmOption struct {
	name string
	no   bool
}

// npmRead reads args, npm's arguments, as npm's parser (nopt) does: the
// options it sees, by their full names, and the other words (its command
// first). An option takes the next word as its value by its type: a
// value option always, unless the word is an option; a flag only true or
// false, or the words its type names (npmFlagValues); an option npm does
// not know, none. ok is false for a reading npm's parser would not end.
func npmRead(args []string) (opts []npmOption, words []string, ok bool) {
	ok = true
	queue := slices.Clone(args)
	for i, steps := 0, 0; i < len(queue); i, steps = i+1, steps+1 {
		if steps > 4*len(args)+16 {
			return nil, nil, false
		}
		arg := queue[i]
		if len(arg) >= 2 && strings.Trim(arg, "-") == "" {
			return opts, append(words, queue[i+1:]...), ok // --: the rest are words
		}
		if len(arg) < 2 || arg[0] != '-' {
			words = append(words, arg)
			continue
		}
		hadEq := false
		if k, v, found := strings.Cut(arg, "="); found {
			hadEq, arg = true, k
			queue = slices.Replace(queue, i, i+1, k, v)
		}
		if exp := npmShorthand(arg); exp != nil {
			queue = slices.Replace(queue, i, i+1, exp...)
			if len(exp) == 0 || exp[0] != arg {
				i--
				continue
			}
		}
		name, no := strings.TrimLeft(arg, "-"), false
		for strings.HasPrefix(strings.ToLower(name), "no-") {
			name, no = name[3:], !no
		}
		if full := npmAbbrev(name); full != "" {
			name = full
		}
		opts = append(opts, npmOption{name, no})
		if i+1 == len(queue) {
			continue
		}
		takes, sure := npmTakes(name, queue[i+1], no, hadEq)
		if !sure {
			ok = false
		}
		if takes {
			i++
		}
	}
	return opts, words, ok
}

// npmTakes reports whether npm takes next as the value of the option
// name (its full name), negated or not (no), given with = or not (hadEq),
// and whether that is sure: where it hangs on the option's type beyond
// these tables (--no-loglevel warn, --prefix -x), it is not.
func npmTakes(name, next string, no, hadEq bool) (takes, sure bool) {
	value, flag := npmValueOptions.has(name), npmFlagOptions.has(name)
	switch {
	case value && no:
		return false, false // npm takes the next word if the option's type names it
	case value || !flag && hadEq:
		if strings.HasPrefix(next, "-") && next != "-" {
			return false, false // npm takes it for some types, not others
		}
		return true, true
	case next == "true" || next == "false":
		return true, true
	case !flag || next == "":
		return false, true // an option npm does not know is a flag
	}
	word, ok := npmFlagValues.lookup(name)
	switch {
	case !ok:
		return false, true
	case word == "":
		return len(next) < 2 || next[0] != '-' || next[1] == '-', true
	}
	return next == word || next == "null" && name != "color", true
}

// npmShorthand is what npm reads in place of the option word a when it is
// a shorthand, a group of single-letter ones, or the start of one: nil
// for an option's name or the start of one, or no shorthand.
func npmShorthand(a string) []string {
	name := strings.TrimLeft(a, "-")
	if name == "" {
		return []string{} // -=x: npm drops the dash, x is a word
	}
	if npmValueOptions.has(name) || npmFlagOptions.has(name) {
		return nil
	}
	if exp, ok := npmShorthands.lookup(name); ok {
		return strings.Fields(exp)
	}
	var letters []string
	for _, c := range name {
		exp, ok := npmShorthands.lookup(string(c))
		if !ok {
			letters = nil
			break
		}
		letters = append(letters, strings.Fields(exp)...)
	}
	if letters != nil {
		return letters
	}
	if npmAbbrev(name) != "" {
		return nil
	}
	var full string
	for key := range npmShorthands.all() {
		if strings.HasPrefix(key, name) {
			if full != "" {
				return nil // the start of two: npm expands neither
			}
			full = key
		}
	}
	if full == "" {
		return nil
	}
	return strings.Fields(npmShorthands.get(full))
}

// npmAbbrev is the option whose name name is, or is the start of and no
// other option's name is; "" for none.
func npmAbbrev(name string) string {
	if npmValueOptions.has(name) || npmFlagOptions.has(name) {
		return name
	}
	return uniquePrefix(name, slices.Concat(npmValueOptions, npmFlagOptions))
}

// uniquePrefix is the one name of names that s is the start of, "" for
// none or more than one (or an empty s).
func uniquePrefix(s string, names []string) string {
	if s == "" {
		return ""
	}
	var only string
	for _, n := range names {
		if strings.HasPrefix(n, s) {
			if only != "" {
				return ""
			}
			only = n
		}
	}
	return only
}

// npmElsewhere are npm's options, by their full names, that name another
// place to install (the global prefix, a prefix, a location) or another
// registry or configuration to take one and its credentials from:
// however they are spelled (--locat global, --prefi, -C, --userc), a
// download with one asks. --no-global is no such option.
var npmElsewhere = nameSet{"global", "globalconfig", "location", "prefix", "registry", "userconfig"}

// npmConfined reports whether args, the arguments of an npm download,
// are read the same by npm and execgate (npmRead) and name neither
// another place or registry (npmElsewhere) nor a package from anywhere
// but the registry (npmRegistrySpec).
func npmConfined(args []string) bool {
	opts, words, ok := npmRead(args)
	if !ok {
		return false
	}
	for _, o := range opts {
		if npmElsewhere.has(o.name) && !(o.no && o.name == "global") {
			return false
		}
	}
	for _, w := range words[min(len(words), 1):] {
		if !npmRegistrySpec(w) {
			return false
		}
	}
	return true
}

// npmRegistrySpec reports whether npm reads the argument w as a package
// of the registry (left-pad, @types/node@^20, alias@npm:pkg@1) rather
// than one of GitHub's (user/repo, user/repo#main), a git URL or a path:
// npm-package-arg's reading (https://github.com/npm/npm-package-arg).
func npmRegistrySpec(w string) bool {
	name, version, _ := strings.Cut(strings.TrimPrefix(w, "@"), "@")
	if strings.HasPrefix(version, "npm:") {
		return npmRegistrySpec(version[len("npm:"):])
	}
	slashes := strings.Count(name, "/")
	if strings.HasPrefix(w, "@") {
		slashes-- // @scope/name
	}
	return name != "" && slashes == 0 && !strings.ContainsAny(name, `:\~`) && !strings.HasPrefix(name, ".") &&
		!strings.ContainsAny(version, `:/\#`)
}
