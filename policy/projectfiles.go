package policy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/execgate/execgate/internal/state"
)

// Files a project ships can make a program run code on a command that
// looks read-only, or a patch can write them. This file judges the
// programs besides git where that was found true by running them:
// pytest, man, npm help, cargo (and the rustup proxies), go list, and
// the patch appliers. Each finding is a firm reason (no wildcard covers
// code the words do not show).

// maxProjectFile bounds a project file read to judge a command.
const maxProjectFile = 1 << 20

// projectFiles dispatches to the checks of the programs whose project
// files run code or which write them.
func (a *analyzer) projectFiles(seg *Segment, name string, words []word) {
	switch name {
	case "git":
		a.repoConfig(seg, name, words)
		if sub, args := gitSubcommand(words); sub == "apply" || sub == "am" {
			a.patchTargets(seg, "git "+sub, args, sub == "am")
		}
	case "patch":
		a.patchTargets(seg, "patch", words[1:], false)
	case "man":
		a.manLocalFiles(seg, words[1:])
	case "npm":
		a.npmHelpViewer(seg, words[1:])
	case "cargo", "rustc", "rustdoc", "rustfmt", "cargo-clippy", "clippy-driver", "cargo-fmt", "rust-analyzer":
		a.rustToolchain(seg, name, words[1:])
	case "go":
		a.goFlagsFile(seg, words[1:])
	default:
		if spec := a.r.Interpreters.get(name); spec != nil && spec.Language == "python" {
			if i := moduleIndex(words, "pytest"); i > 0 {
				// python -m pytest takes pytest's options: its rules.
				a.applyRules(seg, "pytest", append([]word{{text: "pytest", known: true}}, words[i+1:]...))
			}
		}
	}
}

// gitSubcommand returns git's subcommand and the words after it, skipping
// the global options.
func gitSubcommand(words []word) (string, []word) {
	args := words[1:]
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if !args[i].known {
			return "", nil
		}
		if !strings.HasPrefix(t, "-") {
			return t, args[i+1:]
		}
		switch t {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source":
			i++
		}
	}
	return "", nil
}

// moduleIndex is the index of "-m MODULE" 's module in words, or -1.
func moduleIndex(words []word, module string) int {
	for i := 1; i+1 < len(words); i++ {
		if words[i].text == "-m" && words[i+1].text == module {
			return i + 1
		}
	}
	return -1
}

// versionLoadsProject reports whether PROGRAM --version (or --help) runs
// the project's code before it prints: pytest imports conftest.py files
// and the plugins its configuration names to do so (pytest's
// "Initialization: determining rootdir, configfile", plugins load before
// --version is answered). Executed: a conftest.py that writes a file ran
// on `pytest --version`.
func versionLoadsProject(name string) bool {
	return name == "pytest" || name == "py.test" || name == "pytest-3"
}

// manLocalFiles: man -l FILE (and an operand with a slash, which man-db
// takes as a file) formats a file of the caller's choosing, whose .so
// requests make groff include any other file: a page in the workspace
// can print ~/.ssh/id_rsa (executed). What the page includes cannot be
// proven from its text (macros can build the request), so it asks.
//
// A manual path (-M DIR, -MDIR, --manpath DIR, --manpath=DIR) is the same:
// man looks its pages up there, so a page in the workspace is formatted
// whatever the operand (executed: man --manpath=./m x printed the key a
// page's .so named). Its directories are judged as local files.
func (a *analyzer) manLocalFiles(seg *Segment, args []word) {
	if a.manSearchesWorkspace(seg) {
		return
	}
	local, manpath := false, false
	for _, w := range args {
		t := w.text
		if manpath {
			// The value of -M or --manpath, a colon-separated list.
			manpath = false
			if a.manPathLocal(seg, w, t) {
				return
			}
			continue
		}
		if v, ok := strings.CutPrefix(t, "--manpath="); ok {
			if a.manPathLocal(seg, w, v) {
				return
			}
			continue
		}
		if t == "--manpath" {
			manpath = true
			continue
		}
		if v, ok := manShortManpath(t); ok {
			if v == "" {
				manpath = true
			} else if a.manPathLocal(seg, w, v) {
				return
			}
			continue
		}
		if v, ok := strings.CutPrefix(t, "--local-file="); ok {
			local, t = true, v
		} else if t == "-l" || t == "--local-file" {
			local = true
			continue
		}
		if t == "--" || t != "-" && strings.HasPrefix(t, "-") || !local && !strings.Contains(t, "/") {
			continue
		}
		if abs := a.resolve(t); w.literal() && abs != "" && systemManPage(abs) {
			continue
		}
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("man formats a local file (%s), whose .so requests can include any other file, credentials too", t), Rule: "repo-config-program", Effect: EffectCredentials})
		return
	}
}

