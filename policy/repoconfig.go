package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/execgate/execgate/internal/gitconfig"
	"github.com/execgate/execgate/policy/pathres"
)

// maxConfigDepth bounds how often a configured command that is itself a
// git command (core.pager = git …) is followed.
const maxConfigDepth = 2

// gitCall is a git command line taken apart as git.c's handle_options
// does: the global options that say where git runs and what it reads,
// then the subcommand and its words.
type gitCall struct {
	dir      string // the directory git starts in ("" unknown)
	params   []gitconfig.Param
	gitDir   string // --git-dir, --bare
	workTree string // --work-tree
	inv      gitconfig.Invocation
	problem  string // why what git reads cannot be known
}

// repoConfig judges what git's own configuration makes a git command
// run besides git (internal/gitconfig): core.fsmonitor, pagers, drivers
// routed by attributes, aliases, hooks, credential helpers …, read from
// the real disk where git will look, now. Only a command that is
// otherwise safe or coverable is looked at: a firm reason already makes
// it ask. Each program found is a firm reason naming the variable and
// the file, unless it is a command the analysis proves safe (a pager
// `less -R`, `cat`); what cannot be read is a firm reason too.
func (a *analyzer) repoConfig(seg *Segment, name string, words []word) {
	if name != "git" || !systemProgram(words[0].text) {
		return
	}
	c := a.gitCall(words)
	if c.problem == "" && c.inv.Sub == "config" {
		// What git config writes is judged whatever else the segment
		// does: its own reason names the variable.
		a.gitConfigWrite(seg, c.inv.Args)
	}
	if seg.firm() {
		return
	}
	// A form the read-only model proved (git branch, not git branch x)
	// runs none of the hooks its other forms do.
	c.inv.ReadOnly = seg.Risk == Safe
	label := "git"
	if c.inv.Sub != "" {
		label += " " + c.inv.Sub
	}
	if c.problem != "" {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s: cannot prove what the repository's configuration makes git run (%s)", label, c.problem), Rule: "repo-config-unproven", Effect: EffectUnseen})
		return
	}
	env := a.getenv
	if env == nil {
		env = func(string) string { return "" }
	}
	getenv := func(k string) string {
		switch {
		case k == "GIT_DIR" && c.gitDir != "":
			return c.gitDir
		case k == "GIT_WORK_TREE" && c.workTree != "":
			return c.workTree
		}
		return env(k)
	}
	cfg, err := a.gitConfigs.Load(gitconfig.Options{Dir: c.dir, Getenv: getenv, Home: a.home, Params: c.params})
	var found []gitconfig.Finding
	if err == nil {
		found, err = cfg.Programs(c.inv)
	}
	if err != nil {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s: cannot prove what the repository's configuration makes git run: %s", label, oneLine(err.Error())), Rule: "repo-config-unproven", Effect: EffectUnseen})
		return
	}
	if cfg.Signs(c.inv) {
		// The key and the agent holding it are the user's credentials:
		// confined, the signature could only fail.
		seg.add(Reason{Risk: NeedsReview, Text: label + " signs with your key (commit.gpgSign, tag.gpgSign, -S or -s), which it needs from outside the sandbox", Rule: "git-signs", Effect: EffectCredentials})
	}
	for _, f := range found {
		risk, why := NeedsReview, ""
		if f.Command != "" {
			r, reasons := a.judgeConfigured(f.Command, cfg.Repo.WorkTree)
			if r == Safe {
				continue
			}
			risk = r.Max(NeedsReview)
			if len(reasons) > 0 {
				why = ": " + reasons[0]
			}
		}
		seg.add(Reason{Risk: risk, Text: fmt.Sprintf("%s runs %s%s", label, f, why), Rule: "repo-config-program", Effect: EffectCode})
	}
}

