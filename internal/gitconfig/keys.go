package gitconfig

import (
	"sort"
	"strings"
)

// class is a set of occasions on which git runs a kind of program.
type class uint32

const (
	// clsAny: every subcommand that reads the index or the working
	// tree (core.fsmonitor), and git itself (GIT_EXEC_PATH).
	clsAny class = 1 << iota
	// clsPager: a subcommand whose output goes through a pager.
	clsPager
	// clsDiff: an external diff program (diff.external,
	// diff.DRIVER.command).
	clsDiff
	// clsTextconv: text conversion of files shown in a diff or blame.
	clsTextconv
	// clsFilter: clean and smudge filters on files read from or
	// written to the working tree.
	clsFilter
	// clsMerge: merge drivers.
	clsMerge
	// clsEdit: an editor (or interactive.diffFilter).
	clsEdit
	// clsNetwork: transports, credential helpers, askpass.
	clsNetwork
	// clsSign: signing or verifying signatures.
	clsSign
	// clsHelp: manual and web viewers (git help X, git X --help).
	clsHelp
	// clsTrailer: trailer commands.
	clsTrailer
	// clsSubmodule: submodule update commands.
	clsSubmodule
	// clsTool: difftool and mergetool programs.
	clsTool
	// clsTemplate: template directories whose hooks are copied in.
	clsTemplate

	clsAll = clsTemplate<<1 - 1
)

// kind says how a key's value names a program.
type kind uint8

const (
	// kCommand: the value is a command line git runs through the shell.
	kCommand kind = iota
	// kMaybeBool: a boolean switches a built-in behaviour on or off;
	// any other value is a command line (core.fsmonitor, pager.CMD).
	kMaybeBool
	// kProgram: the value is a program's path or name, run with
	// arguments git adds (gpg.program, core.askPass).
	kProgram
	// kHelper: a credential helper: "!command", an absolute path, or a
	// name git runs as git-credential-NAME.
	kHelper
	// kAlias: "!command" runs a shell command; anything else is a git
	// command line.
	kAlias
	// kBang: "!command" runs a command; other values name built-in
	// behaviours (submodule.NAME.update).
	kBang
	// kAlways: any value makes git run a program execgate does not judge
	// (remote.NAME.vcs, man.viewer, init.templateDir …).
	kAlways
	// kDriver: a command run for the files whose attributes name the
	// driver (diff.DRIVER.textconv, filter.DRIVER.clean …).
	kDriver
	// kProtocol: allows the ext:: transport, whose URLs are commands.
	kProtocol
	// kRemoteHelper: a URL of the form TRANSPORT::ADDRESS runs the
	// program git-remote-TRANSPORT (ext:: runs ADDRESS as a command).
	kRemoteHelper
	// kHooksPath: the directory hooks are run from (see hooks.go).
	kHooksPath
	// kHelpFormat: web and html open a browser.
	kHelpFormat
)

// keySpec is one configuration variable that makes git run a program.
// pattern is section.key, or section.*.key for any subsection, or
// section.* for any key of the section (alias.*). attr is the attribute
// that routes files to a driver (kDriver). Sources: git-config(1)
// https://git-scm.com/docs/git-config, gitattributes(5)
// https://git-scm.com/docs/gitattributes, githooks(5)
// https://git-scm.com/docs/githooks, gitcredentials(7), git-help(1).
type keySpec struct {
	pattern string
	kind    kind
	classes class
	runs    string // what the program is, for the reason
	attr    string
}