// manSearchesWorkspace: without -M, man-db looks pages up in MANPATH, or
// in the manual directories beside each PATH entry (DIR/../man,
// DIR/../share/man, DIR/man), those first whose entry comes first. An
// activated virtual environment (.venv/bin on PATH) thus puts
// .venv/share/man before the system's pages, and a page a confined
// command wrote there is what `man ls` formats (executed: its .so printed
// the key). An entry of either variable in the workspace, or whose
// parent is, makes every man command a local page. It says whether it
// added the reason.
func (a *analyzer) manSearchesWorkspace(seg *Segment) bool {
	for _, v := range []string{"MANPATH", "PATH"} {
		for _, dir := range strings.Split(a.env(v), ":") {
			if dir == "" {
				continue
			}
			if !a.insideWorkspace(dir) && !a.insideWorkspace(filepath.Dir(dir)) {
				continue
			}
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("man looks pages up beside %s (%s), in the workspace, whose .so requests can include any other file, credentials too", v, dir), Rule: "repo-config-program", Effect: EffectCredentials})
			return true
		}
	}
	return false
}

// manShortManpath finds -M in a cluster of man's short options (-M DIR,
// -MDIR, -aM DIR) and returns what follows it in the word: the
// directory, or "" when it is the next word. A cluster in which a letter
// before M takes a value of its own (-rM…) is read as -M too: more is
// judged, never less.
func manShortManpath(t string) (string, bool) {
	if !strings.HasPrefix(t, "-") || strings.HasPrefix(t, "--") {
		return "", false
	}
	_, v, ok := strings.Cut(t[1:], "M")
	return v, ok
}

// manPathLocal judges one manual path given to man: every directory of it
// that is not the system's (or a word only known at run time) is a local
// page as -l's file is. It says whether it added the reason.
func (a *analyzer) manPathLocal(seg *Segment, w word, v string) bool {
	for _, dir := range strings.Split(v, ":") {
		if dir == "" {
			continue
		}
		if abs := a.resolve(dir); w.literal() && abs != "" && systemManPage(abs+"/") {
			continue
		}
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("man formats the pages of a manual path of its own (%s), whose .so requests can include any other file, credentials too", dir), Rule: "repo-config-program", Effect: EffectCredentials})
		return true
	}
	return false
}

// systemManPage reports whether p lies where the system's packages keep
// their files (/usr, Homebrew's prefix): root's files, trusted as the
// system's own pages are.
func systemManPage(p string) bool {
	return strings.HasPrefix(p, "/usr/") || strings.HasPrefix(p, "/opt/homebrew/")
}