// gitCall takes a git command line apart. The directory is the analysis's
// current one, moved by each -C.
func (a *analyzer) gitCall(words []word) gitCall {
	c := gitCall{dir: a.cwd}
	if c.dir == "" {
		c.problem = "it runs in a directory execgate cannot follow"
		return c
	}
	for _, w := range words[1:] {
		if !w.known {
			c.problem = "its arguments are only known at run time"
			return c
		}
	}
	if why := a.gitEnvChanged(); why != "" {
		c.problem = why
		return c
	}
	args := words[1:]
	value := func(i *int, opt string) (string, bool) {
		t := args[*i].text
		if v, ok := strings.CutPrefix(t, opt+"="); ok && strings.HasPrefix(opt, "--") {
			return v, true
		}
		if *i+1 >= len(args) {
			return "", false
		}
		*i++
		return args[*i].text, true
	}
	help := false
	i := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if !strings.HasPrefix(t, "-") {
			break
		}
		opt, _, _ := strings.Cut(t, "=")
		switch opt {
		case "-C":
			v, ok := value(&i, "-C")
			if !ok {
				c.problem = "-C has no directory"
				return c
			}
			if v == "" {
				continue // git -C "" stays where it is
			}
			c.dir = pathres.Normalize(v, pathres.Context{Home: a.home, TildeHome: a.tildeHome, Cwd: c.dir})
			if c.dir == "" {
				c.problem = fmt.Sprintf("-C %s names a directory execgate cannot follow", v)
				return c
			}
		case "-c":
			v, ok := value(&i, "-c")
			if !ok {
				c.problem = "-c has no setting"
				return c
			}
			n, val, hasValue := strings.Cut(v, "=")
			c.params = append(c.params, gitconfig.Param{Name: n, Value: val, NoValue: !hasValue})
		case "--config-env":
			v, ok := value(&i, "--config-env")
			n, envName, found := strings.Cut(v, "=")
			if !ok || !found || a.assignedVar(envName) {
				c.problem = fmt.Sprintf("--config-env %s takes a value execgate cannot read", v)
				return c
			}
			val := ""
			if a.getenv != nil {
				val = a.getenv(envName)
			}
			c.params = append(c.params, gitconfig.Param{Name: n, Value: val})
		case "--git-dir", "--work-tree":
			v, ok := value(&i, opt)
			p := pathres.Normalize(v, pathres.Context{Home: a.home, TildeHome: a.tildeHome, Cwd: c.dir})
			if !ok || p == "" {
				c.problem = fmt.Sprintf("%s %s names a directory execgate cannot follow", opt, v)
				return c
			}
			if opt == "--git-dir" {
				c.gitDir = p
			} else {
				c.workTree = p
			}
		case "--bare":
			c.gitDir = c.dir
		case "--namespace", "--super-prefix", "--list-cmds":
			if !strings.Contains(t, "=") {
				i++
			}
		case "--exec-path":
			if strings.Contains(t, "=") {
				c.problem = "--exec-path makes git run its programs from another directory"
				return c
			}
		case "--attr-source":
			c.problem = "--attr-source makes git read attributes from a tree"
			return c
		case "-h", "--help":
			help = true
		case "-p", "--paginate", "-P", "--no-pager", "--no-replace-objects", "--literal-pathspecs",
			"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
			"--no-lazy-fetch", "--no-advice", "-v", "--version", "--html-path", "--man-path", "--info-path":
		default:
			c.problem = fmt.Sprintf("git's option %s is not modelled", t)
			return c
		}
	}
	if i < len(args) {
		c.inv.Sub = args[i].text
		for _, w := range args[i+1:] {
			c.inv.Args = append(c.inv.Args, w.text)
		}
	}
	if help && c.inv.Sub != "" {
		// git --help CMD is git help CMD.
		c.inv = gitconfig.Invocation{Sub: "help", Args: append([]string{c.inv.Sub}, c.inv.Args...)}
	}
	return c
}

