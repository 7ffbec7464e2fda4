package policy

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// CI is a place too. A CI job's steps share more than files: a line a
// step prints can be a workflow command that the runner obeys (GitHub
// Actions' ::set-output::, Azure Pipelines' ##vso[task.setvariable] and
// ##vso[task.prependpath], TeamCity's ##teamcity[setParameter]), and a
// line appended to $GITHUB_ENV or $GITHUB_PATH sets the environment and
// PATH of every later step. Both change what later steps run, outside
// anything the analysis of this command sees; so in CI (the starting
// environment says so) they need review, and no wildcard covers them.
//
// What is judged: the text echo and printf print (a part only known at
// run time may be anything), the files that programs copying their input
// to their output read (cat, head, grep …: read here, up to
// maxScannedFile bytes each, and searched for the commands), programs
// that turn their input into other text (sed, tr, base64 …, which can
// make a command out of anything), and writes to the runner's files. Not
// judged: the names, messages and other data that any other program
// prints (ls of a file named ::set-output…, git log of a crafted commit
// message). See docs/threat-model.md.

// ciVariables are the environment variables whose presence says the
// command runs in a CI job, per system's documentation.
var ciVariables = [...]string{
	"CI", "GITHUB_ACTIONS", "TF_BUILD", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "JENKINS_URL",
	"TEAMCITY_VERSION", "TRAVIS", "APPVEYOR", "BITBUCKET_BUILD_NUMBER", "DRONE", "CODEBUILD_BUILD_ID",
	"WOODPECKER", "SEMAPHORE",
}

// CIVariables returns the environment variables whose presence tells the
// analysis that a command runs in a CI job, where what it prints can be a
// workflow command.
func CIVariables() []string { return slices.Clone(ciVariables[:]) }

// inCI reports whether the starting environment says this is a CI job.
func (a *analyzer) inCI() bool {
	if a.ci == 0 {
		a.ci = -1
		for _, v := range ciVariables {
			if val := a.env(v); val != "" && val != "false" && val != "0" {
				a.ci = 1
				break
			}
		}
	}
	return a.ci > 0
}

// ciControlFiles are the variables naming files a step appends to to
// change later steps (GitHub Actions; CircleCI's BASH_ENV is sourced by
// every later step), with what the append does.
var ciControlFiles = table[string]{
	{"BASH_ENV", "runs as shell code at the start of every later step"},
	{"GITHUB_ENV", "sets environment variables of every later step of this job"},
	{"GITHUB_OUTPUT", "sets this step's outputs, which later steps and jobs read"},
	{"GITHUB_PATH", "puts directories first on PATH for every later step of this job"},
	{"GITHUB_STATE", "sets state that this action's post step reads"},
	{"GITHUB_STEP_SUMMARY", "writes the job summary shown to people reviewing the run"},
}

// ciControlWrite says what writing target does to later CI steps, "" for
// nothing: a target that expands one of ciControlFiles, or the file one
// of them names in the starting environment.
func (a *analyzer) ciControlWrite(target word) string {
	for _, p := range target.params {
		if what, ok := ciControlFiles.lookup(p); ok {
			return fmt.Sprintf("writes to $%s, which %s", p, what)
		}
	}
	if !target.known {
		return ""
	}
	abs := a.resolve(target.text)
	for _, e := range ciControlFiles {
		if v := a.env(e.Key); v != "" && abs != "" && (abs == v || abs == a.resolve(v)) {
			return fmt.Sprintf("writes to %s ($%s), which %s", target.text, e.Key, e.Val)
		}
	}
	return ""
}

// workflowCommands are the starts of the output lines CI runners obey
// that change later steps. The others (::debug::, ::add-mask::,
// ##vso[task.logissue], ##teamcity[message …]) format the log or hide
// values in it, and are left alone.
var workflowCommands = [...]string{
	"::set-env", "::add-path", "::set-output", "::save-state",
	"##vso[task.setvariable", "##vso[task.prependpath", "##vso[task.setendpoint", "##vso[task.addattachment",
	"##vso[task.uploadfile", "##vso[task.uploadsummary", "##vso[task.complete", "##vso[task.setsecret",
	"##vso[artifact.", "##vso[build.", "##vso[release.",
	"##teamcity[setParameter", "##teamcity[buildNumber", "##teamcity[publishArtifacts", "##teamcity[importData",
	"##teamcity[buildStatus", "##teamcity[addBuildTag",
}