// npmHelpViewer: npm help shows its manual with the program the viewer
// setting names: man by default; browser opens the browser setting's
// program, woman runs emacsclient (npm's lib/commands/help.js). The
// setting comes from the project's .npmrc, the user's, the environment
// (npm_config_viewer) or the command line.
func (a *analyzer) npmHelpViewer(seg *Segment, args []word) {
	sub := ""
	var opts []string
	for _, w := range args {
		if strings.HasPrefix(w.text, "-") {
			opts = append(opts, w.text)
		} else if sub == "" {
			sub = w.text
		}
	}
	if sub != "help" && !contains(opts, "--help") && !contains(opts, "-h") {
		return
	}
	viewer := func(where, v string) {
		if v = strings.TrimSpace(strings.Trim(strings.TrimSpace(v), `"'`)); v != "" && v != "man" {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("npm help shows the manual with viewer = %s (%s), which runs a program other than man", v, where), Rule: "repo-config-program", Effect: EffectCode})
		}
	}
	for _, o := range opts {
		if v, ok := strings.CutPrefix(o, "--viewer="); ok {
			viewer("the command line", v)
		}
	}
	for _, k := range []string{"npm_config_viewer", "NPM_CONFIG_VIEWER"} {
		if v := a.env(k); v != "" {
			viewer("the environment", v)
		}
	}
	files := []string{}
	if u := cmpOrString(a.env("npm_config_userconfig"), a.env("NPM_CONFIG_USERCONFIG")); u != "" {
		files = append(files, u)
	} else if a.home != "" {
		files = append(files, filepath.Join(a.home, ".npmrc"))
	}
	for d := a.cwd; d != ""; d = parentDir(d) {
		files = append(files, filepath.Join(d, ".npmrc"))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for n, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "viewer") {
				viewer(fmt.Sprintf("%s:%d", f, n+1), v)
			}
		}
	}
}

// rustToolchain: cargo and rustc are rustup's proxies, which run the
// toolchain a rust-toolchain.toml in the directory or any parent names;
// with path = DIR that is any program (executed: `cargo --version` ran
// DIR/bin/cargo). cargo metadata and cargo tree also run the compiler
// wrapper of .cargo/config.toml files up the tree and in CARGO_HOME
// (build.rustc, build.rustc-wrapper, build.rustc-workspace-wrapper;
// executed), and of RUSTC_WRAPPER and the like in the environment.
func (a *analyzer) rustToolchain(seg *Segment, name string, args []word) {
	if a.cwd == "" {
		seg.add(Reason{Risk: NeedsReview, Text: name + ": cannot prove which toolchain runs: the directory is not known", Rule: "repo-config-unproven", Effect: EffectUnseen})
		return
	}
	firm := func(text string) {
		seg.add(Reason{Risk: NeedsReview, Text: text, Rule: "repo-config-program", Effect: EffectCode})
	}
	for _, k := range []string{"RUSTUP_TOOLCHAIN", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTC", "CARGO_BUILD_RUSTC", "CARGO_BUILD_RUSTC_WRAPPER", "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER"} {
		if k != "RUSTUP_TOOLCHAIN" && !cargoReadsWrapper(name, args) {
			continue
		}
		if v := a.env(k); v != "" && (k != "RUSTUP_TOOLCHAIN" || strings.Contains(v, "/")) {
			firm(fmt.Sprintf("%s runs %s = %s from the environment", name, k, v))
		}
	}
	cargoHome := cmpOrString(a.env("CARGO_HOME"), filepath.Join(a.home, ".cargo"))
	for d := a.cwd; d != ""; d = parentDir(d) {
		for _, f := range []string{"rust-toolchain.toml", "rust-toolchain"} {
			p := filepath.Join(d, f)
			if line, ok := fileHasKey(p, "path"); ok {
				firm(fmt.Sprintf("%s runs the toolchain that %s:%d names by path", name, p, line))
			}
		}
		if !cargoReadsWrapper(name, args) {
			continue
		}
		for _, f := range []string{".cargo/config.toml", ".cargo/config"} {
			p := filepath.Join(d, f)
			if line, ok := fileHasKey(p, "rustc", "rustc-wrapper", "rustc-workspace-wrapper", "build.rustc", "build.rustc-wrapper", "build.rustc-workspace-wrapper"); ok {
				firm(fmt.Sprintf("cargo runs the compiler or compiler wrapper that %s:%d sets", p, line))
			}
		}
	}
	if cargoReadsWrapper(name, args) && a.home != "" {
		for _, f := range []string{"config.toml", "config"} {
			p := filepath.Join(cargoHome, f)
			if line, ok := fileHasKey(p, "rustc", "rustc-wrapper", "rustc-workspace-wrapper", "build.rustc", "build.rustc-wrapper", "build.rustc-workspace-wrapper"); ok {
				firm(fmt.Sprintf("cargo runs the compiler or compiler wrapper that %s:%d sets", p, line))
			}
		}
	}
	if name == "cargo" {
		for i, w := range args {
			if w.text == "--config" || strings.HasPrefix(w.text, "--config=") {
				firm(fmt.Sprintf("cargo --config %s sets configuration on the command line, which can name programs cargo runs", argAfter(args, i)))
			}
		}
	}
}