// gitEnvChanged says why git's environment is not the one the command
// started with: the program set or unset a variable that says where git
// looks (GIT_DIR, HOME, GIT_CONFIG_GLOBAL …) before running git. Those
// assignments are reasons of their own; this only says the configuration
// cannot be read in their place.
func (a *analyzer) gitEnvChanged() string {
	if a.vars.poisonAll {
		return "the program sets variables only named at run time"
	}
	if a.tildeHome != nil {
		return "the program changes HOME"
	}
	for n := range a.vars.assigned {
		if gitconfig.LocationVar(n) {
			return "the program sets " + n
		}
	}
	return ""
}

// assignedVar reports whether the program may have given name a value.
func (a *analyzer) assignedVar(name string) bool {
	return a.vars.poisonAll || a.vars.assigned[name]
}

// judgeConfigured classifies a command line a configuration gives git to
// run (a pager, an alias, a driver), in a fresh analysis started where
// git runs it: the top of the working tree ("" when there is none, so
// that relative paths are unknown). A pager that is a plain pager with
// display options only is inert (see inertPager).
func (a *analyzer) judgeConfigured(cmd, dir string) (Risk, []string) {
	if inertPager(cmd) {
		return Safe, nil
	}
	if a.configDepth >= maxConfigDepth {
		return NeedsReview, []string{"a configured command runs git, whose configuration runs another (depth limit)"}
	}
	inner := &analyzer{r: a.r, home: a.home, workspace: a.workspace, cwd: dir, start: dir, protected: a.protected, managedProtected: a.managedProtected, getenv: a.getenv, gitConfigs: a.gitConfigs, configDepth: a.configDepth + 1}
	if err := inner.program(cmd, frame{depth: maxDepth - 1}); err != nil {
		return NeedsReview, []string{"does not parse"}
	}
	risk := Safe
	var reasons []string
	for _, s := range inner.segs {
		if s.Opaque {
			risk = risk.Max(NeedsReview)
		}
		risk = risk.Max(s.Risk)
		for _, r := range s.Reasons {
			if r.Risk == s.Risk && s.Risk == risk {
				reasons = append(reasons, r.Text)
			}
		}
	}
	return risk, reasons
}

// inertPagerLetters returns the option letters with which a pager only
// pages, changing how (less -R, -FRX, --tabs=4; more -d): none of them
// writes a file (less -o), reads a key file (-k) or runs commands (+cmd).
// less is what git runs when no pager is configured; reached through the
// configuration it is the same program. Interactively both can start a
// shell, as the default pager can.
func inertPagerLetters(program string) (string, bool) {
	switch program {
	case "less":
		return "FRrXSKiIMmNnJWwseEQqcCdDgGaBfLuUVz~", true
	case "more":
		return "dlfpcsu", true
	}
	return "", false
}

