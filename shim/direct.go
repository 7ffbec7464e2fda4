package shim

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A lone simple command given to `bash -c` is not forked: bash execs it in
// its own place. The shim can do the same and skip bash's start-up, which
// is most of what it adds to a command's run time, but only where it can
// be sure of doing exactly what bash would: the same program, the same
// argv, and the environment bash would have built. Whenever it is not sure,
// it lets bash do it.

// directRun is how bash would run a lone simple command.
type directRun struct {
	// builtin is set for true, false and ':', which bash runs itself and
	// which do nothing but exit: status is their exit status.
	builtin bool
	status  int
	// path, argv and env are what bash would pass to execve (path made
	// absolute; "_" in env keeps the name as bash found it).
	path string
	argv []string
	env  []string
}

// The name tables below are switches, not maps: a package-level map is
// built at start-up, and the shim is a new process for every command.

// bashBuiltin reports whether bash resolves name before searching PATH:
// its builtins, reserved words and the special forms. A command named like
// one of these is never run directly (other than the do-nothing ones).
func bashBuiltin(name string) bool {
	switch name {
	case ".", ":", "[", "[[", "]]", "{", "}", "!",
		"alias", "bg", "bind", "break", "builtin", "caller",
		"case", "cd", "command", "compgen", "complete",
		"compopt", "continue", "coproc", "declare", "dirs",
		"disown", "do", "done", "echo", "elif", "else",
		"enable", "esac", "eval", "exec", "exit", "export",
		"false", "fc", "fg", "fi", "for", "function",
		"getopts", "hash", "help", "history", "if", "in",
		"jobs", "kill", "let", "local", "logout", "mapfile",
		"popd", "printf", "pushd", "pwd", "read",
		"readarray", "readonly", "return", "select", "set",
		"shift", "shopt", "source", "suspend", "test",
		"then", "time", "times", "trap", "true", "type",
		"typeset", "ulimit", "umask", "unalias", "unset",
		"until", "wait", "while":
		return true
	}
	return false
}

// doNothing returns the exit status of the builtins whose whole effect is
// their exit status, whatever their arguments; ok is false for any other
// name.
func doNothing(name string) (status int, ok bool) {
	switch name {
	case "true", ":":
		return 0, true
	case "false":
		return 1, true
	}
	return 0, false
}

// bashSpecial reports whether name is an environment variable bash sets,
// resets, validates or reads at start-up in a way that changes what its
// child sees or what it prints; when one is present bash runs the command.
func bashSpecial(name string) bool {
	switch name {
	case "IFS", "PS1", "PS2", "PS4", "SHELLOPTS", "BASHOPTS",
		"PPID", "RANDOM", "SRANDOM", "LINENO", "OPTIND", "OPTERR",
		"EPOCHSECONDS", "EPOCHREALTIME", "HISTCMD", "COMP_WORDBREAKS",
		"DIRSTACK", "GROUPS", "FUNCNAME", "PIPESTATUS", "SECONDS",
		"UID", "EUID", "POSIXLY_CORRECT", "ENV",
		"BASH":
		return true
	}
	return false
}

// maxDirectEnv bounds the environment the shim orders as bash would: bash's
// variable table grows, and reorders, beyond 2048 entries.
const maxDirectEnv = 1000

// maxInvalidEnv bounds the entries that are not variables, which bash keeps
// in a table of 64 buckets that grows beyond 128 entries.
const maxInvalidEnv = 100