// cargoReadsWrapper reports whether the command is one of cargo's
// read-only subcommands that still run the compiler (through its
// wrapper) to learn the target: cargo metadata, cargo tree. A build runs
// the workspace's code anyway (the workspace-runner class).
func cargoReadsWrapper(name string, args []word) bool {
	if name != "cargo" {
		return false
	}
	for _, w := range args {
		if !strings.HasPrefix(w.text, "-") {
			return w.text == "metadata" || w.text == "tree"
		}
	}
	return false
}

// argAfter is the value of the option at args[i].
func argAfter(args []word, i int) string {
	if _, v, ok := strings.Cut(args[i].text, "="); ok {
		return v
	}
	if i+1 < len(args) {
		return args[i+1].text
	}
	return ""
}

// fileHasKey reports whether a TOML file may set one of keys, and the
// first line that does: any line whose text before an "=" ends in the
// key (quoted, dotted or in an inline table). It reads more than TOML
// would (a key in a comment or a string), which can only ask more. A file
// that exists but cannot be read is reported too.
func fileHasKey(p string, keys ...string) (int, bool) {
	b, err := readProjectFile(p)
	if err != nil {
		return 0, !os.IsNotExist(err) && !errors.Is(err, syscall.ENOTDIR)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		n++
		line = strings.TrimRight(line, "\r\n")
		for {
			before, after, ok := strings.Cut(line, "=")
			if !ok {
				break
			}
			k := strings.TrimSpace(before)
			k = k[strings.LastIndexAny(k, "{,[ \t")+1:]
			k = strings.Trim(k, `"'`)
			for _, want := range keys {
				if k == want || strings.HasSuffix(k, "."+want) || strings.HasSuffix(k, `."`+want) {
					return n, true
				}
			}
			line = after
		}
	}
	return 0, false
}

// goFlagsFile: GOFLAGS, from the environment or the go env file (go env
// -w writes it: $GOENV, else the user configuration directory's go/env),
// applies to every go command: -toolexec, -exec, -export and -compiled
// make go list build the packages and run programs
// (https://pkg.go.dev/cmd/go#hdr-Environment_variables).
func (a *analyzer) goFlagsFile(seg *Segment, args []word) {
	if len(args) == 0 || args[0].text != "list" {
		return
	}
	check := func(where, v string) {
		for _, f := range strings.Fields(v) {
			flag, _, _ := strings.Cut(strings.TrimPrefix(f, "-"), "=")
			switch strings.TrimPrefix(flag, "-") {
			case "toolexec", "exec", "export", "compiled", "overlay":
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("go list runs with GOFLAGS %s (%s), which builds packages or runs a program", f, where), Rule: "repo-config-program", Effect: EffectCode})
			}
		}
	}
	if v := a.env("GOFLAGS"); v != "" {
		check("the environment", v)
	}
	envFile := a.env("GOENV")
	if envFile == "" {
		cfg := a.env("XDG_CONFIG_HOME")
		if cfg == "" && a.home != "" {
			cfg = filepath.Join(a.home, ".config")
		}
		if cfg != "" {
			envFile = filepath.Join(cfg, "go", "env")
		}
	}
	if envFile == "" || envFile == "off" {
		return
	}
	b, err := os.ReadFile(envFile)
	if err != nil {
		return
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if k, v, ok := strings.Cut(string(line), "="); ok && strings.TrimSpace(k) == "GOFLAGS" {
			check(envFile, v)
		}
	}
}

