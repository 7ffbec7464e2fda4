package policy

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// A secret is proven absent, not listed. The credential sets name the
// files known to hold secrets, and reading them is graded by what they
// are (dangerous to print a private key to the agent). But no list names
// every token store: a CLI released last month keeps its token in
// ~/.config/NEW/…, an editor keeps API keys in its storage files. So a
// read-only program is safe only where a read is proven free of secrets:
// the files of the workspace, the system's files, and a short list of
// places known to hold only published code. Anywhere else in a home
// directory (the user's, another user's, /root), another process's /proc
// entries, a file another user owns: it needs review.

// publicProcEntries are the /proc/PID entries that show a process's state
// (proc(5)), never its memory, environment, arguments, open files or
// mappings.
var publicProcEntries = nameSet{
	"cgroup",
	"comm",
	"io",
	"limits",
	"loginuid",
	"oom_score",
	"sched",
	"stat",
	"statm",
	"status",
	"wchan",
}

// nameListers print the names of the files they look at, not what is in
// them (find prints names unless told to run something, which its own
// rules judge).
var nameListers = nameSet{
	"fd",
	"find",
	"tree",
}

// unprovenRead returns why one of the files args name is not proven to
// hold no secret, "" when each is: a path that cannot be resolved, a link
// to nothing, a file in a home directory outside the workspace, another
// process's /proc entry or another user's file. Programs that show only
// names and sizes (ls, wc, find) are not asked.
func (a *analyzer) unprovenRead(program string, spec *safeSpec, args []word) string {
	if spec.Inert || nameListers.has(program) {
		return "" // names and sizes: what the credential check sees is enough
	}
	patternOpts := a.r.Programs.get(program).PatternOptions
	for i, w := range args {
		if i > 0 && args[i-1].known && matchesAny(patternOpts, args[i-1].text) || !w.pathKnown() {
			continue
		}
		for _, c := range pathCandidates(w) {
			if isOption(c) || strings.HasPrefix(c, unknownShape) {
				continue
			}
			paths, exact := a.wordPaths(w, c)
			if !exact {
				paths = []string{globDir(c)} // the directory the pattern looks in
			}
			for _, p := range paths {
				if why := a.readProblem(p); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// globDir is the directory part of a pattern before its first wildcard.
func globDir(pat string) string {
	i := strings.IndexAny(pat, "*?[")
	if i < 0 {
		return pat
	}
	j := strings.LastIndexByte(pat[:i], '/')
	switch {
	case j < 0:
		return "."
	case j == 0:
		return "/"
	}
	return pat[:j]
}

// readProblem says why reading the path p is not proven harmless, "" when
// it is.
func (a *analyzer) readProblem(p string) string {
	r := a.lookup(p)
	switch {
	case r.Path == "":
		if a.cwd == "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
			return "" // the credential check says so (in a directory execgate cannot follow)
		}
		return fmt.Sprintf("reads %s, which execgate cannot resolve: %s (unknown)", p, r.Why)
	case r.Dangling:
		return fmt.Sprintf("reads %s, a link to %s, which does not exist (unknown)", p, a.homeForm(r.Path))
	case a.pathIn("harmless", r.Path):
		return ""
	}
	shown := p
	if r.ViaLink {
		shown = fmt.Sprintf("%s (a link to %s)", p, a.homeForm(r.Path))
	}
	if why := a.privatePlace(r); why != "" {
		return fmt.Sprintf("reads %s, %s, which may hold secrets", shown, why)
	}
	return ""
}

// privatePlace says what makes the resolved path r a place whose files
// may hold secrets nobody listed, "" for none.
func (a *analyzer) privatePlace(r resolved) string {
	if a.insideWorkspace(r.Path) {
		return ""
	}
	hf := a.homeForm(r.Path)
	if strings.HasPrefix(hf, "~/") && !a.pathIn("public-home", hf) {
		return "a file in a home directory outside the workspace"
	}
	if entry, ok := otherProcessEntry(r.Path); ok && !publicProcEntries.has(entry) {
		return "a process's " + entry
	}
	if r.Exists && r.UID >= 0 && r.UID != os.Geteuid() {
		// Another user's file is theirs wherever it lies, /tmp included.
		// Root's files are the system's, but for those root keeps from
		// everyone else (0600: /etc/master.passwd, private keys).
		switch {
		case r.UID != 0:
			return fmt.Sprintf("a file of another user (uid %d)", r.UID)
		case r.Mode.Perm()&0o004 == 0:
			return "a file only root and its group may read"
		}
	}
	return ""
}

// otherProcessEntry returns the entry of /proc/PID/ (or /proc/self/,
// /proc/thread-self/) that p names: "environ" for /proc/1/environ,
// "task/2/environ" below it. ok is false for other paths.
func otherProcessEntry(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return "", false
	}
	pid, entry, found := strings.Cut(rest, "/")
	if !found || entry == "" || !(isDigits(pid) || pid == "self" || pid == "thread-self") {
		return "", false
	}
	return entry, true
}

// maxProgramFile bounds the program file the analysis reads to judge it
// (jq -f FILE).
const maxProgramFile = 64 << 10

// jqReadsEnvironment reports whether a jq program's text may read the
// environment ($ENV, env) or name its input files (input_filename).
func jqReadsEnvironment(text string) bool {
	for _, s := range [...]string{"env", "$ENV", "input_filename"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// jqProgramFile says why the program jq reads with -f/--from-file (the
// option at v.words[i]) may print the environment, "" when it does not:
// a program from its input (-f /dev/stdin <<< '$ENV') or a file only
// known at run time cannot be seen; a file is read, at decision time, and
// judged as an inline program is.
func (a *analyzer) jqProgramFile(v argView, i int) string {
	f, ok := optionSpecValue(v.words, i, matchingSpec([]string{"-f", "--from-file"}, v.words[i].text))
	if !ok {
		return ""
	}
	if !f.known {
		return fmt.Sprintf("reads its program from %s, only known at run time", f.shown())
	}
	if f.text == "-" || stdinNames.has(f.text) || strings.HasPrefix(f.text, "/dev/") || strings.HasPrefix(f.text, "/proc/") {
		return fmt.Sprintf("reads its program from its input (%s), which may read the environment", f.text)
	}
	r := a.lookup(f.text)
	if r.Path == "" || !r.Exists || !r.Mode.IsRegular() {
		return fmt.Sprintf("reads its program from %s, which execgate cannot read", f.text)
	}
	text, err := readHead(r.Path, maxProgramFile+1)
	if err != nil || len(text) > maxProgramFile {
		return fmt.Sprintf("reads its program from %s, which execgate cannot read", f.text)
	}
	if jqReadsEnvironment(text) || jqImport.get().MatchString(text) {
		return fmt.Sprintf("runs the program in %s, which reads the environment or other files", f.text)
	}
	return ""
}

// jqImport matches a jq import or include, which reads other files (the
// rule jq-import judges the same in an inline program).
var jqImport = &lazyRegexp{expr: `(^|[\s;(|])(import|include)\s*"`}

// readHead reads at most n bytes of the file p.
func readHead(p string, n int64) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, n))
	return string(b), err
}