// planDirect decides whether the lone literal command argv can run without
// bash, and how. environ is the shim's environment; cwd its directory.
// argv are the words as written in the program: a word bash would expand
// or change in any way leaves the command to bash.
func planDirect(cl CommandLine, argv, environ []string, cwd string) (directRun, bool) {
	if !cl.Plain || cl.Source != FromString || len(argv) == 0 || argv[0] == "" {
		return directRun{}, false
	}
	if !plainWords(argv) {
		return directRun{}, false // bash expands it: globs, tildes, quotes…
	}
	name := argv[0]
	if _, nothing := doNothing(name); bashBuiltin(name) && !nothing {
		return directRun{}, false
	}
	// Bash's start-up can print (a locale it cannot set, an invalid
	// option in SHELLOPTS): the environment must be one it takes quietly.
	env, ok := importEnv(environ)
	if !ok {
		return directRun{}, false
	}
	if status, ok := doNothing(name); ok {
		return directRun{builtin: true, status: status}, true
	}
	if _, fn := env.get("BASH_FUNC_" + name + "%%"); fn {
		return directRun{}, false // an exported function of that name runs instead
	}
	found, ok := lookCommand(name, env)
	if !ok {
		return directRun{}, false // bash says what is wrong
	}
	if !env.startup(cwd) {
		return directRun{}, false
	}
	path := found
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	return directRun{path: path, argv: argv, env: env.export(found)}, true
}

// bashEnv is the environment as bash's variable table holds it: names in
// the order they were created.
type bashEnv struct {
	names  []string
	values map[string]string
	// invalid are the entries whose names are not shell identifiers: bash
	// passes them on first, in the order it received them.
	invalid []string
}

// importEnv reads environ as bash imports it, refusing what the shim
// cannot reproduce: entries without '=', duplicates, exported functions,
// the variables bash treats specially.
func importEnv(environ []string) (*bashEnv, bool) {
	if len(environ) > maxDirectEnv {
		return nil, false
	}
	e := &bashEnv{names: make([]string, 0, len(environ)+2), values: make(map[string]string, len(environ)+2)}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || bashSpecial(k) || strings.HasPrefix(k, "BASH_") {
			return nil, false
		}
		if _, dup := e.values[k]; dup {
			return nil, false
		}
		if k == "LC_ALL" && !knownLocale(v) {
			return nil, false // bash warns that it cannot set it
		}
		if !identifier(k) {
			if len(e.invalid) == maxInvalidEnv {
				return nil, false
			}
			e.invalid = append(e.invalid, kv)
			continue
		}
		e.names = append(e.names, k)
		e.values[k] = v
	}
	return e, true
}

func (e *bashEnv) get(k string) (string, bool) {
	v, ok := e.values[k]
	return v, ok
}

func (e *bashEnv) set(k, v string) {
	if _, ok := e.values[k]; !ok {
		e.names = append(e.names, k)
	}
	e.values[k] = v
}

func (e *bashEnv) unset(k string) {
	if _, ok := e.values[k]; ok {
		delete(e.values, k)
		e.names = slices.DeleteFunc(e.names, func(n string) bool { return n == k })
	}
}

// startup applies what bash's start-up does to exported variables, in
// bash's order: PWD, OLDPWD, then SHLVL (raised at start-up and lowered
// again for the exec, so unchanged when valid).
func (e *bashEnv) startup(cwd string) bool {
	pwd, ok := e.get("PWD")
	switch {
	case ok && sameDir(pwd, cwd):
		if !canonical(pwd) {
			return false // bash (in POSIX mode) would rewrite it
		}
	default:
		phys, err := unix.Getwd()
		if err != nil {
			return false
		}
		e.set("PWD", phys)
	}
	if old, ok := e.get("OLDPWD"); ok {
		if fi, err := os.Stat(old); old == "" || err != nil || !fi.IsDir() {
			e.unset("OLDPWD")
		}
	}
	lvl, ok := e.get("SHLVL")
	if !ok {
		e.set("SHLVL", "0")
		return true
	}
	n, err := strconv.Atoi(lvl)
	if err != nil || n < 0 || n > 998 || strconv.Itoa(n) != lvl {
		return false // bash's rewrite of odd values is not worth copying
	}
	return true
}