// keys is sorted by pattern.
var keys = [...]keySpec{
	{pattern: "alias.*", kind: kAlias, classes: clsAll, runs: "an alias"},
	{pattern: "browser.*.cmd", kind: kCommand, classes: clsHelp, runs: "a web browser"},
	{pattern: "browser.*.path", kind: kProgram, classes: clsHelp, runs: "a web browser"},
	{pattern: "core.alternaterefscommand", kind: kCommand, classes: clsNetwork, runs: "the alternate refs command"},
	{pattern: "core.askpass", kind: kProgram, classes: clsNetwork, runs: "the password prompt program"},
	{pattern: "core.editor", kind: kCommand, classes: clsEdit, runs: "the editor"},
	{pattern: "core.fsmonitor", kind: kMaybeBool, classes: clsAny, runs: "the file system monitor hook"},
	{pattern: "core.gitproxy", kind: kCommand, classes: clsNetwork, runs: "the git:// proxy command"},
	{pattern: "core.hookspath", kind: kHooksPath, classes: 0, runs: "hooks"},
	{pattern: "core.pager", kind: kCommand, classes: clsPager, runs: "the pager"},
	{pattern: "core.sshcommand", kind: kCommand, classes: clsNetwork, runs: "the ssh command"},
	{pattern: "credential.*.helper", kind: kHelper, classes: clsNetwork, runs: "a credential helper"},
	{pattern: "credential.helper", kind: kHelper, classes: clsNetwork, runs: "a credential helper"},
	{pattern: "diff.*.command", kind: kDriver, classes: clsDiff, runs: "an external diff driver", attr: "diff"},
	{pattern: "diff.*.textconv", kind: kDriver, classes: clsTextconv, runs: "a text conversion driver", attr: "diff"},
	{pattern: "diff.external", kind: kCommand, classes: clsDiff, runs: "the external diff program"},
	{pattern: "diff.guitool", kind: kAlways, classes: clsTool, runs: "a diff tool"},
	{pattern: "diff.tool", kind: kAlways, classes: clsTool, runs: "a diff tool"},
	{pattern: "difftool.*.cmd", kind: kCommand, classes: clsTool, runs: "a diff tool"},
	{pattern: "difftool.*.path", kind: kProgram, classes: clsTool, runs: "a diff tool"},
	{pattern: "filter.*.clean", kind: kDriver, classes: clsFilter, runs: "a clean filter", attr: "filter"},
	{pattern: "filter.*.process", kind: kDriver, classes: clsFilter, runs: "a filter process", attr: "filter"},
	{pattern: "filter.*.smudge", kind: kDriver, classes: clsFilter, runs: "a smudge filter", attr: "filter"},
	{pattern: "gpg.*.program", kind: kProgram, classes: clsSign, runs: "the signature program"},
	{pattern: "gpg.program", kind: kProgram, classes: clsSign, runs: "the signature program"},
	{pattern: "gpg.ssh.defaultkeycommand", kind: kCommand, classes: clsSign, runs: "the signing key command"},
	{pattern: "help.browser", kind: kAlways, classes: clsHelp, runs: "a web browser"},
	{pattern: "help.format", kind: kHelpFormat, classes: clsHelp, runs: "a web browser"},
	{pattern: "init.templatedir", kind: kAlways, classes: clsTemplate, runs: "hooks copied from a template directory"},
	{pattern: "interactive.difffilter", kind: kCommand, classes: clsEdit, runs: "the interactive diff filter"},
	{pattern: "man.*.cmd", kind: kCommand, classes: clsHelp, runs: "a manual viewer"},
	{pattern: "man.*.path", kind: kProgram, classes: clsHelp, runs: "a manual viewer"},
	{pattern: "man.viewer", kind: kAlways, classes: clsHelp, runs: "a manual viewer"},
	{pattern: "merge.*.driver", kind: kDriver, classes: clsMerge, runs: "a merge driver", attr: "merge"},
	{pattern: "merge.guitool", kind: kAlways, classes: clsTool, runs: "a merge tool"},
	{pattern: "merge.tool", kind: kAlways, classes: clsTool, runs: "a merge tool"},
	{pattern: "mergetool.*.cmd", kind: kCommand, classes: clsTool, runs: "a merge tool"},
	{pattern: "mergetool.*.path", kind: kProgram, classes: clsTool, runs: "a merge tool"},
	{pattern: "pager.*", kind: kMaybeBool, classes: clsPager, runs: "a pager"},
	{pattern: "protocol.*.allow", kind: kProtocol, classes: clsNetwork, runs: "ext:: transport commands"},
	{pattern: "protocol.allow", kind: kProtocol, classes: clsNetwork, runs: "ext:: transport commands"},
	{pattern: "remote.*.pushurl", kind: kRemoteHelper, classes: clsNetwork, runs: "a remote helper"},
	{pattern: "remote.*.receivepack", kind: kCommand, classes: clsNetwork, runs: "the receive-pack program"},
	{pattern: "remote.*.uploadpack", kind: kCommand, classes: clsNetwork, runs: "the upload-pack program"},
	{pattern: "remote.*.url", kind: kRemoteHelper, classes: clsNetwork, runs: "a remote helper"},
	{pattern: "remote.*.vcs", kind: kAlways, classes: clsNetwork, runs: "a remote helper"},
	{pattern: "sequence.editor", kind: kCommand, classes: clsEdit, runs: "the sequence editor"},
	{pattern: "submodule.*.update", kind: kBang, classes: clsSubmodule, runs: "a submodule update command"},
	{pattern: "trailer.*.cmd", kind: kCommand, classes: clsTrailer, runs: "a trailer command"},
	{pattern: "trailer.*.command", kind: kCommand, classes: clsTrailer, runs: "a trailer command"},
	{pattern: "uploadpack.packobjectshook", kind: kCommand, classes: clsNetwork, runs: "the pack-objects hook"},
	{pattern: "url.*.insteadof", kind: kRemoteHelper, classes: clsNetwork, runs: "a remote helper"},
	{pattern: "url.*.pushinsteadof", kind: kRemoteHelper, classes: clsNetwork, runs: "a remote helper"},
	{pattern: "web.browser", kind: kAlways, classes: clsHelp, runs: "a web browser"},
}