// inertPager reports whether cmd is a plain pager with display options
// only.
func inertPager(cmd string) bool {
	fields := strings.Fields(cmd)
	if len(fields) == 0 {
		return false
	}
	letters, ok := inertPagerLetters(path.Base(fields[0]))
	if !ok || !systemProgram(fields[0]) {
		return false
	}
	for _, f := range fields[1:] {
		switch {
		case strings.HasPrefix(f, "--"):
			name, v, hasValue := strings.Cut(f, "=")
			if !inertLongOption(name) || hasValue && strings.Trim(v, "0123456789,") != "" {
				return false
			}
		case strings.HasPrefix(f, "-") && len(f) > 1:
			for _, c := range strings.TrimRight(f[1:], "0123456789") {
				if !strings.ContainsRune(letters, c) {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// inertLongOption reports whether a less long option only changes the
// display.
func inertLongOption(name string) bool {
	switch strings.ToLower(name) {
	case "--raw-control-chars", "--quit-if-one-screen", "--no-init", "--chop-long-lines",
		"--ignore-case", "--long-prompt", "--tabs", "--mouse", "--no-vbell", "--squeeze-blank-lines",
		"--quit-at-eof", "--status-column", "--line-numbers", "--jump-target", "--shift", "--quiet",
		"--silent", "--hilite-unread", "--underline-special", "--use-color", "--wordwrap":
		return true
	}
	return false
}

// gitConfigWrite judges `git config` writing configuration (both the old
// forms, git config NAME VALUE, --add, --replace-all, and the new
// subcommands, git config set): setting a variable that makes git run a
// program, or that moves where git reads configuration, hooks or
// attributes, is beyond every wildcard, as is rewriting whole sections
// (--rename-section, which can turn [x] pager = … into [core]) or the
// file in an editor; so is writing the user's or the system's file
// (--global, --system) or a file outside the workspace (--file).
func (a *analyzer) gitConfigWrite(seg *Segment, args []string) {
	var ops []string
	action, scope := "", ""
	for i := 0; i < len(args); i++ {
		t := args[i]
		opt, val, hasVal := strings.Cut(t, "=")
		switch {
		case t == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case t == "--global" || t == "--system":
			scope = t
		case opt == "-f" || opt == "--file" || strings.HasPrefix(t, "-f") && len(t) > 2 && !strings.HasPrefix(t, "--"):
			file := val
			switch {
			case strings.HasPrefix(t, "-f") && t != "-f" && !strings.HasPrefix(t, "--"):
				file = t[2:]
			case !hasVal && i+1 < len(args):
				i++
				file = args[i]
			}
			a.gitConfigFile(seg, file)
		case opt == "--blob" || opt == "--type" || opt == "--default" || opt == "--comment":
			if !hasVal {
				i++
			}
		case strings.HasPrefix(t, "-") && isGitConfigAction(opt):
			action = opt
		case strings.HasPrefix(t, "-"):
		default:
			ops = append(ops, t)
		}
	}
	if action == "" && len(ops) > 0 && !strings.Contains(ops[0], ".") {
		action, ops = ops[0], ops[1:] // git config set NAME VALUE
	}
	writes := false
	switch action {
	case "", "--add", "--replace-all", "set":
		writes = len(ops) >= 2 || action != "" && len(ops) >= 1
	case "-e", "--edit", "edit", "--rename-section", "rename-section":
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("git config %s can set any variable, including those that make git run programs", action), Rule: "repo-config-program", Effect: EffectCode})
		writes = true
	}
	if !writes {
		return
	}
	if len(ops) >= 1 && (action == "" || action == "--add" || action == "--replace-all" || action == "set") {
		value, noValue := "", len(ops) < 2
		if !noValue {
			value = ops[1]
		}
		if gitconfig.SetsProgram(ops[0], value, noValue) {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("sets the git variable %s, which makes later git commands run a program or read configuration, hooks or attributes from elsewhere", ops[0]), Rule: "repo-config-program", Effect: EffectCode})
		}
	}
	switch scope {
	case "--global":
		seg.add(Reason{Risk: NeedsReview, Text: "git config --global writes the user's git configuration, outside the workspace, which every repository reads", Rule: "outside-workspace-write"})
	case "--system":
		seg.add(Reason{Risk: NeedsReview, Text: "git config --system writes the system's git configuration, outside the workspace", Rule: "outside-workspace-write"})
	}
}

// isGitConfigAction reports whether opt is one of git config's actions
// (the old, option form).
func isGitConfigAction(opt string) bool {
	switch opt {
	case "--add", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit", "--unset", "--unset-all",
		"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list":
		return true
	}
	return false
}

// gitConfigFile judges the file git config --file writes: outside the
// workspace it is a firm write; inside, the repository's own
// configuration is judged by the key set, like git config's default;
// any other file is an ordinary write.
func (a *analyzer) gitConfigFile(seg *Segment, file string) {
	abs := a.resolve(file)
	switch {
	case abs == "":
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("git config --file writes %s, relative to a directory execgate cannot follow (unknown)", file), Rule: "unknown-directory-write"})
	case !a.insideWorkspace(abs) && !a.pathIn("temporary", abs):
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("git config --file writes the configuration file %s, outside the workspace", file), Rule: "outside-workspace-write"})
	case path.Base(path.Dir(abs)) == ".git" || strings.Contains(abs, "/.git/"):
		// The repository's own configuration: the key decides.
	default:
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("git config --file writes %s", file), Rule: "writes-file", Coverable: true})
	}
}
