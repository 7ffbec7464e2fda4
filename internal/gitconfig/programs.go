package gitconfig

import (
	"fmt"
	"strings"
)

// Finding is something that makes a git command run a program besides
// git: a configuration variable, an environment variable, a hook, or the
// subcommand itself.
type Finding struct {
	// Name is the variable (core.fsmonitor), the environment variable
	// (GIT_PAGER), the hook (hooks/post-index-change) or the subcommand.
	Name string
	// Value is the value as configured ("" for a hook).
	Value string
	// Command is the command line git runs for it, when it is one a
	// caller can judge as a shell command (the pager `less -R`, an
	// alias's `!make lint`); "" when it is not (a hook file, a helper
	// git finds on PATH, a value with no meaning outside git).
	Command string
	// Where is the file and line it was read from, or where else it
	// came from (the environment, the command line).
	Where string
	// Runs says what the program is ("the file system monitor hook").
	Runs string
}

// String renders the finding for a reason: what runs and where it was
// set.
func (f Finding) String() string {
	if f.Value == "" {
		return fmt.Sprintf("%s (%s)", f.Runs, f.Where)
	}
	return fmt.Sprintf("%s: %s = %s (%s)", f.Runs, f.Name, clip(f.Value), f.Where)
}

func clip(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// Invocation is the git command being judged.
type Invocation struct {
	// Sub is the subcommand ("" when there is none: git --version).
	Sub string
	// Args are the words after the subcommand.
	Args []string
	// ReadOnly is set when the caller proved the command one of the
	// read-only forms of its subcommand (git branch, not git branch x):
	// those of a listing subcommand run no hooks, filters or transports.
	ReadOnly bool
}

// Programs lists what the command inv, run under this configuration,
// may run besides git. An error means it cannot be proven that it runs
// nothing else (an attribute file or index that cannot be read).
func (c *Config) Programs(inv Invocation) ([]Finding, error) {
	classes, hooks, spec := c.occasions(inv)
	var out []Finding
	for _, s := range alwaysRuns {
		if inv.Sub == s && classes&clsTool != 0 {
			out = append(out, Finding{Name: "git " + s, Runs: "a diff or merge tool chosen by configuration or by what is installed", Where: "git " + s})
		}
	}
	var drivers []driverUse
	for _, e := range c.Entries {
		k := lookupKey(e)
		if k == nil || k.classes&classes == 0 && k.kind != kAlias {
			continue
		}
		f, ok := c.entryFinding(e, k, inv, spec)
		if !ok {
			continue
		}
		if k.kind == kDriver {
			drivers = append(drivers, driverUse{attr: k.attr, driver: e.Subsection(), finding: f})
			continue
		}
		out = append(out, f)
	}
	for _, v := range envVars {
		if v.classes&classes == 0 {
			continue
		}
		if f, ok := c.envFinding(v); ok {
			out = append(out, f)
		}
	}
	hf, err := c.hooks(hooks)
	if err != nil {
		return nil, err
	}
	out = append(out, hf...)
	if len(drivers) > 0 {
		used, err := c.attributeDrivers(drivers, spec == nil || readsIndexAttributes(spec.name))
		if err != nil {
			return nil, err
		}
		for _, d := range drivers {
			if used[d.attr+"="+strings.ToLower(d.driver)] {
				d.finding.Runs += " that " + d.attr + "=" + d.driver + " attributes route files through"
				out = append(out, d.finding)
			}
		}
	}
	return out, nil
}

// readsIndexAttributes reports whether a subcommand writes files to the
// working tree, for which git reads .gitattributes from the index before
// the working tree (attr.c, GIT_ATTR_CHECKOUT).
func readsIndexAttributes(sub string) bool {
	switch sub {
	case "am", "apply", "archive", "bisect", "checkout", "cherry-pick", "clone", "merge", "pull", "rebase", "reset", "restore", "revert", "stash", "switch", "worktree":
		return true
	}
	return false
}

// driverUse is a driver's program, which runs only for files whose
// attributes name the driver.
type driverUse struct {
	attr, driver string
	finding      Finding
}

// occasions returns the classes of programs and the hooks the command
// may run, and the subcommand's spec (nil for one not in the table, which
// may run anything, or be an alias).
func (c *Config) occasions(inv Invocation) (class, []string, *subSpec) {
	if inv.Sub == "" {
		return 0, nil, nil
	}
	if askedForHelp(inv) {
		// git X --help is git help X: only the manual viewer runs.
		return clsHelp, nil, nil
	}
	if inv.Sub == "help" {
		return 0, nil, nil // git help, -a, -g: lists, in git's own output
	}
	spec := lookupSub(inv.Sub)
	if spec == nil {
		return clsAll, allHooks, nil
	}
	classes, hooks := spec.classes, spec.hooks
	if spec.lists && inv.ReadOnly {
		classes, hooks = classes&(clsAny|clsDiff|clsTextconv|clsSign), nil
	}
	if classes&clsSign != 0 && verifiesOnlyWhenAsked(spec.name) && !c.verifies(inv) {
		classes &^= clsSign
	}
	if classes&clsEdit != 0 && !edits(inv) {
		classes &^= clsEdit
	}
	if spec.pages || c.pagerOn(inv.Sub) {
		classes |= clsPager
	}
	return classes, hooks, spec
}

// askedForHelp reports whether the command shows a manual page: git help
// with a command or guide to show, or --help among a subcommand's
// options (before --).
func askedForHelp(inv Invocation) bool {
	for _, a := range inv.Args {
		if a == "--" {
			break
		}
		if a == "--help" {
			return true
		}
		if inv.Sub == "help" && (!strings.HasPrefix(a, "-") || a == "-m" || a == "-w" || a == "-i" || a == "--man" || a == "--web" || a == "--info") {
			return true
		}
	}
	return false
}

// verifiesOnlyWhenAsked are the subcommands that check signatures only
// with --show-signature, a %G format, or log.showSignature.
func verifiesOnlyWhenAsked(sub string) bool {
	switch sub {
	case "log", "show", "whatchanged", "reflog", "shortlog", "range-diff", "format-patch":
		return true
	}
	return false
}

// verifies reports whether a log-like command checks signatures, which
// runs gpg.program: --show-signature, a format with a %G placeholder
// (in its words, pretty.NAME or format.pretty), or log.showSignature
// set to anything but false.
func (c *Config) verifies(inv Invocation) bool {
	for _, a := range inv.Args {
		if strings.HasPrefix(a, "--show-signature") || strings.Contains(a, "%G") {
			return true
		}
	}
	for _, e := range c.Entries {
		switch {
		case e.Name == "log.showsignature":
			if b, ok := maybeBool(e.Value); e.NoValue || !ok || b {
				return true
			}
		case e.Section() == "pretty" || e.Name == "format.pretty":
			if strings.Contains(e.Value, "%G") {
				return true
			}
		}
	}
	return false
}

// edits reports whether the command may open an editor: commit and tag
// not given their message, and every other subcommand that has one.
func edits(inv Invocation) bool {
	has := func(opts ...string) bool {
		for _, a := range inv.Args {
			for _, o := range opts {
				if a == o || strings.HasPrefix(o, "--") && strings.HasPrefix(a, o+"=") || !strings.HasPrefix(o, "--") && strings.HasPrefix(a, o) && len(a) > len(o) {
					return true
				}
			}
		}
		return false
	}
	message := has("-m", "--message", "-F", "--file", "-C", "--reuse-message", "--no-edit")
	switch inv.Sub {
	case "commit":
		return !message || has("-e", "--edit")
	case "tag":
		return has("-a", "--annotate", "-s", "--sign", "-u", "--local-user", "-e", "--edit") && (!message || has("-e", "--edit"))
	}
	return true
}

// pagerOn reports whether pager.SUB turns paging on (true, or a pager
// command of its own).
func (c *Config) pagerOn(sub string) bool {
	for _, e := range c.Entries {
		if e.Section() == "pager" && e.Subsection() == "" && e.Key() == strings.ToLower(sub) {
			if b, ok := maybeBool(e.Value); e.NoValue || !ok || b {
				return true
			}
		}
	}
	return false
}

// entryFinding judges one configuration entry that names a program.
func (c *Config) entryFinding(e Entry, k *keySpec, inv Invocation, spec *subSpec) (Finding, bool) {
	f := Finding{Name: e.Name, Value: e.Value, Where: e.Where(), Runs: k.runs}
	if e.NoValue {
		// A program variable with no value stops git ("missing
		// value"), unless it is a boolean; either way nothing to run
		// is named, but nothing is proven either.
		switch k.kind {
		case kMaybeBool, kAlways:
		default:
			f.Value = "(no value)"
			return f, true
		}
	}
	switch k.kind {
	case kCommand, kDriver:
		if e.Value == "" {
			return f, false
		}
		f.Command = e.Value
	case kMaybeBool:
		if k.pattern == "pager.*" && e.Key() != strings.ToLower(inv.Sub) {
			return f, false
		}
		if _, isBool := maybeBool(e.Value); e.NoValue || isBool {
			return f, false // the built-in monitor, paging on or off
		}
		f.Command = e.Value
	case kProgram:
		if e.Value == "" {
			return f, false
		}
		f.Command = shellQuote(e.Value)
	case kHelper:
		if sub := e.Subsection(); sub != "" && !urlMatches(sub, c.accessedURLs(inv)) {
			return f, false // a helper for another site than the command reaches
		}
		return helperFinding(f, e.Value)
	case kAlias:
		if spec != nil || inv.Sub == "" || e.Key() != strings.ToLower(inv.Sub) {
			return f, false // git never lets an alias shadow a command
		}
		f.Runs = "an alias"
		if v, ok := strings.CutPrefix(e.Value, "!"); ok {
			f.Command = v
		}
	case kBang:
		v, ok := strings.CutPrefix(e.Value, "!")
		if !ok {
			return f, false
		}
		f.Command = v
	case kAlways:
		if e.Name == "man.viewer" && e.Value == "man" || !e.NoValue && e.Value == "" {
			return f, false
		}
	case kProtocol:
		if e.Name != "protocol.allow" && e.Subsection() != "ext" {
			return f, false
		}
		if v := strings.ToLower(e.Value); v != "always" && v != "user" {
			return f, false
		}
	case kRemoteHelper:
		u := e.Value
		if e.Section() == "url" {
			u = e.Subsection() // url.BASE.insteadOf rewrites to BASE
		}
		if !remoteHelperURL(u) {
			return f, false
		}
		f.Value = u
	case kHelpFormat:
		if v := strings.ToLower(e.Value); v != "web" && v != "html" {
			return f, false
		}
	case kHooksPath:
		return f, false // hooks.go reads it
	}
	return f, true
}

// helperFinding judges a credential helper (gitcredentials(7)): "" resets
// the list, "!cmd" is a shell command, an absolute path runs that
// program, any other name runs git-credential-NAME from git's own
// directory or PATH. store and cache are git's own.
func helperFinding(f Finding, v string) (Finding, bool) {
	switch {
	case v == "":
		return f, false
	case strings.HasPrefix(v, "!"):
		f.Command = v[1:]
	case strings.HasPrefix(v, "/"):
		f.Command = v
	default:
		name, _, _ := strings.Cut(v, " ")
		if name == "store" || name == "cache" {
			return f, false
		}
	}
	return f, true
}

// remoteHelperURL reports whether git hands URL u to a program of its
// own name (transport.c's transport_get): TRANSPORT::ADDRESS runs
// git-remote-TRANSPORT (and ext:: runs ADDRESS), and SCHEME://… with a
// scheme git does not implement runs git-remote-SCHEME.
func remoteHelperURL(u string) bool {
	i := 0
	for i < len(u) && (isAlpha(u[i]) || i > 0 && (u[i] >= '0' && u[i] <= '9' || u[i] == '+' || u[i] == '-' || u[i] == '.')) {
		i++
	}
	if i == 0 {
		return false
	}
	if strings.HasPrefix(u[i:], "::") {
		return true
	}
	if strings.HasPrefix(u[i:], "://") {
		switch strings.ToLower(u[:i]) {
		case "http", "https", "ftp", "ftps", "ssh", "git", "file", "git+ssh", "ssh+git":
			return false
		}
		return true
	}
	return false
}

// envFinding judges an environment variable that names a program.
func (c *Config) envFinding(v envSpec) (Finding, bool) {
	val := c.env(v.name)
	if val == "" {
		return Finding{}, false
	}
	f := Finding{Name: v.name, Value: val, Where: "the environment", Runs: v.runs}
	switch v.kind {
	case kCommand:
		f.Command = val
	case kProgram:
		f.Command = shellQuote(val)
	case kProtocol:
		for _, p := range strings.Split(val, ":") {
			if p == "ext" {
				return f, true
			}
		}
		return f, false
	}
	return f, true
}

// shellQuote quotes s as one shell word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// SetsProgram reports whether setting the variable name to value would
// make some git command run a program (any key of the table whose value
// names one), or change where git finds configuration, hooks, attributes
// or its working tree (include.path, core.hooksPath, core.worktree …),
// so that setting it is never a harmless write. A name git would refuse
// is reported too: it cannot be proven harmless.
func SetsProgram(name, value string, noValue bool) bool {
	n, err := canonicalName(name)
	if err != nil {
		return true
	}
	e := Entry{Name: n, Value: value, NoValue: noValue}
	switch {
	case isInclude(e):
		return true
	case e.Name == "core.worktree", e.Name == "core.attributesfile", e.Name == "core.bare",
		e.Name == "extensions.worktreeconfig", e.Name == "log.showsignature", e.Name == "safe.directory",
		e.Name == "attr.tree", e.Section() == "includeif", e.Section() == "pretty" && strings.Contains(value, "%G"):
		return true
	}
	k := lookupKey(e)
	if k == nil {
		return false
	}
	switch k.kind {
	case kHooksPath, kAlways, kCommand, kProgram, kHelper, kDriver:
		return true
	case kAlias:
		// "!cmd" runs a command; otherwise the alias is a git command
		// line, which runs a program only through git's own options.
		if noValue || strings.HasPrefix(value, "!") {
			return true
		}
		for _, f := range strings.Fields(value) {
			if f == "-c" || f == "-C" || strings.HasPrefix(f, "--config-env") || strings.HasPrefix(f, "--exec-path") ||
				strings.HasPrefix(f, "--git-dir") || strings.HasPrefix(f, "--work-tree") || strings.HasPrefix(f, "-c") && strings.Contains(f, "=") {
				return true
			}
		}
		return false
	case kMaybeBool:
		_, isBool := maybeBool(value)
		return !noValue && !isBool
	}
	f, ok := (&Config{env: func(string) string { return "" }}).entryFinding(e, k, Invocation{Sub: e.Key()}, nil)
	return ok && f.Name != ""
}