// lookupKey returns the spec for a variable's canonical name, or nil.
func lookupKey(e Entry) *keySpec {
	section, key, sub := e.Section(), e.Key(), e.Subsection()
	try := func(p string) *keySpec {
		i := sort.Search(len(keys), func(i int) bool { return keys[i].pattern >= p })
		if i < len(keys) && keys[i].pattern == p {
			return &keys[i]
		}
		return nil
	}
	if sub != "" {
		if k := try(section + ".*." + key); k != nil {
			return k
		}
		// url.BASE.insteadOf: the subsection is the URL.
		return nil
	}
	if k := try(section + "." + key); k != nil {
		return k
	}
	return try(section + ".*")
}

// envSpec is an environment variable that names a program git runs.
type envSpec struct {
	name    string
	kind    kind
	classes class
	runs    string
}

// envVars is sorted by name. Source: git(1), "Environment Variables",
// https://git-scm.com/docs/git#_environment_variables; ssh(1) for
// SSH_ASKPASS; man(1) for MANPAGER.
var envVars = [...]envSpec{
	{name: "EDITOR", kind: kCommand, classes: clsEdit, runs: "the editor"},
	{name: "GIT_ALLOW_PROTOCOL", kind: kProtocol, classes: clsNetwork, runs: "ext:: transport commands"},
	{name: "GIT_ASKPASS", kind: kProgram, classes: clsNetwork, runs: "the password prompt program"},
	{name: "GIT_EDITOR", kind: kCommand, classes: clsEdit, runs: "the editor"},
	{name: "GIT_EXEC_PATH", kind: kAlways, classes: clsAny, runs: "git's own programs from another directory"},
	{name: "GIT_EXTERNAL_DIFF", kind: kCommand, classes: clsDiff, runs: "the external diff program"},
	{name: "GIT_MAN_VIEWER", kind: kAlways, classes: clsHelp, runs: "a manual viewer"},
	{name: "GIT_PAGER", kind: kCommand, classes: clsPager, runs: "the pager"},
	{name: "GIT_PROXY_COMMAND", kind: kCommand, classes: clsNetwork, runs: "the git:// proxy command"},
	{name: "GIT_SEQUENCE_EDITOR", kind: kCommand, classes: clsEdit, runs: "the sequence editor"},
	{name: "GIT_SSH", kind: kProgram, classes: clsNetwork, runs: "the ssh program"},
	{name: "GIT_SSH_COMMAND", kind: kCommand, classes: clsNetwork, runs: "the ssh command"},
	{name: "GIT_TEMPLATE_DIR", kind: kAlways, classes: clsTemplate, runs: "hooks copied from a template directory"},
	{name: "MANPAGER", kind: kCommand, classes: clsHelp, runs: "the manual pager"},
	{name: "PAGER", kind: kCommand, classes: clsPager | clsHelp, runs: "the pager"},
	{name: "SSH_ASKPASS", kind: kProgram, classes: clsNetwork, runs: "the password prompt program"},
	{name: "VISUAL", kind: kCommand, classes: clsEdit, runs: "the editor"},
}

// LocationVars are the environment variables that change which files git
// reads or which repository it uses. A command that sets one of them
// before running git makes what git reads unknown to a reader that only
// has the starting environment.
var LocationVars = [...]string{
	"GIT_ATTR_NOSYSTEM", "GIT_ATTR_SOURCE", "GIT_CEILING_DIRECTORIES", "GIT_COMMON_DIR",
	"GIT_CONFIG", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM",
	"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_SYSTEM", "GIT_DIR", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
	"GIT_EXEC_PATH", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_TEMPLATE_DIR", "GIT_WORK_TREE",
	"HOME", "XDG_CONFIG_HOME",
}

// LocationVar reports whether name is one of LocationVars, or one of the
// numbered GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n.
func LocationVar(name string) bool {
	if strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
		return true
	}
	for _, v := range LocationVars {
		if v == name {
			return true
		}
	}
	return false
}

