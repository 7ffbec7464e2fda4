package gitconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Options says where git starts and with what.
type Options struct {
	// Dir is the absolute directory git starts in (after cd and -C).
	Dir string
	// Getenv reads git's environment; nil is an empty environment.
	Getenv func(string) string
	// Home is the home directory when the environment has no HOME.
	Home string
	// Params are the -c and --config-env options of the command line,
	// in order.
	Params []Param
}

// Param is one -c NAME=VALUE (or --config-env NAME=ENVVAR, with Value
// already read) from git's command line.
type Param struct {
	Name    string
	Value   string
	NoValue bool
}

// Config is the effective configuration of one git command.
type Config struct {
	// Repo is the repository git found (zero when none).
	Repo Repo
	// Entries are every variable read, in git's order: system, global,
	// local, worktree, submodules', then the environment and the
	// command line, includes in place.
	Entries []Entry
	// Modules are the git directories of the repository's submodules
	// (COMMON/modules/…), whose configuration is in Entries too.
	Modules []string

	env  func(string) string
	home string
	dir  string
	// files are the configuration files read, includes too, in order.
	files []string
}

// systemConfigs are where git installations keep the system file
// (ETC_GITCONFIG: /etc/gitconfig for distributions' git, PREFIX/etc for
// one built from source or installed by Homebrew, Xcode's git-core
// directory on macOS). Which one the git on
// PATH reads is compiled into it; reading every one that exists can only
// find more than git would.
var systemConfigs = [...]string{
	"/Applications/Xcode.app/Contents/Developer/usr/share/git-core/gitconfig",
	"/Library/Developer/CommandLineTools/usr/share/git-core/gitconfig",
	"/etc/gitconfig", "/opt/homebrew/etc/gitconfig", "/usr/etc/gitconfig", "/usr/local/etc/gitconfig",
}

// maxConfigFile bounds one configuration file: real ones are a few KiB.
const maxConfigFile = 1 << 20

// maxIncludeDepth is git's MAX_INCLUDE_DEPTH: deeper nesting (or a cycle)
// stops git with an error.
const maxIncludeDepth = 10

// maxModules bounds the submodule directories read.
const maxModules = 256