// patchTargets judges what a patch (git apply, git am, patch) creates or
// changes, reading the patch when it is a file in the workspace: a file
// that runs code later (.envrc, a hook, .git/config, a CI workflow …), a
// path outside the workspace (.., absolute), a symbolic link, a name
// that is quoted or otherwise not plain. Every strip level (-p) is
// tried, so the names are judged whatever -p says. A patch read from
// stdin, or one that cannot be read, is not proven.
func (a *analyzer) patchTargets(seg *Segment, label string, args []word, mbox bool) {
	var files []word
	dir := ""
	checkOnly := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		t := w.text
		switch {
		case !w.known:
			seg.add(Reason{Risk: NeedsReview, Text: label + " applies a patch named at run time", Rule: "repo-config-unproven", Effect: EffectUnseen})
			return
		case t == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case label == "patch" && (t == "-i" || t == "--input"):
			if i+1 < len(args) {
				i++
				files = append(files, args[i])
			}
		case label == "patch" && strings.HasPrefix(t, "--input="):
			files = append(files, word{text: strings.TrimPrefix(t, "--input="), known: true})
		case label == "patch" && (t == "--dry-run" || t == "-C" || t == "--check"):
			checkOnly = true
		case label == "patch" && (t == "-d" || t == "--directory" || t == "-o" || t == "--output" || t == "-r" || t == "--reject-file" || t == "-D" || t == "--ifdef" || t == "-B" || t == "--prefix" || t == "-z" || t == "--suffix" || t == "-V" || t == "-F" || t == "--fuzz" || t == "-p" || t == "--strip"):
			if t == "-d" || t == "--directory" {
				dir = argAfter(args, i)
			}
			i++
		case label != "patch" && (t == "--check" || t == "--stat" || t == "--numstat" || t == "--summary"):
			checkOnly = true
		case label != "patch" && strings.HasPrefix(t, "--directory="):
			dir = strings.TrimPrefix(t, "--directory=")
		case label != "patch" && (t == "--directory" || t == "--exclude" || t == "--include" || t == "-C" || t == "--whitespace" || t == "--build-fake-ancestor" || t == "-p"):
			if t == "--directory" {
				dir = argAfter(args, i)
			}
			i++
		case strings.HasPrefix(t, "-"):
		default:
			if label == "patch" {
				// patch [ORIGINAL [PATCHFILE]]: the second operand is the patch.
				continue
			}
			files = append(files, w)
		}
	}
	if label == "patch" {
		var ops []word
		for i := 0; i < len(args); i++ {
			if !strings.HasPrefix(args[i].text, "-") {
				ops = append(ops, args[i])
			}
		}
		if len(ops) >= 2 {
			files = append(files, ops[1])
		}
	}
	if checkOnly && !contains(wordTexts(args), "--apply") {
		return
	}
	if len(files) == 0 {
		seg.add(Reason{Risk: NeedsReview, Text: label + " applies a patch from its input, whose files are not known", Rule: "repo-config-unproven", Effect: EffectUnseen})
		return
	}
	for _, f := range files {
		abs := a.resolve(f.text)
		if abs == "" || !f.literal() || !a.insideWorkspace(abs) || f.text == "-" {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s applies the patch %s, which execgate cannot read in the workspace", label, f.text), Rule: "repo-config-unproven", Effect: EffectUnseen})
			continue
		}
		b, err := readProjectFile(abs)
		if os.IsNotExist(err) && !a.written[abs] && !a.downloaded[abs] {
			continue // the applier fails: nothing to write (a patch this command makes first is unknown)
		}
		if err != nil {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s applies the patch %s, which cannot be read: %v", label, f.text, err), Rule: "repo-config-unproven", Effect: EffectUnseen})
			continue
		}
		for _, why := range a.patchProblems(b, dir) {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s applies %s, which %s", label, f.text, why), Rule: "code-loading-write", Effect: EffectWrite})
		}
	}
}

func wordTexts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