// workflowCommand returns the first workflow command in text, "" for
// none. The runners match case-insensitively (Azure) and anywhere in a
// line (Azure, TeamCity); GitHub at the start of a line, which a program
// that cuts lines can make of any place: so anywhere, in any case.
func workflowCommand(text string) string {
	// ASCII case only: the markers are ASCII, and folding other letters
	// would move byte offsets (and the runners do not fold them either).
	lower := asciiLower(text)
	for _, c := range workflowCommands {
		if i := strings.Index(lower, asciiLower(c)); i >= 0 {
			end := min(len(text), i+len(c)+24)
			return oneLine(text[i:end])
		}
	}
	return ""
}

// asciiLower lowers the ASCII letters of s, keeping every byte offset.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// contentCopiers print lines of what they read unchanged (perhaps
// prefixed or cut): a workflow command in their output was in their
// input.
var contentCopiers = nameSet{
	"ack", "ag", "cat", "column", "comm", "cut", "egrep", "expand", "fgrep", "fold", "grep", "head",
	"join", "nl", "paste", "rg", "sort", "strings", "tac", "tail", "unexpand", "uniq", "zcat", "zgrep",
}

// contentMakers print text they compute from what they read: any line.
var contentMakers = nameSet{
	"awk", "base64", "gawk", "hexdump", "jq", "mawk", "nawk", "od", "rev", "sed", "tr", "xxd",
}

// sedSelect matches a sed script that only selects lines to print or
// delete by number (10,40p; 1d; $p; 5q), which prints input lines
// unchanged.
var sedSelect = &lazyRegexp{expr: `^[0-9,$;!pdnqQ \t]+$`}

// sedOnlySelects reports whether sed's scripts (the first operand, or each
// -e) only select lines; any other option than -n, -e and -s may change
// what it prints.
func sedOnlySelects(args []word) bool {
	scripts := 0
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case !w.known:
			return false
		case w.text == "-n" || w.text == "-s" || w.text == "--quiet" || w.text == "--silent":
		case w.text == "-e" || w.text == "--expression":
			if i+1 >= len(args) || !args[i+1].known || !sedSelect.get().MatchString(args[i+1].text) {
				return false
			}
			scripts++
			i++
		case isOption(w.text):
			return false
		case scripts == 0:
			if !sedSelect.get().MatchString(w.text) {
				return false
			}
			scripts++
		}
	}
	return scripts > 0
}

// maxScannedFile bounds the bytes of one file searched for workflow
// commands; a larger file is not proven free of them.
const maxScannedFile = 1 << 20

// ciOutput judges what a command prints, in CI: a workflow command among
// it changes later steps.
func (a *analyzer) ciOutput(seg *Segment, name string, words []word) {
	if !a.inCI() || a.printsToFile {
		return
	}
	flag := func(why string) {
		seg.add(Reason{Risk: NeedsReview, Text: why, Rule: "ci-workflow-command"})
	}
	switch {
	case name == "echo" || name == "printf":
		text, known := printedText(name, a.literalWords(seg, words[1:]))
		if !known {
			flag(fmt.Sprintf("%s prints text only known at run time in CI, where a line can be a workflow command that changes later steps", name))
		} else if c := workflowCommand(text); c != "" {
			flag(fmt.Sprintf("%s prints the CI workflow command %s, which changes later steps", name, c))
		}
	case name == "sed" && sedOnlySelects(words[1:]):
		// sed -n '10,40p': prints lines of its input as they are.
		if why := a.unscannedOutput(name, words[1:]); why != "" {
			flag(why)
		}
	case name == "sed" && viewArgs(words[1:], nil).has("-i", "--in-place"):
		// sed -i writes its files, not its output (the write is judged).
	case contentMakers.has(name):
		flag(fmt.Sprintf("%s prints text it computes in CI, where a line can be a workflow command that changes later steps", name))
	case contentCopiers.has(name):
		if why := a.unscannedOutput(name, words[1:]); why != "" {
			flag(why)
		}
	}
}

// printedText is what echo or printf prints, and whether it is known:
// echo's words joined (-e decodes escapes, as %b does), printf's format
// applied to its arguments by mvdan.cc/sh's own printf. Both the raw and
// the decoded text are returned together, so that a command spelt with
// escapes is found either way.
func printedText(name string, args []word) (string, bool) {
	texts := make([]string, 0, len(args))
	for _, w := range args {
		if !w.known {
			return "", false
		}
		texts = append(texts, w.text)
	}
	raw := strings.Join(texts, " ")
	var decoded string
	var err error
	if name == "printf" && len(texts) > 0 {
		decoded, _, err = expand.Format(&expand.Config{}, texts[0], texts[1:])
	} else {
		decoded, _, err = expand.Format(&expand.Config{}, "%b", []string{raw})
	}
	if err != nil {
		return raw + "\n" + strings.Join(texts, ""), true
	}
	return raw + "\n" + strings.Join(texts, "") + "\n" + decoded, true
}