// export lists the environment in the order bash passes it: first what it
// could not import, then its variable hash table (1024 buckets, FNV-1 of
// the name) bucket by bucket, each bucket newest first, and "_" — the
// command's path — in its bucket if it was imported, else last.
func (e *bashEnv) export(underscore string) []string {
	ents := hashOrder(e.names, 1024)
	out := make([]string, 0, len(e.invalid)+len(ents)+1)
	out = append(out, hashOrder(e.invalid, 64)...)
	for _, name := range ents {
		v := e.values[name]
		if name == "_" {
			v = underscore
		}
		out = append(out, name+"="+v)
	}
	if _, imported := e.values["_"]; !imported {
		out = append(out, "_="+underscore)
	}
	return out
}

// hashOrder lists keys (names, or NAME=value entries hashed by NAME) as
// bash's hash table of that many buckets holds them when they were inserted
// in the order given: by bucket, each bucket newest first.
func hashOrder(keys []string, buckets uint32) []string {
	type ent struct {
		bucket uint32
		order  int
		key    string
	}
	ents := make([]ent, len(keys))
	for i, k := range keys {
		name, _, _ := strings.Cut(k, "=")
		ents[i] = ent{fnv1(name) & (buckets - 1), -i, k}
	}
	slices.SortFunc(ents, func(a, b ent) int {
		if a.bucket != b.bucket {
			return int(a.bucket) - int(b.bucket)
		}
		return a.order - b.order
	})
	out := make([]string, len(ents))
	for i, x := range ents {
		out[i] = x.key
	}
	return out
}

// identifier reports whether name is a shell variable name.
func identifier(name string) bool {
	for i, c := range []byte(name) {
		letter := c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return name != ""
}

// fnv1 is bash's hash_string: 32-bit FNV-1.
func fnv1(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h *= 16777619
		h ^= uint32(s[i])
	}
	return h
}

// lookCommand finds name as bash would for a command with no hashed path:
// a name with a slash is used as written; otherwise the first executable
// regular file in PATH. Only absolute PATH entries are searched: a relative
// one would make "_" relative, which is not worth copying.
func lookCommand(name string, env *bashEnv) (string, bool) {
	if strings.Contains(name, "/") {
		return name, executable(name)
	}
	path, ok := env.get("PATH")
	if !ok {
		return "", false // bash uses its compiled-in default
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			return "", false
		}
		p := dir + "/" + name
		if strings.HasSuffix(dir, "/") {
			p = dir + name
		}
		if executable(p) {
			return p, true
		}
	}
	return "", false
}

// executable reports whether p is a regular file this process may execute.
func executable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return unix.Faccessat(unix.AT_FDCWD, p, unix.X_OK, unix.AT_EACCESS) == nil
}

// sameDir reports whether p is an absolute name of the directory cwd.
func sameDir(p, cwd string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	a, err1 := os.Stat(p)
	b, err2 := os.Stat(cwd)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// canonical reports whether p has no ".", ".." or empty components.
func canonical(p string) bool {
	if p == "/" {
		return true
	}
	if strings.HasSuffix(p, "/") {
		return false
	}
	for _, c := range strings.Split(p[1:], "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}

// knownLocale reports whether setlocale would surely accept name: the
// built-in locales, or one compiled into its own directory under
// /usr/lib/locale (glibc's layout, codeset normalized). A locale only in
// locale-archive is not recognized, which only costs the shortcut.
func knownLocale(name string) bool {
	switch name {
	case "", "C", "POSIX":
		return true
	}
	if strings.ContainsAny(name, "/") || strings.HasPrefix(name, ".") {
		return false
	}
	lang, mod, _ := strings.Cut(name, "@")
	lang, codeset, ok := strings.Cut(lang, ".")
	if ok {
		var b strings.Builder
		digits := true
		for _, r := range strings.ToLower(codeset) {
			if r >= 'a' && r <= 'z' {
				digits = false
				b.WriteRune(r)
			} else if r >= '0' && r <= '9' {
				b.WriteRune(r)
			}
		}
		codeset = b.String()
		if digits {
			codeset = "iso" + codeset
		}
		lang += "." + codeset
	}
	if mod != "" {
		lang += "@" + mod
	}
	fi, err := os.Stat("/usr/lib/locale/" + lang)
	return err == nil && fi.IsDir()
}