// readProjectFile reads a regular file of at most maxProjectFile bytes,
// without waiting on what is not one: a FIFO put in a project file's place
// fails at once (state.ReadFile) instead of holding every later command.
func readProjectFile(p string) ([]byte, error) {
	return state.ReadFile(p, maxProjectFile)
}

// patchProblems lists what a patch text does that a wildcard may not
// cover: the names its headers give (diff --git, ---/+++, ***, Index:,
// rename/copy to) that are code-loading files or leave the workspace at
// some strip level, symbolic links it creates, names it quotes.
func (a *analyzer) patchProblems(b []byte, dir string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		var names []string
		switch {
		case strings.HasPrefix(line, "diff --git "):
			names = strings.Fields(strings.TrimPrefix(line, "diff --git "))
		case strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "*** "):
			n, _, _ := strings.Cut(line[4:], "\t")
			names = []string{strings.TrimSpace(n)}
		case strings.HasPrefix(line, "Index: "), strings.HasPrefix(line, "rename to "), strings.HasPrefix(line, "copy to "),
			strings.HasPrefix(line, "rename from "), strings.HasPrefix(line, "copy from "):
			names = []string{strings.TrimSpace(line[strings.IndexByte(line, ' ')+1:])}
			if strings.HasPrefix(line, "rename to ") || strings.HasPrefix(line, "copy to ") {
				names = []string{strings.TrimSpace(line[strings.Index(line, " to ")+4:])}
			}
		case strings.HasPrefix(line, "new file mode 120000"), strings.HasPrefix(line, "new mode 120000"), strings.HasPrefix(line, "old mode 120000"):
			add("creates or changes a symbolic link, which can point anywhere")
			continue
		}
		for _, n := range names {
			if n == "/dev/null" || n == "" {
				continue
			}
			if strings.HasPrefix(n, `"`) || strings.ContainsAny(n, "\\\x00") {
				add(fmt.Sprintf("names the file %s in a form execgate does not read", n))
				continue
			}
			if why := a.patchName(dir, n); why != "" {
				add(why)
			}
		}
	}
	return out
}

// patchName judges one name of a patch at every strip level.
func (a *analyzer) patchName(dir, n string) string {
	if path.IsAbs(n) || strings.HasPrefix(n, "~") {
		return fmt.Sprintf("writes %s, outside the workspace", n)
	}
	parts := strings.Split(n, "/")
	for i := range parts {
		rel := strings.Join(parts[i:], "/")
		if rel == "" {
			continue
		}
		if dir != "" {
			rel = dir + "/" + rel
		}
		abs := a.resolve(rel)
		switch {
		case abs == "" || !a.insideWorkspace(abs):
			return fmt.Sprintf("writes %s, outside the workspace", n)
		case a.pathIn("code-loading", a.normPath(rel)) || a.pathIn("code-loading", abs) || a.pathIn("persistence", abs):
			return fmt.Sprintf("creates or changes %s, a file that runs code later (code-loading)", rel)
		}
	}
	return ""
}

// parentDir is d's parent, or "" at the root.
func parentDir(d string) string {
	p := filepath.Dir(d)
	if p == d {
		return ""
	}
	return p
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// wrapperChdir reports whether opt makes the wrapper run its command in
// another directory: env -C/--chdir (GNU coreutils), sudo -D/--chdir.
// The analysis judges the command's paths, repository and project files
// there, not where the program stands.
func wrapperChdir(wrapper, opt string) bool {
	switch wrapper {
	case "env":
		return opt == "-C" || opt == "--chdir" || strings.HasPrefix(opt, "--chdir=") || strings.HasPrefix(opt, "-C") && len(opt) > 2
	case "sudo":
		return opt == "-D" || opt == "--chdir" || strings.HasPrefix(opt, "--chdir=") || strings.HasPrefix(opt, "-D") && len(opt) > 2
	}
	return false
}

// chdirSpec is the option spec optionArgument reads a directory change's
// value with.
func chdirSpec(opt string) string {
	if strings.HasPrefix(opt, "--chdir") {
		return "--chdir"
	}
	return opt[:2]
}