// subSpec is what one subcommand runs besides git: the classes of
// programs and the hooks (githooks(5)). pages: its output goes through the
// pager by default (git(1) core.pager, pager.<cmd>).
type subSpec struct {
	name    string
	classes class
	hooks   []string
	pages   bool
	// lists: the subcommand's read-only forms (git branch, git stash
	// list, git remote -v) only list, running none of the hooks, filters,
	// editors or transports its other forms run.
	lists bool
}

// Hook lists, from githooks(5). Read-only subcommands run
// post-index-change when they refresh the index (status; diff and
// describe --dirty when they write it back).
var (
	hooksIndex    = []string{"post-index-change"}
	hooksRef      = []string{"reference-transaction"}
	hooksIndexRef = []string{"post-index-change", "reference-transaction"}
	hooksCheckout = []string{"post-checkout", "post-index-change", "reference-transaction"}
	hooksCommit   = []string{"commit-msg", "post-commit", "post-index-change", "post-rewrite", "pre-auto-gc", "pre-commit", "pre-merge-commit", "prepare-commit-msg", "reference-transaction"}
	hooksMerge    = []string{"commit-msg", "post-checkout", "post-index-change", "post-merge", "pre-auto-gc", "pre-merge-commit", "prepare-commit-msg", "reference-transaction"}
	hooksFetch    = []string{"pre-auto-gc", "reference-transaction"}
	hooksPush     = []string{"pre-push", "reference-transaction"}
	hooksPull     = []string{"commit-msg", "post-checkout", "post-index-change", "post-merge", "post-rewrite", "pre-auto-gc", "pre-merge-commit", "pre-rebase", "prepare-commit-msg", "reference-transaction"}
	hooksRebase   = []string{"commit-msg", "post-checkout", "post-commit", "post-index-change", "post-rewrite", "pre-auto-gc", "pre-commit", "pre-merge-commit", "pre-rebase", "prepare-commit-msg", "reference-transaction"}
)

// allHooks are every hook git runs (githooks(5)), for subcommands not in
// subcommands.
var allHooks = []string{
	"applypatch-msg", "commit-msg", "fsmonitor-watchman", "p4-changelist", "p4-post-changelist",
	"p4-pre-submit", "p4-prepare-changelist", "post-applypatch", "post-checkout", "post-commit",
	"post-index-change", "post-merge", "post-receive", "post-rewrite", "post-update",
	"pre-applypatch", "pre-auto-gc", "pre-commit", "pre-merge-commit", "pre-push", "pre-rebase",
	"pre-receive", "prepare-commit-msg", "proc-receive", "push-to-checkout", "reference-transaction",
	"sendemail-validate", "update",
}

const (
	clsDiffs  = clsAny | clsDiff | clsTextconv | clsFilter
	clsReads  = clsAny // plumbing that reads objects and the index
	clsLogs   = clsAny | clsDiff | clsTextconv | clsSign
	clsWrites = clsAny | clsFilter | clsMerge | clsEdit | clsSign | clsTrailer
)