// unscannedOutput says why what a copier prints is not proven free of
// workflow commands, "" when each file it reads was read here and holds
// none. Its pattern arguments are words, not files, and are searched too.
func (a *analyzer) unscannedOutput(name string, args []word) string {
	v := viewArgs(args, a.r.optionsWithValue(name))
	for _, w := range args {
		if !w.known {
			return fmt.Sprintf("%s is given %s, only known at run time, in CI, where what it prints can be a workflow command", name, w.shown())
		}
		if c := workflowCommand(w.text); c != "" {
			return fmt.Sprintf("%s prints the CI workflow command %s, which changes later steps", name, c)
		}
	}
	budget := 4 * maxScannedFile
	for _, o := range v.operands() {
		paths, exact := a.wordPaths(o, o.text)
		if !exact {
			return fmt.Sprintf("%s reads the files %s names in CI, which execgate cannot read to rule out a workflow command", name, o.text)
		}
		for _, p := range paths {
			if p == "-" || stdinNames.has(p) {
				continue // its input: the command before it is judged
			}
			r := a.lookup(p)
			if r.Path != "" && a.written[r.Path] {
				return fmt.Sprintf("%s reads %s in CI, which this command writes first: what it will hold is not known here", name, p)
			}
			if !r.Exists {
				continue // a missing file (or a pattern word that is no file) prints nothing
			}
			if !r.Mode.IsRegular() {
				return fmt.Sprintf("%s reads %s in CI, which execgate cannot read to rule out a workflow command", name, p)
			}
			text, err := readHead(r.Path, maxScannedFile+1)
			budget -= len(text)
			if err != nil || len(text) > maxScannedFile || budget < 0 {
				return fmt.Sprintf("%s reads %s in CI, which execgate cannot read whole to rule out a workflow command", name, p)
			}
			if c := workflowCommand(text); c != "" {
				return fmt.Sprintf("%s prints %s in CI, which holds the workflow command %s: it changes later steps", name, p, c)
			}
		}
	}
	return ""
}

// ciInput judges a here-document or here-string in CI: the command it
// feeds (cat <<EOF) may print it, so a workflow command in it, or text
// only known at run time, needs review there like echo's.
func (a *analyzer) ciInput(seg *Segment, r *syntax.Redirect, target word) {
	if !a.inCI() || a.printsToFile {
		return
	}
	var text word
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc == nil {
			return
		}
		text = a.literalWord(seg, evalWord(r.Hdoc))
	case syntax.WordHdoc:
		text = a.literalWord(seg, target)
	default:
		return
	}
	switch {
	case !text.known:
		seg.add(Reason{Risk: NeedsReview, Text: "feeds text only known at run time to a command in CI, where a printed line can be a workflow command that changes later steps", Rule: "ci-workflow-command"})
	case workflowCommand(text.text) != "":
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("feeds the CI workflow command %s to a command that may print it", workflowCommand(text.text)), Rule: "ci-workflow-command"})
	}
}

// stdoutToFile reports whether a statement's own redirections leave its
// standard output on a named file, where the CI runner does not read it
// (echo "# header" >> "$SNAPSHOT_FILE"). Output duplicated onto another
// descriptor, or onto /dev and /proc paths, may still reach the runner's
// log; the file itself is remembered as written (see unscannedOutput).
func (a *analyzer) stdoutToFile(seg *Segment, s *syntax.Stmt) bool {
	toFile := false
	for _, r := range s.Redirs {
		fd1 := r.N == nil || r.N.Value == "1"
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob:
			if fd1 {
				toFile = a.plainFileTarget(seg, r.Word)
			}
		case syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
			toFile = a.plainFileTarget(seg, r.Word)
		case syntax.DplOut, syntax.RdrInOut:
			if fd1 {
				toFile = false
			}
		}
	}
	return toFile
}

// plainFileTarget reports whether a redirection's target is a path known
// before running that names no device or process file: literal, or a
// variable the program set to literal text (literalvars.go).
func (a *analyzer) plainFileTarget(seg *Segment, w *syntax.Word) bool {
	if w == nil {
		return false
	}
	t := a.literalWord(seg, evalWord(w))
	return t.known && t.text != "" && !strings.HasPrefix(t.text, "/dev/") && !strings.HasPrefix(t.text, "/proc/")
}