// Load reads the configuration a git command started with o would read.
// An error means the configuration cannot be proven: a file that exists
// but cannot be read or parsed, an include it cannot follow, a cycle,
// a repository git would refuse.
func Load(o Options) (*Config, error) {
	env := o.Getenv
	if env == nil {
		env = func(string) string { return "" }
	}
	c := &Config{env: env, home: cmpOr(env("HOME"), o.Home), dir: o.Dir}
	if !filepath.IsAbs(o.Dir) {
		return nil, fmt.Errorf("the directory git starts in is not known (%q)", o.Dir)
	}
	repo, err := discover(o.Dir, env)
	if err != nil {
		return nil, err
	}
	c.Repo = repo
	if !boolTrue(env("GIT_CONFIG_NOSYSTEM")) {
		if f := env("GIT_CONFIG_SYSTEM"); f != "" {
			err = c.readFile(absFrom(o.Dir, f), 0)
		} else {
			for _, f := range systemConfigs {
				if err = c.readFile(f, 0); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	for _, f := range c.globalFiles() {
		if err := c.readFile(f, 0); err != nil {
			return nil, err
		}
	}
	if repo.GitDir != "" {
		for _, f := range []string{filepath.Join(repo.CommonDir, "config"), filepath.Join(repo.GitDir, "config.worktree")} {
			if err := c.readFile(f, 0); err != nil {
				return nil, err
			}
		}
		if err := c.readModules(filepath.Join(repo.CommonDir, "modules"), 0); err != nil {
			return nil, err
		}
	}
	if err := c.readEnvParams(); err != nil {
		return nil, err
	}
	for _, p := range o.Params {
		name, err := canonicalName(p.Name)
		if err != nil {
			return nil, fmt.Errorf("git -c %s: %w", p.Name, err)
		}
		if err := c.add(Entry{Name: name, Value: p.Value, NoValue: p.NoValue, Origin: "the command line (-c)"}, 0); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// globalFiles are the user's configuration files: GIT_CONFIG_GLOBAL, or
// the XDG file and ~/.gitconfig.
func (c *Config) globalFiles() []string {
	if f := c.env("GIT_CONFIG_GLOBAL"); f != "" {
		return []string{absFrom(c.dir, f)}
	}
	var out []string
	if x := c.env("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "git", "config"))
	} else if c.home != "" {
		out = append(out, filepath.Join(c.home, ".config", "git", "config"))
	}
	if c.home != "" {
		out = append(out, filepath.Join(c.home, ".gitconfig"))
	}
	return out
}

// readFile reads one configuration file; a file that is not there is
// skipped, as git skips it.
func (c *Config) readFile(p string, depth int) error {
	if p == os.DevNull {
		return nil
	}
	b, err := readLimited(p, maxConfigFile)
	if err != nil {
		if notExist(err) {
			return nil
		}
		return fmt.Errorf("cannot read %s: %w", p, err)
	}
	entries, err := Parse(b, p)
	if err != nil {
		return err
	}
	c.files = append(c.files, p)
	for _, e := range entries {
		if err := c.add(e, depth); err != nil {
			return err
		}
	}
	return nil
}

// add records e and follows it when it is an include.
func (c *Config) add(e Entry, depth int) error {
	c.Entries = append(c.Entries, e)
	if !isInclude(e) {
		return nil
	}
	if e.NoValue {
		return fmt.Errorf("%s: %s has no value", e.Where(), e.Name)
	}
	p, err := c.includePath(e)
	if err != nil {
		return err
	}
	if depth+1 > maxIncludeDepth {
		return fmt.Errorf("%s: includes nest deeper than %d (or loop) at %s", e.Where(), maxIncludeDepth, p)
	}
	return c.readFile(p, depth+1)
}

// isInclude reports whether e is include.path or includeIf.COND.path.
// Every includeIf is followed whatever its condition says: reading a
// file git would skip can only find more than git would.
func isInclude(e Entry) bool {
	return e.Key() == "path" && (e.Name == "include.path" || e.Section() == "includeif" && e.Subsection() != "")
}

// includePath resolves an include's path as handle_path_include does: ~/
// is the home directory, a relative path is relative to the including
// file, and one that does not come from a file is an error (git stops).
func (c *Config) includePath(e Entry) (string, error) {
	p := e.Value
	switch {
	case p == "":
		return "", fmt.Errorf("%s: %s is empty", e.Where(), e.Name)
	case p == "~" || strings.HasPrefix(p, "~/"):
		if c.home == "" {
			return "", fmt.Errorf("%s: %s uses ~ with no home directory", e.Where(), e.Name)
		}
		return filepath.Join(c.home, p[1:]), nil
	case strings.HasPrefix(p, "~"), strings.HasPrefix(p, "%(prefix)/"):
		return "", fmt.Errorf("%s: %s = %s names a place execgate does not resolve", e.Where(), e.Name, p)
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	case e.Line == 0:
		return "", fmt.Errorf("%s: %s = %s is relative but does not come from a file", e.Where(), e.Name, p)
	}
	return filepath.Join(filepath.Dir(e.Origin), p), nil
}

// readModules reads the configuration of the submodules whose git
// directories live under dir (COMMON/modules/NAME, NAME may hold
// slashes, and submodules of submodules under NAME/modules): git runs
// commands inside them (status, diff --submodule, submodule update) with
// their own configuration.
func (c *Config) readModules(dir string, depth int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if notExist(err) {
			return nil
		}
		return fmt.Errorf("cannot read %s: %w", dir, err)
	}
	if depth > maxIncludeDepth {
		return fmt.Errorf("%s: submodule directories nest too deep", dir)
	}
	for _, de := range ents {
		if !de.IsDir() {
			continue
		}
		d := filepath.Join(dir, de.Name())
		if _, err := os.Stat(filepath.Join(d, "HEAD")); err == nil {
			if len(c.Modules) >= maxModules {
				return fmt.Errorf("%s: more than %d submodules", dir, maxModules)
			}
			c.Modules = append(c.Modules, d)
			for _, f := range []string{filepath.Join(d, "config"), filepath.Join(d, "config.worktree")} {
				if err := c.readFile(f, 0); err != nil {
					return err
				}
			}
			if err := c.readModules(filepath.Join(d, "modules"), depth+1); err != nil {
				return err
			}
			continue
		}
		// A name with a slash: modules/a/b.
		if err := c.readModules(d, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// readEnvParams reads GIT_CONFIG_PARAMETERS and GIT_CONFIG_COUNT with its
// GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n, as git_config_from_parameters
// and git_config_from_env do.
func (c *Config) readEnvParams() error {
	if v := c.env("GIT_CONFIG_PARAMETERS"); v != "" {
		params, err := parseParameters(v)
		if err != nil {
			return fmt.Errorf("GIT_CONFIG_PARAMETERS: %w", err)
		}
		for _, p := range params {
			name, err := canonicalName(p.Name)
			if err != nil {
				return fmt.Errorf("GIT_CONFIG_PARAMETERS: %s: %w", p.Name, err)
			}
			if err := c.add(Entry{Name: name, Value: p.Value, NoValue: p.NoValue, Origin: "GIT_CONFIG_PARAMETERS"}, 0); err != nil {
				return err
			}
		}
	}
	count := c.env("GIT_CONFIG_COUNT")
	if count == "" {
		return nil
	}
	n, err := strconv.ParseUint(strings.TrimSpace(count), 10, 31)
	if err != nil {
		return fmt.Errorf("GIT_CONFIG_COUNT=%q is not a count", count)
	}
	for i := range int(n) {
		kv := fmt.Sprintf("GIT_CONFIG_KEY_%d", i)
		key := c.env(kv)
		if key == "" {
			return fmt.Errorf("%s is missing", kv)
		}
		name, err := canonicalName(key)
		if err != nil {
			return fmt.Errorf("%s: %w", kv, err)
		}
		if err := c.add(Entry{Name: name, Value: c.env(fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)), Origin: kv}, 0); err != nil {
			return err
		}
	}
	return nil
}

// parseParameters splits GIT_CONFIG_PARAMETERS: single-quoted items
// ('name'='value', 'name'= for true, or the old 'name=value'), each quoted
// as sq_quote does ('\” for a quote, \! for a !).
func parseParameters(s string) ([]Param, error) {
	var out []Param
	for {
		s = strings.TrimLeft(s, " \t\n\r")
		if s == "" {
			return out, nil
		}
		key, rest, err := sqDequote(s)
		if err != nil {
			return nil, err
		}
		switch {
		case rest == "" || isSpace(rest[0]):
			name, value, ok := strings.Cut(key, "=")
			out = append(out, Param{Name: name, Value: value, NoValue: !ok})
		case rest[0] == '=':
			rest = rest[1:]
			if rest == "" || isSpace(rest[0]) {
				out = append(out, Param{Name: key, NoValue: true})
				break
			}
			value, after, err := sqDequote(rest)
			if err != nil {
				return nil, err
			}
			if after != "" && !isSpace(after[0]) {
				return nil, errors.New("bogus format")
			}
			out = append(out, Param{Name: key, Value: value})
			rest = after
		default:
			return nil, errors.New("bogus format")
		}
		s = rest
	}
}

// sqDequote reads one single-quoted word at the start of s (quote.c's
// sq_dequote_step) and returns it and what follows.
func sqDequote(s string) (string, string, error) {
	if s == "" || s[0] != '\'' {
		return "", "", errors.New("bogus format: expected a quote")
	}
	var b strings.Builder
	for i := 1; ; {
		j := strings.IndexByte(s[i:], '\'')
		if j < 0 {
			return "", "", errors.New("bogus format: unterminated quote")
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i+2 < len(s)+0 && s[i] == '\\' && (s[i+1] == '\'' || s[i+1] == '!') && s[i+2] == '\'' {
			b.WriteByte(s[i+1])
			i += 3
			continue
		}
		return b.String(), s[i:], nil
	}
}

// canonicalName checks a variable name given outside a file and writes it
// as git compares it (config.c's git_config_parse_key): section and key
// in lower case, the subsection as written.
func canonicalName(name string) (string, error) {
	first := strings.IndexByte(name, '.')
	last := strings.LastIndexByte(name, '.')
	if first <= 0 || last == len(name)-1 {
		return "", errors.New("key does not contain a section and a variable name")
	}
	section, key := name[:first], name[last+1:]
	for i := 0; i < len(section); i++ {
		if !isKeyChar(section[i]) {
			return "", fmt.Errorf("invalid section name %q", section)
		}
	}
	if !isAlpha(key[0]) {
		return "", fmt.Errorf("invalid variable name %q", key)
	}
	for i := 0; i < len(key); i++ {
		if !isKeyChar(key[i]) {
			return "", fmt.Errorf("invalid variable name %q", key)
		}
	}
	if strings.ContainsAny(name, "\n\x00") {
		return "", errors.New("invalid character in the name")
	}
	return strings.ToLower(section) + name[first:last+1] + strings.ToLower(key), nil
}

// boolTrue reports whether v reads as true to git_parse_maybe_bool
// (true, yes, on, or a non-zero number).
func boolTrue(v string) bool {
	b, ok := maybeBool(v)
	return ok && b
}

// maybeBool is git_parse_maybe_bool_text plus git_parse_int: true, yes,
// on, false, no, off, "" (false) in any case, or an integer.
func maybeBool(v string) (value, ok bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64); err == nil {
		return n != 0, true
	}
	// git_parse_int also takes a unit suffix (1k): still a number.
	if len(v) > 1 && strings.ContainsRune("kKmMgG", rune(v[len(v)-1])) {
		if n, err := strconv.ParseInt(v[:len(v)-1], 0, 64); err == nil {
			return n != 0, true
		}
	}
	return false, false
}