// subcommands is sorted by name. A subcommand not listed runs anything:
// every class and every hook.
var subcommands = [...]subSpec{
	{name: "add", classes: clsAny | clsFilter | clsEdit, hooks: hooksIndex},
	{name: "am", classes: clsWrites | clsDiff | clsTextconv, hooks: []string{"applypatch-msg", "post-applypatch", "post-index-change", "post-rewrite", "pre-applypatch", "pre-auto-gc", "reference-transaction"}},
	{name: "annotate", classes: clsAny | clsTextconv | clsFilter, pages: true},
	{name: "apply", classes: clsAny | clsFilter, hooks: hooksIndex},
	{name: "archive", classes: clsAny | clsFilter | clsNetwork},
	{name: "bisect", classes: clsAny | clsFilter | clsMerge, hooks: hooksCheckout},
	{name: "blame", classes: clsAny | clsTextconv | clsFilter, pages: true},
	{name: "branch", classes: clsAny, hooks: hooksRef, pages: true, lists: true},
	{name: "bundle", classes: clsAny},
	{name: "cat-file", classes: clsReads},
	{name: "check-attr", classes: clsReads},
	{name: "check-ignore", classes: clsReads},
	{name: "check-ref-format", classes: 0},
	{name: "checkout", classes: clsAny | clsFilter | clsMerge | clsSubmodule, hooks: hooksCheckout},
	{name: "cherry", classes: clsReads},
	{name: "cherry-pick", classes: clsWrites | clsDiff | clsTextconv, hooks: hooksCommit},
	{name: "clean", classes: clsAny},
	{name: "clone", classes: clsAny | clsFilter | clsNetwork | clsSubmodule | clsTemplate, hooks: hooksCheckout},
	{name: "commit", classes: clsWrites | clsDiff | clsTextconv, hooks: hooksCommit},
	{name: "config", classes: clsAny | clsEdit, pages: true, lists: true},
	{name: "count-objects", classes: clsReads},
	{name: "describe", classes: clsAny | clsFilter, hooks: hooksIndex},
	{name: "diff", classes: clsDiffs, hooks: hooksIndex, pages: true},
	{name: "diff-files", classes: clsDiffs},
	{name: "diff-index", classes: clsDiffs},
	{name: "diff-tree", classes: clsDiffs},
	{name: "fetch", classes: clsAny | clsNetwork, hooks: hooksFetch},
	{name: "for-each-ref", classes: clsReads},
	{name: "format-patch", classes: clsAny | clsDiff | clsTextconv | clsSign},
	{name: "gc", classes: clsAny, hooks: hooksFetch},
	{name: "grep", classes: clsAny | clsTextconv, pages: true},
	{name: "help", classes: clsHelp},
	{name: "init", classes: clsTemplate},
	{name: "interpret-trailers", classes: clsTrailer | clsEdit},
	{name: "log", classes: clsLogs, pages: true},
	{name: "ls-files", classes: clsReads},
	{name: "ls-remote", classes: clsNetwork},
	{name: "ls-tree", classes: clsReads},
	{name: "merge", classes: clsWrites | clsDiff | clsTextconv, hooks: hooksMerge},
	{name: "merge-base", classes: clsReads},
	{name: "mv", classes: clsAny, hooks: hooksIndex},
	{name: "name-rev", classes: clsReads},
	{name: "notes", classes: clsAny | clsEdit, hooks: hooksRef, lists: true},
	{name: "pull", classes: clsWrites | clsDiff | clsTextconv | clsNetwork | clsSubmodule, hooks: hooksPull},
	{name: "push", classes: clsAny | clsNetwork | clsSign, hooks: hooksPush},
	{name: "range-diff", classes: clsLogs, pages: true},
	{name: "rebase", classes: clsWrites | clsDiff | clsTextconv, hooks: hooksRebase},
	{name: "reflog", classes: clsLogs, pages: true},
	{name: "remote", classes: clsAny | clsNetwork, hooks: hooksRef, lists: true},
	{name: "reset", classes: clsAny | clsFilter, hooks: hooksIndexRef},
	{name: "restore", classes: clsAny | clsFilter | clsMerge, hooks: hooksIndex},
	{name: "rev-list", classes: clsReads},
	{name: "rev-parse", classes: clsReads},
	{name: "revert", classes: clsWrites | clsDiff | clsTextconv, hooks: hooksCommit},
	{name: "rm", classes: clsAny | clsFilter, hooks: hooksIndex},
	{name: "shortlog", classes: clsLogs, pages: true},
	{name: "show", classes: clsLogs, pages: true},
	{name: "show-branch", classes: clsReads},
	{name: "show-ref", classes: clsReads},
	{name: "stash", classes: clsAny | clsFilter | clsMerge | clsDiff | clsTextconv, hooks: hooksCheckout, pages: true, lists: true},
	{name: "status", classes: clsAny | clsFilter, hooks: hooksIndex},
	{name: "switch", classes: clsAny | clsFilter | clsMerge, hooks: hooksCheckout},
	{name: "tag", classes: clsAny | clsEdit | clsSign | clsTrailer, hooks: hooksRef, pages: true, lists: true},
	{name: "var", classes: 0},
	{name: "verify-commit", classes: clsAny | clsSign},
	{name: "verify-tag", classes: clsAny | clsSign},
	{name: "version", classes: 0},
	{name: "whatchanged", classes: clsLogs, pages: true},
	{name: "worktree", classes: clsAny | clsFilter, hooks: hooksCheckout, lists: true},
}

// lookupSub returns the spec of a subcommand, or nil.
func lookupSub(name string) *subSpec {
	i := sort.Search(len(subcommands), func(i int) bool { return subcommands[i].name >= name })
	if i < len(subcommands) && subcommands[i].name == name {
		return &subcommands[i]
	}
	return nil
}

// alwaysRuns are subcommands that run a program whatever the
// configuration says: difftool and mergetool start a tool (vimdiff,
// meld …) chosen by configuration or by what is installed.
var alwaysRuns = [...]string{"difftool", "mergetool"}
