package policy

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gobwas/glob"
	"mvdan.cc/sh/v3/syntax"
)

// systemProgram reports whether argv0 names the system's program: a bare
// name (found on PATH) or an absolute path in a system directory.
func systemProgram(argv0 string) bool {
	if !strings.Contains(argv0, "/") {
		return true
	}
	// These are where a program named by absolute path still counts as
	// the system's program of that name.
	switch path.Dir(argv0) {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin":
		return true
	}
	return false
}

// safeProgram is the safe-binary layer: it reports whether the command is
// read-only, adding reasons when arguments make a known program unsafe.
func (a *analyzer) safeProgram(seg *Segment, name string, words []word) bool {
	// PROGRAM --version and PROGRAM --help print and exit, for the
	// programs execgate knows (the safe table's and the others it models).
	// An unknown program's --version is still the unknown program running:
	// safe is proven, never presumed.
	if len(words) == 2 && words[1].known && (words[1].text == "--version" || words[1].text == "--help") &&
		!strings.Contains(words[0].text, "/") && a.r.knows(name) && !versionLoadsProject(name) {
		seg.networkQuery = true // prints and exits without reaching the network (gh --version)
		return true
	}
	spec := a.r.Safe.get(name)
	if spec == nil {
		return false
	}
	if !systemProgram(words[0].text) {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("runs %s, not the system's %s", quoteWord(words[0].shown()), name), Rule: "local-program"})
		return false
	}
	safe := a.safeArgs(seg, name, name, spec, words[1:], nil)
	seg.networkQuery = safe && spec.Query
	return safe
}

// safeArgs checks args against spec; label names the program (and
// subcommand) in reasons. inherited are the options a model with
// subcommands allows with every one of them (its own only list).
func (a *analyzer) safeArgs(seg *Segment, program, label string, spec *safeSpec, args []word, inherited []string) bool {
	v := viewArgs(args, spec.optionsWithValue(a.r.optionsWithValue(program)))
	only := spec.Only
	if len(inherited) > 0 {
		only = append(append([]string(nil), inherited...), spec.Only...)
	}
	ok := true
	unsafe := func(text, rule string) {
		seg.unsafe = true
		seg.add(Reason{Risk: NeedsReview, Text: text, Rule: rule})
		ok = false
	}
	for _, i := range v.options {
		t := v.words[i].text
		for _, d := range spec.denyList() {
			opt := d.option
			if global, ok := strings.CutPrefix(opt, "^"); ok {
				// ^-p: the option only before the subcommand (git -p is
				// --paginate; git log -p is --patch).
				if len(v.positional) > 0 && i > v.positional[0] {
					continue
				}
				opt = global
			}
			if optionMatches(opt, t) {
				unsafe(fmt.Sprintf("%s %s %s", label, strings.TrimSuffix(opt, "*"), d.reason), "unsafe-option")
			}
		}
	}
	if !spec.Inert && v.unknownOption() {
		unsafe(fmt.Sprintf("%s is given arguments only known at run time", label), "dynamic-arguments")
	}
	if !spec.Data {
		// A model with subcommands looks at the words before the
		// subcommand here and leaves the rest to the subcommand's model,
		// which knows its options.
		credArgs, leaf := args, spec.Sub == nil
		if !leaf && len(v.positional) > 0 {
			credArgs = args[:v.positional[0]]
		}
		if leaf {
			credArgs = withoutKeys(credArgs, spec.PublicInputs)
		}
		if c := a.credentialArg(program, credArgs); c != "" {
			seg.flags.readsCreds = true
			unsafe(fmt.Sprintf("%s reads credentials (%s)%s", label, c, environNote(c)), "reads-credentials")
			a.printsSecretStore(seg, label, spec, c)
		} else if leaf && !spec.Runner {
			if why := a.unprovenRead(program, spec, credArgs); why != "" {
				unsafe(fmt.Sprintf("%s %s", label, why), "reads-private")
			}
		}
		if leaf {
			seg.credsModelled = true
		}
	}
	if len(only) > 0 {
		for _, i := range v.options {
			if spec.Sub != nil && len(v.positional) > 0 && i > v.positional[0] {
				break // the subcommand's model judges the options after it
			}
			if !onlyAllows(only, v.words[i].text) {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s is not read-only", label, v.words[i].text), Rule: "not-read-only", Coverable: true})
				ok = false
			}
		}
	}
	for _, d := range spec.DirOptions {
		if j := v.find(d); j >= 0 {
			dir, found := optionWordValue(v.words, j)
			if !found || !dir.known || !a.insideWorkspace(dir.text) {
				unsafe(fmt.Sprintf("%s %s %s runs outside the workspace", label, d, dir.text), "outside-workspace")
			}
		}
	}
	if spec.Secret != "" {
		unsafe(fmt.Sprintf("%s %s", label, spec.Secret), "prints-secret")
		return false
	}
	if spec.Runner {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s runs the workspace's own code (tests, build scripts), which is not checked", label), Rule: workspaceRunnerRule, Coverable: true})
		return false
	}
	ops := v.operands()
	if spec.Sub != nil {
		if len(ops) == 0 {
			// gh pr --help prints the subcommand's help and exits.
			helpOnly := len(args) == 1 && args[0].known && args[0].text == "--help"
			return ok && (spec.Sub.get("") != nil || helpOnly)
		}
		sub := ops[0]
		subSpec := spec.subSpec(sub.text)
		idx := v.positional[0]
		if prev, ambiguous := a.mayBeOptionValue(program, args, idx); ambiguous {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s may be the value of %s, not a subcommand", label, sub.text, prev), Rule: "not-read-only", Coverable: true})
			return false
		}
		if subSpec == nil && sub.known && spec.isGroup(sub.text, releaseTrackOnly(strings.TrimPrefix(label, program))) {
			// A command group (gcloud compute instances …): the verb
			// comes later, under the same model.
			return a.safeArgs(seg, program, label+" "+sub.text, spec, args[idx+1:], inherited) && ok
		}
		if !sub.known && spec.hasSecret() {
			unsafe(fmt.Sprintf("%s %s is only known at run time, and could be a subcommand that prints secrets", label, sub.text), "prints-secret")
			return false
		}
		if !sub.known || subSpec == nil {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s is not a read-only subcommand", label, sub.text), Rule: "not-read-only", Coverable: true})
			return false
		}
		return a.safeArgs(seg, program, label+" "+sub.text, subSpec, args[idx+1:], only) && ok
	}
	if spec.MaxPositionals != nil && len(ops) > *spec.MaxPositionals && !v.has(spec.PositionalsWith...) {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s with %d operands is not read-only", label, len(ops)), Rule: "not-read-only", Coverable: true})
		ok = false
	}
	switch spec.Check {
	case "sed":
		why, code := sedUnsafe(v)
		if why != "" {
			unsafe("sed "+why, "sed-unsafe")
		}
		if code != "" {
			if risk, reasons := a.sub(code); risk == Dangerous {
				seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("sed runs `%s`: %s", oneLine(code), strings.Join(reasons, "; ")), Rule: "sed-exec"})
			}
		}
	case "jq":
		for _, w := range v.words {
			if jqReadsEnvironment(w.text) {
				unsafe("jq reads the environment, which may hold secrets", "prints-environment")
				break
			}
		}
		if i := v.find("-f", "--from-file"); i >= 0 {
			if why := a.jqProgramFile(v, i); why != "" {
				unsafe("jq "+why, "prints-environment")
			}
		}
	case "ps":
		// BSD-style options (no dash) with e show every process's
		// environment.
		for _, w := range v.words {
			if w.known && !strings.HasPrefix(w.text, "-") && strings.Contains(w.text, "e") {
				unsafe("ps "+w.text+" shows processes' environments, which may hold secrets", "prints-environment")
				break
			}
		}
	case "tee":
		// fileWrites judges the files; only /dev/null and the like keep
		// tee read-only.
		for _, o := range ops {
			if !o.known || !a.pathIn("harmless", a.normPath(o.text)) {
				ok = false
			}
		}
	case "set":
		// set -o NAME (and -euo NAME): only options that make the shell
		// stricter or louder; -o allexport, -o keyword and the like change
		// what later words mean.
		for _, i := range v.options {
			t := v.words[i].text
			if strings.HasPrefix(t, "--") || len(t) < 2 {
				continue
			}
			// -k puts every NAME=VALUE word of later commands in their
			// environment, -a exports every assignment, +B and -H change
			// what later words expand to: only the letters of the
			// harmless -o options pass.
			if bad := strings.TrimLeft(strings.TrimSuffix(t[1:], "o"), harmlessSetFlags); bad != "" {
				unsafe(fmt.Sprintf("set %s changes how later commands are read or run", t), "set-option")
				continue
			}
			if t[len(t)-1] != 'o' {
				continue
			}
			if val, found := optionSpecValue(v.words, i, t[:1]+"o"); !found || !val.known || !harmlessSetOption.has(val.text) {
				unsafe(fmt.Sprintf("set %s %s changes how later commands are read", t, val.text), "set-option")
			}
		}
	case "aws":
		if why := awsUnsafe(v); why != "" {
			unsafe(fmt.Sprintf("%s %s", label, why), "not-read-only")
		}
	case "kill":
		// Only the shell's own jobs (%1, %+, %name): what the agent
		// started in this command, never another process.
		for _, o := range ops {
			if !o.known || !strings.HasPrefix(o.text, "%") {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("kill %s signals a process other than this shell's own jobs", o.text), Rule: "not-read-only", Coverable: true})
				ok = false
			}
		}
	case "sysctl":
		// sysctl NAME reads; NAME=VALUE writes (as -w does).
		for _, o := range ops {
			if !o.known || strings.Contains(o.text, "=") {
				unsafe(fmt.Sprintf("sysctl %s changes a kernel setting", o.text), "not-read-only")
			}
		}
	case "kubectl-resources":
		// get/describe name resource types in many spellings: secrets,
		// secret/x, secrets.v1, pods,secrets. Listing or describing
		// secrets shows names, key names and sizes, never values; the
		// output formats that print values are the rule
		// kubectl-secret-print's. A type known only at run time could be
		// anything.
		for _, o := range ops {
			if !o.known {
				unsafe(fmt.Sprintf("%s %s could print Kubernetes secrets", label, o.text), "prints-secret")
			}
		}
	case "local-chart":
		// A chart named by a path is read from the workspace; any other
		// name (repo/chart, oci://…, a URL) is fetched from the network.
		// The chart is the last operand (helm template [NAME] CHART).
		if len(ops) > 0 {
			if o := ops[len(ops)-1]; !o.known || !(o.text == "." || strings.HasPrefix(o.text, "./")) {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s may fetch the chart from the network (a local chart is written ./DIR)", label, o.text), Rule: "not-read-only", Coverable: true})
				ok = false
			}
		}
	case "docker-inspect":
		if why := dockerInspectUnsafe(v); why != "" {
			unsafe(fmt.Sprintf("%s %s", label, why), "prints-secret")
		}
	case "gh-host", "gh-repo":
		if why := ghHostUnsafe(v, spec.Check == "gh-repo"); why != "" {
			// Firm, as kubectl -s and helm --kube-apiserver are: what
			// the query sends to another host is no word's to grant.
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s", label, why), Rule: "gh-host", Effect: EffectSend})
			ok = false
		}
	case "systemctl-show":
		if why := systemctlShowUnsafe(v); why != "" {
			unsafe(fmt.Sprintf("%s %s", label, why), "prints-secret")
		}
	case "fmt-check":
		// terraform fmt rewrites files unless told only to check.
		if !v.has("-check", "--check", "-write=false", "--write=false") {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s rewrites files (without -check)", label), Rule: "not-read-only", Coverable: true})
			ok = false
		}
	case "awk":
		if why := awkUnsafe(v); why != "" {
			unsafe("awk "+why, "awk-unsafe")
		}
		for _, w := range awkOutputFiles(v) {
			a.writeTarget(seg, w, label)
		}
	}
	return ok
}

type denyEntry struct{ option, reason string }

// denyList returns the deny options in a stable order.
func (s *safeSpec) denyList() []denyEntry {
	out := make([]denyEntry, 0, len(s.Deny))
	for o, r := range s.Deny.all() {
		out = append(out, denyEntry{o, r})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].option < out[j].option })
	return out
}

// optionWordValue returns the value of the option at words[i].
func optionWordValue(words []word, i int) (word, bool) {
	t := words[i].text
	if strings.HasPrefix(t, "--") {
		if _, v, ok := strings.Cut(t, "="); ok {
			return word{text: v, known: words[i].known}, true
		}
	} else if len(t) > 2 {
		return word{text: t[2:], known: words[i].known}, true
	}
	if i+1 < len(words) {
		return words[i+1], true
	}
	return word{}, false
}

// optionSpecValue returns the value of the option at words[i] that
// matched spec, attached anywhere in a cluster or the next word.
func optionSpecValue(words []word, i int, spec string) (word, bool) {
	j := i
	return optionArgument(words, &j, spec)
}

// dryRunOptions are the options with which these programs' manuals promise
// to only show what they would do (kubectl --dry-run=client, aws s3
// --dryrun, terraform state mv -dry-run). A program not listed here may
// ignore or misread such a word, so it earns nothing elsewhere.
var dryRunOptions = table[[]string]{
	{"aws", []string{"--dryrun", "--dry-run"}},
	{"docker", []string{"--dry-run"}},
	{"docker-compose", []string{"--dry-run"}},
	{"git", []string{"-n", "--dry-run"}},
	{"helm", []string{"--dry-run", "--dry-run=client", "--dry-run=server"}},
	{"k", []string{"--dry-run", "--dry-run=client", "--dry-run=server"}},
	{"kubectl", []string{"--dry-run", "--dry-run=client", "--dry-run=server"}},
	{"npm", []string{"--dry-run"}},
	{"oc", []string{"--dry-run", "--dry-run=client", "--dry-run=server"}},
	{"pnpm", []string{"--dry-run"}},
	{"pulumi", []string{"--preview-only"}},
	{"rsync", []string{"-n", "--dry-run"}},
	{"terraform", []string{"-dry-run"}},
	{"tofu", []string{"-dry-run"}},
	{"yarn", []string{"--dry-run"}},
}

// dryRun reports whether the command carries one of its program's
// documented dry-run options, before any "--".
func dryRun(name string, words []word) bool {
	opts := dryRunOptions.get(name)
	if opts == nil {
		return false
	}
	for _, w := range words[1:] {
		if !w.known {
			return false // a word read at run time could be anything
		}
		if w.text == "--" {
			return false
		}
		if slices.Contains(opts, w.text) {
			return true
		}
	}
	return false
}

// applyRules is the dangerous-pattern layer. A dangerous rule that matches
// a command told to do a dry run asks instead of refusing: the manual
// promises no change, but the command still reaches the real system.
func (a *analyzer) applyRules(seg *Segment, name string, words []word) {
	dry := dryRun(name, words)
	for _, ru := range a.r.rulesFor(name) {
		switch a.matchRule(ru, name, words) {
		case matchYes:
			if ru.Risk == Dangerous && dry {
				seg.add(Reason{Risk: NeedsReview, Text: "dry run: would " + ru.Reason, Rule: ru.ID})
				continue
			}
			seg.add(Reason{Risk: ru.Risk, Text: ru.Reason, Rule: ru.ID, Coverable: !ru.Firm && ru.Risk != Dangerous, Alternative: ru.Alternative})
			if ru.SendsStdin {
				seg.flags.sendsStdin = true
			}
		case matchMaybe:
			if ru.Risk == Dangerous && ru.DynamicDangerous && a.onlyTargetUnknown(seg, ru, name, words) {
				seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("%s, or wherever a target known only at run time points", ru.Reason), Rule: ru.ID, Alternative: ru.Alternative})
			} else if ru.Risk == Dangerous {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("dynamic arguments, only known at run time, could mean it %s", ru.Reason), Rule: ru.ID})
			}
		}
	}
}

// onlyTargetUnknown reports whether a maybe-match of ru is uncertain only
// about the target: every option group the rule needs is written out (rm
// -rf "$DIR", not rm "$X", where the unknown word might or might not be
// -r), some target starts with an expansion (rm -rf "$X"/y, not rm -rf
// ./build/"$X"), and the command is not run by find -exec or -ok, whose targets are
// bounded by find's own starting point and judged by find's rules.
func (a *analyzer) onlyTargetUnknown(seg *Segment, ru *rule, name string, words []word) bool {
	for _, w := range seg.Wrappers {
		if strings.HasPrefix(w, "find ") {
			return false
		}
	}
	v, ops := a.view(name, words[1:], true)
	for _, group := range ru.Options {
		if !v.has(group...) {
			return false
		}
	}
	for _, op := range ops {
		if !op.known && (op.text == "" || strings.HasPrefix(op.text, unknownShape)) && !a.belowTempDir(op) {
			return true // where the target lies is only known at run time
		}
	}
	return false
}

// tempDirVars name the system's temporary directory; a program that never
// sets one may lean on the environment's value.
var tempDirVars = nameSet{
	"RUNNER_TEMP",
	"TEMP",
	"TMP",
	"TMPDIR",
}

// belowTempDir reports whether w is a named entry below a temporary
// directory variable that the program itself does not set: "$TMPDIR/build"
// asks, but TMPDIR=/Users rm -rf $TMPDIR/x, or "$TMPDIR/" alone, stays as
// bad as the worst place it could point.
func (a *analyzer) belowTempDir(w word) bool {
	if len(w.params) == 0 || !tempDirVars.has(w.params[0]) || a.vars.poisonAll || a.vars.poisoned[w.params[0]] {
		return false
	}
	rest := strings.Trim(strings.TrimPrefix(w.text, unknownShape), "/")
	return rest != "" && !strings.ContainsAny(rest, "*?[") && !strings.HasPrefix(rest, unknownShape) && !strings.Contains(rest, "..")
}

type matchResult int

const (
	matchNo matchResult = iota
	matchMaybe
	matchYes
)

// matchRule reports whether ru matches the command words (program first).
func (a *analyzer) matchRule(ru *rule, program string, words []word) matchResult {
	args := words[1:]
	if ru.FoldCase {
		folded := make([]word, len(args))
		for i, w := range args {
			folded[i] = w
			folded[i].text = strings.ToLower(w.text)
		}
		args = folded
	}
	if ru.Bare {
		if len(args) == 0 {
			return matchYes
		}
		return matchNo
	}
	v, ops := a.view(program, args, !ru.FoldCase)
	maybe := false
	if len(ru.NotSub) > 0 && len(ops) > 0 && contains(ru.NotSub, ops[0].text) {
		return matchNo
	}
	if len(ru.Sub) > 0 {
		n, res := matchSub(ru.subParts(), ops)
		if res == matchNo {
			return matchNo
		}
		maybe = maybe || res == matchMaybe
		ops = ops[n:]
	}
	for _, group := range ru.Options {
		if !v.has(group...) {
			if !v.unknown() {
				return matchNo
			}
			maybe = true
		}
	}
	if len(ru.NotOptions) > 0 && v.has(ru.NotOptions...) {
		return matchNo
	}
	// Only now are the rule's patterns needed. Most rules of a program
	// fail one of the plain comparisons above, and compiling late spares a
	// short-lived shim compiling every git rule to judge `git status`.
	if err := a.r.compileRule(ru); err != nil {
		// A broken rule cannot clear anything: treat it as a possible
		// match, which asks.
		return matchMaybe
	}
	if len(ru.Targets) > 0 && !a.anyMatch(ru.targetGlobs, ru.targetSets, ops) {
		return matchNo
	}
	if ru.LastArg && len(ops) > 0 {
		ops = ops[len(ops)-1:]
	}
	if ru.sourcesRE != nil {
		var sure bool
		if ops, sure = sourcesBefore(ru.sourcesRE, ops); !sure {
			if !anyUnknown(ops) {
				return matchNo
			}
			maybe = true
		}
	}
	if len(ru.ValueOf) > 0 {
		ops = a.optionValues(ru.ValueOf, v)
	}
	if len(ru.Args) > 0 && !a.anyMatch(ru.argGlobs, ru.argSets, ops) {
		if !anyUnknown(ops) {
			return matchNo
		}
		maybe = true
	}
	if len(ru.AnyArg) > 0 && !a.anyMatch(ru.anyGlobs, ru.anySets, args) {
		return matchNo
	}
	if ru.text != nil {
		texts := make([]string, len(args))
		for i, w := range args {
			texts[i] = w.text
		}
		if !ru.text.MatchString(strings.Join(texts, " ")) {
			return matchNo
		}
	}
	if maybe {
		return matchMaybe
	}
	return matchYes
}

// sourcesBefore returns the operands before the last one that re says
// is remote — the local sources of an upload, whose destination comes
// last — and whether there is one. Without one, all operands come back:
// one known only at run time may be the remote destination.
func sourcesBefore(re *regexp.Regexp, ops []word) ([]word, bool) {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].known && re.MatchString(ops[i].text) {
			return ops[:i], true
		}
	}
	return ops, false
}

// optionValues returns the values of the options specs in v: the word
// after the option, after "=" (--opt=value), or attached to a one-letter
// option (-oFILE); a spec ending in "=" takes the rest of every word that
// starts with it (dd of=FILE).
func (a *analyzer) optionValues(specs []string, v argView) []word {
	var out []word
	for _, s := range specs {
		if prefix, ok := strings.CutSuffix(s, "="); ok && !strings.HasPrefix(prefix, "-") {
			for _, w := range v.words {
				if rest, ok := strings.CutPrefix(w.text, s); ok && w.known {
					out = append(out, word{text: rest, known: true})
				}
			}
		}
	}
	for _, i := range v.options {
		if spec := matchingSpec(specs, v.words[i].text); spec != "" {
			t := v.words[i].text
			if len(spec) > 2 && !strings.HasPrefix(spec, "--") && strings.HasPrefix(t, spec+"=") {
				// -chdir=DIR: a single-dash long option with its value
				out = append(out, word{text: t[len(spec)+1:], known: v.words[i].known})
				continue
			}
			j := i
			if val, ok := optionArgument(v.words, &j, spec); ok {
				out = append(out, val)
			}
		}
	}
	return out
}

// argsView is one command's arguments split into options and operands,
// kept while the rules of its program are matched against it.
type argsView struct {
	program string
	args    []word
	v       argView
	ops     []word
}

// view splits args for program, reusing the split of the same arguments
// when cache is set: a program's rules all look at the same words. The
// operands returned are shared and must not be changed in place.
func (a *analyzer) view(program string, args []word, cache bool) (argView, []word) {
	if c := a.lastView; cache && c != nil && c.program == program && len(c.args) == len(args) &&
		(len(args) == 0 || &c.args[0] == &args[0]) {
		return c.v, c.ops
	}
	v := viewArgs(args, a.r.optionsWithValue(program))
	ops := v.operands()
	if cache {
		a.lastView = &argsView{program: program, args: args, v: v, ops: ops}
	}
	return v, ops
}

// anyUnknown reports whether some word is not known statically.
func anyUnknown(words []word) bool {
	for _, w := range words {
		if !w.known {
			return true
		}
	}
	return false
}

// matchSub matches the leading operands against one of the subcommand
// alternatives ("stash drop"); it returns how many operands it used.
func matchSub(subs [][]string, ops []word) (int, matchResult) {
	best := matchNo
	n := 0
	for _, parts := range subs {
		if len(parts) > len(ops) {
			continue
		}
		res := matchYes
		for i, p := range parts {
			switch {
			case !ops[i].known:
				res = matchMaybe
			case !subPartMatches(p, ops[i].text):
				res = matchNo
			}
			if res == matchNo {
				break
			}
		}
		if res > best {
			best, n = res, len(parts)
		}
	}
	return n, best
}

// subPartMatches reports whether one part of a rule's Sub matches a word:
// "*" matches any word, a part with glob characters or "|" is a list of
// path.Match patterns, anything else is the word itself.
func subPartMatches(part, word string) bool {
	if part == "*" || part == word {
		return true
	}
	if !strings.ContainsAny(part, "*?[|") {
		return false
	}
	for _, alt := range strings.Split(part, "|") {
		if ok, err := path.Match(alt, word); ok || err != nil {
			return true // a malformed pattern fails closed: it matches
		}
	}
	return false
}

// anyMatch reports whether one of words matches a glob or a named set.
func (a *analyzer) anyMatch(globs []*glob.Pattern, sets []string, words []word) bool {
	for _, w := range words {
		for _, g := range globs {
			if g.Match(w.text) {
				return true
			}
		}
		for _, s := range sets {
			if a.inSet(s, w) {
				return true
			}
		}
	}
	return false
}

// builtinSet reports whether name is a set computed here rather than
// listed in rules.json.
func builtinSet(name string) bool {
	switch name {
	case "catastrophic", "outside-workspace", "protected", "elsewhere", "elsewhere-code", "mount-elsewhere", "credential-source", "stdin", "kube-secret-type", "kube-data-output":
		return true
	}
	return false
}

// inSet reports whether w belongs to the named set.
func (a *analyzer) inSet(set string, w word) bool {
	switch set {
	case "catastrophic":
		return a.catastrophic(w)
	case "outside-workspace":
		return a.outsideWorkspace(w)
	case "elsewhere":
		return a.elsewhere(w)
	case "elsewhere-code":
		return a.foreign(w)
	case "mount-elsewhere":
		return a.elsewhere(mountSource(w))
	case "credential-source":
		return a.credentialSource(w)
	case "stdin":
		return w.known && stdinNames.has(w.text)
	case "kube-secret-type":
		return namesSecretType(w.text)
	case "kube-data-output":
		return w.known && !kubeNameOutputs.has(strings.ToLower(strings.TrimPrefix(w.text, "=")))
	case "protected":
		if !w.pathKnown() {
			return false
		}
		_, ok := a.protectedPath(w.text)
		return ok
	}
	if set == "system" && a.pathIn("temporary", a.normPath(w.text)) {
		return false // /private/var/folders/…: temporary, though below /private/var
	}
	for _, f := range a.pathForms(w.text) {
		if a.pathIn(set, f) {
			return true // on disk or as written: the most sensitive name wins
		}
	}
	return false
}

// pathIn matches p against the named glob set.
func (a *analyzer) pathIn(set, p string) bool {
	ps := a.r.pathSets.get(set)
	if ps == nil || !ps.mayMatch(p) {
		return false
	}
	globs, err := ps.compiled()
	if err != nil {
		return true // a broken set fails closed: everything is in it
	}
	for _, g := range globs {
		if g.Match(p) {
			return true
		}
	}
	return false
}

// normPath writes p the way the path sets are written: absolute, resolved
// on disk, with ~ for a home directory (see homeForm). A path that cannot
// be resolved is returned as written, so that the sets' **/ patterns
// still see its name.
func (a *analyzer) normPath(p string) string {
	if p == "" || strings.HasPrefix(p, unknownShape) {
		return p
	}
	abs := a.resolve(p)
	if abs == "" {
		return p
	}
	return a.homeForm(abs)
}

// catastrophic reports whether a recursive delete of w wipes out a home,
// the system or the whole current directory.
func (a *analyzer) catastrophic(w word) bool {
	t := w.text
	// An expansion followed by a slash and nothing specific: if it is
	// empty, the target is / (the Steam bug). A bare "$DIR" is not: empty,
	// it deletes nothing.
	switch t {
	case unknownShape + "/", unknownShape + "/*", unknownShape + "/.*":
		return true
	}
	if strings.HasPrefix(t, unknownShape) || t == "" {
		return false
	}
	if strings.HasPrefix(t, "~") && !w.tilde {
		t = "./" + t // a quoted ~ is a directory named ~
	}
	if w.tilde && !strings.HasPrefix(t, "~/") && t != "~" {
		return true // ~user: another user's home
	}
	if w.glob || !strings.ContainsAny(t, "*?[") {
		switch t {
		case "*", ".*", ".", "./", "./*", "..", "../", "../*", "./.*", "*/", ".[!.]*", "..?*":
			return true
		}
	} else if !w.glob {
		t = strings.NewReplacer("*", "_", "?", "_", "[", "_").Replace(t) // quoted: plain names
	}
	p := a.normPath(t)
	switch p {
	case "/", "/*", "/.*", "~", "~/", "~/*", "~/.*":
		return true
	}
	w.text = t
	if abs := a.resolve(t); abs != "" && a.scratch(abs) {
		return false // scratch below a temporary directory, even one inside /private/var
	}
	if a.pathIn("system", p) {
		return true
	}
	// The workspace itself or anything above it.
	if abs := a.resolve(strings.TrimSuffix(strings.TrimSuffix(t, "*"), "/")); abs != "" && a.realWorkspace() != "" {
		if ws := a.realWorkspace(); abs == ws || strings.HasPrefix(ws, abs+"/") || abs == "/" {
			return true
		}
	}
	return a.outsideWorkspace(w)
}

// elsewhere reports whether w names a path outside the workspace, the
// temporary directories and the harmless devices (/dev/null): where an
// option that writes, mounts or loads something reaches beyond the project.
func (a *analyzer) elsewhere(w word) bool {
	return a.outsideWorkspace(w) && !a.pathIn("harmless", a.normPath(w.text))
}

// mountSource returns the host path of a container mount: SRC of
// SRC:DST[:opts] (docker -v), or source=/src= of type=bind,… (--mount).
// A named volume (no slash) is no path: it returns an empty word.
func mountSource(w word) word {
	t := w.text
	if strings.Contains(t, "=") {
		for _, f := range strings.Split(t, ",") {
			k, val, _ := strings.Cut(f, "=")
			if k == "source" || k == "src" {
				t = val
				break
			}
		}
		if t == w.text {
			return word{}
		}
	} else if i := strings.IndexByte(t, ':'); i >= 0 {
		t = t[:i]
	}
	if !strings.ContainsRune(t, '/') && t != "~" && t != "." && t != ".." {
		return word{}
	}
	return word{text: t, known: w.known}
}

// outsideWorkspace reports whether w names a path outside the workspace
// and the temporary directories.
func (a *analyzer) outsideWorkspace(w word) bool {
	t := w.text
	if strings.HasPrefix(t, unknownShape) || t == "" {
		return false
	}
	abs := a.resolve(t)
	if abs == "" {
		return false
	}
	return !a.insideWorkspace(abs) && !a.scratch(abs)
}

// insideWorkspace reports whether p lies in the workspace (the directory
// the command was started in).
func (a *analyzer) insideWorkspace(p string) bool {
	abs := a.resolve(p)
	ws := a.realWorkspace()
	if abs == "" || ws == "" {
		return false
	}
	return abs == ws || strings.HasPrefix(abs, ws+"/")
}

// protectedPath reports whether writing p is dangerous, and why.
func (a *analyzer) protectedPath(p string) (string, bool) {
	n := a.normPath(p)
	// The home form (~/…) matches the start-up files of any home; the
	// absolute form matches the system set's /root and /home/*.
	abs := a.resolve(p)
	if abs == "" {
		abs = n
	}
	if a.pathIn("harmless", n) || a.pathIn("harmless", abs) {
		return "", false // what is written, on disk: /dev/null
	}
	// A file is as sensitive as the most sensitive name it has — on disk
	// or as written, absolute or in a home — wherever it lies: a start-up
	// file is one in a home under /tmp too. Only the system and device
	// sets give way to a temporary directory inside them
	// (/private/var/folders, /dev/shm).
	temporary := a.pathIn("temporary", abs)
	forms := append(a.pathForms(p), a.absForms(p)...)
	// The administrator's reason first: it is the one to show.
	for _, pp := range a.managedProtected {
		for _, f := range forms {
			if f == pp || strings.HasPrefix(f, strings.TrimSuffix(pp, "/")+"/") {
				return "writes to " + pp + ", which the managed policy protects", true
			}
		}
	}
	for _, set := range [...]struct{ name, why string }{
		{"network-devices", "opens a network connection, as reverse shells do"},
		{"devices", "writes to a disk device"},
		{"self", "changes execgate's own configuration or program"},
		{"persistence", "changes a start-up, login or scheduled-job file (persistence)"},
		{"system", "writes to a system path"},
	} {
		if temporary && (set.name == "devices" || set.name == "system") {
			continue
		}
		for _, f := range forms {
			if a.pathIn(set.name, f) {
				return set.why, true
			}
		}
	}
	for _, pp := range a.protected {
		if n == a.normPath(pp) {
			return "changes execgate's own configuration or program", true
		}
	}
	return "", false
}

// credentialArg returns the first argument of program that names a
// credential file or directory.
func (a *analyzer) credentialArg(program string, args []word) string {
	info := a.r.Programs.get(program)
	patternOpts := info.PatternOptions
	recursive := recursiveReader(program, args)
	pattern := patternOperand(info, args)
	for i, w := range args {
		if i > 0 && args[i-1].known && matchesAny(patternOpts, args[i-1].text) {
			continue
		}
		if i == pattern {
			continue // grep id_rsa src/: a regular expression, not a file
		}
		t := w.text
		for _, c := range pathCandidates(w) {
			if a.pathInAny("credentials", c) {
				return c
			}
			if w.glob {
				if m := a.globReads(w, c); m != "" {
					return m // cat ~/.s*/id*: the glob reaches a credential file
				}
			}
			if recursive && !isOption(c) && a.holdsCredentials(c) {
				return c + ", which holds credentials" // grep -r TOKEN ~
			}
			if a.cwd == "" && c == t && !isOption(c) && !strings.HasPrefix(c, "/") && !strings.HasPrefix(c, "~") && !strings.HasPrefix(c, unknownShape) {
				// cd "$dir" && cat .pgpass: which file this is cannot be known.
				return c + ", in a directory execgate cannot follow"
			}
		}
	}
	return ""
}

// pathCandidates are the paths an argument may name: the word, the value
// of --file=PATH, -dPATH, @PATH (curl), file://PATH, host:path (scp,
// rsync) and rev:path (git show). A quoted ~ is not the home directory.
func pathCandidates(w word) []string {
	t := w.text
	candidates := []string{t}
	if _, v, ok := strings.Cut(t, "="); ok {
		candidates = append(candidates, v)
	}
	if strings.HasPrefix(t, "@") {
		candidates = append(candidates, t[1:])
	}
	if rest, ok := strings.CutPrefix(t, "file://"); ok {
		// file:///etc/shadow, file://localhost/etc/shadow
		rest = strings.TrimPrefix(rest, "localhost")
		candidates = append(candidates, rest)
	}
	if i := strings.Index(t, "=@"); i >= 0 {
		candidates = append(candidates, t[i+2:])
	}
	if isOption(t) && !strings.HasPrefix(t, "--") {
		if letters := clusterLetters(t); letters != "" && len(letters)+1 < len(t) {
			candidates = append(candidates, t[len(letters)+1:]) // -rf/proc/self/environ
		}
	}
	if i := strings.LastIndexByte(t, ':'); i >= 0 && !strings.Contains(t, "://") {
		candidates = append(candidates, t[i+1:])
	}
	out := candidates[:0]
	for _, c := range candidates {
		if c == "" || strings.HasPrefix(c, "~") && !w.tilde && c == t {
			continue
		}
		out = append(out, c)
	}
	return out
}

// globReaches reports whether the shell glob pattern p (already in the
// ~ form of normPath) matches one of the typical credential paths.
func (a *analyzer) globReaches(p string) bool {
	g, err := glob.Compile(p, '/')
	if err != nil {
		return true // a pattern we cannot read could reach anything
	}
	for _, sample := range a.r.Paths.get("credential-samples") {
		if g.Match(sample) {
			return true
		}
	}
	return false
}

// decodes reports whether the command turns encoded input into data.
func (a *analyzer) decodes(name string, words []word) bool {
	for _, ru := range a.r.Decoders {
		if contains(ru.Programs, name) && a.matchRule(ru, name, words) == matchYes {
			return true
		}
	}
	return false
}

// flows sets what the segment does with stdin and stdout, for the
// pipeline checks, and flags direct credential uploads.
func (a *analyzer) flows(seg *Segment, name string, words []word) {
	if a.r.network.has(name) && a.networkUse(name, words) {
		seg.flags.fetches = true
		seg.flags.sendsStdin = true
		if !seg.networkQuery {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s talks to the network", name), Rule: "network", Coverable: true})
		}
		if c := a.credentialArg(name, withoutKeys(words[1:], a.r.Programs.get(name).KeyOptions)); c != "" {
			seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("sends the credential file %s to the network", c), Rule: "credentials-to-network"})
		}
		for _, w := range words[1:] {
			if w.leaks {
				seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("sends credentials or the environment to the network (%s)", quoteWord(w.shown())), Rule: "credentials-to-network"})
			}
			for _, p := range w.params {
				if a.environmentValue(p) {
					seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("sends the value of $%s, which may be a secret, to the network", p), Rule: "environment-to-network"})
				}
			}
		}
	}
	a.linkReach(seg, name, words[1:])
	a.ciOutput(seg, name, words)
	if a.decodes(name, words) {
		seg.flags.decodes = true
	}
	a.recordDownloads(name, words)
	seg.flags.packs = seg.flags.packs || a.packsToStdout(name, words)
	a.printsSecretVariable(seg, name, words)
	if a.r.envPrinters.has(name) && len(words) == 1 {
		seg.flags.printsEnv = true
		seg.add(Reason{Risk: NeedsReview, Text: "prints the environment, which may hold secrets", Rule: "prints-environment"})
	}
	if !seg.flags.readsCreds && !seg.credsModelled {
		if spec := a.r.Safe.get(name); spec == nil || !spec.Data {
			if c := a.credentialArg(name, words[1:]); c != "" {
				seg.flags.readsCreds = true
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("reads credentials (%s)%s", c, environNote(c)), Rule: "reads-credentials"})
			}
		}
	}
}

// printsSecretStore makes reading a file of the secret-stores set with a
// program that prints what it reads (cat, grep, base64 — not ls or stat,
// which show names and sizes; not tools with subcommands, judged by the
// subcommand's own model) dangerous: what it prints goes to the agent,
// and from there to the model provider, so the secret leaves the machine.
func (a *analyzer) printsSecretStore(seg *Segment, label string, spec *safeSpec, c string) {
	if spec.Inert || spec.Sub != nil || strings.HasPrefix(c, globRead) || !a.pathInAny("secret-stores", c) {
		return
	}
	seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("%s prints the secret in %s to the agent, and so off the machine", label, c), Rule: "prints-secret",
		Alternative: "check that the file exists with ls -l or test -s; never print its contents"})
}

// secretName matches the names of variables that hold secrets by
// convention (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD, DB_PASS,
// MYSQL_PWD, GPG_PASSPHRASE, RAILS_MASTER_KEY, Gradle's signingKey,
// AZURE_STORAGE_KEY and _CONNECTION_STRING, GitLab's CI_JOB_JWT,
// SLACK_WEBHOOK_URL; keys named for what they let one do: Tailscale's
// TS_AUTHKEY, Datadog's DD_APP_KEY, Laravel's APP_KEY, ALGOLIA_ADMIN_KEY,
// CYPRESS_RECORD_KEY, DEPLOY_KEY, SSH_KEY, GCP_SA_KEY, SOPS_AGE_KEY,
// SUPABASE_SERVICE_ROLE_KEY, Gradle's signingInMemoryKey; a CLI's
// session: Bitwarden's BW_SESSION, 1Password's OP_SESSION_x, fastlane's
// FASTLANE_SESSION; …).
var secretName = &lazyRegexp{expr: `(?i)(TOKEN|SECRET|PASSW|(^|_)PASS($|_)|(^|_)PWD$|PASSPHRASE|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|` +
	`(MASTER|SIGNING|ENCRYPTION|STORAGE|ACCOUNT)_?KEY|CONN(ECTION)?_?STR|CREDENTIAL|(^|_)AUTH($|_)|SESSION_?KEY|(^|_)PAT($|_)|(^|_)JWT($|_)|WEBHOOK|` +
	`AUTH_?KEY|IN_?MEMORY_?KEY|(^|_)(APP|ADMIN|APPLICATION|RECORD|DEPLOY|SSH|SA|AGE|SERVICE_ROLE)_?KEY$|(^|_)SESSION$|^OP_SESSION_)`}

// printsSecretVariable flags printing a variable whose name says it holds a
// secret: echo "$AWS_SECRET_ACCESS_KEY", printf '%s' "$TOKEN", printenv
// GITHUB_TOKEN. The pipeline check lowers it when the output feeds another
// program (echo "$TOKEN" | docker login --password-stdin) rather than the
// agent.
func (a *analyzer) printsSecretVariable(seg *Segment, name string, words []word) {
	spec := a.r.Safe.get(name)
	printer := spec != nil && spec.Data && (name == "echo" || name == "printf")
	if !printer && !a.r.envPrinters.has(name) {
		return
	}
	for _, w := range words[1:] {
		names := w.params
		if a.r.envPrinters.has(name) && w.known && !isOption(w.text) {
			names = append(names, w.text) // printenv NAME
		}
		for _, p := range names {
			if secretName.get().MatchString(p) && !numericParams.has(p) && !publicParams.has(p) && !publicByConvention(p) {
				seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("prints $%s, a secret by its name, to the agent, and so off the machine", p), Rule: "prints-secret",
					Alternative: fmt.Sprintf("test -n \"$%s\" && echo set", p)})
				return
			}
		}
	}
}

// downloadOutputs names, per downloader, the options whose value is the
// file it saves, and whether without them it saves under the URL's last
// path segment (wget, curl -O).
var downloadOutputs = table[downloadOutput]{
	{"aria2c", downloadOutput{options: []string{"-o", "--out"}, byDefault: true}},
	{"axel", downloadOutput{options: []string{"-o", "--output"}, byDefault: true}},
	{"curl", downloadOutput{options: []string{"-o", "--output"}, remote: []string{"-O", "--remote-name", "--remote-name-all"}}},
	{"fetch", downloadOutput{options: []string{"-o"}, byDefault: true}},
	{"http", downloadOutput{options: []string{"-o", "--output"}}},
	{"wget", downloadOutput{options: []string{"-O", "--output-document"}, byDefault: true}},
	{"wget2", downloadOutput{options: []string{"-O", "--output-document"}, byDefault: true}},
	{"xh", downloadOutput{options: []string{"-o", "--output"}}},
}

// downloadOutput is how one downloader names the file it saves.
type downloadOutput struct {
	options   []string
	remote    []string // options that save under the URL's own name
	byDefault bool
}

// packsToStdout reports whether the command writes an archive of local
// files to its standard output: tar -c without -f or with -f -, zip -r -,
// git archive without -o, git bundle create -. Piped to the network, that
// is the whole tree leaving the machine.
func (a *analyzer) packsToStdout(name string, words []word) bool {
	v, ops := a.view(name, words[1:], true)
	switch name {
	case "tar", "gtar", "bsdtar":
		creates := v.has("-c", "--create") || len(words) > 1 && words[1].known && !isOption(words[1].text) && strings.Contains(words[1].text, "c")
		if !creates {
			return false
		}
		files := a.optionValues([]string{"-f", "--file"}, v)
		bundledF := len(words) > 1 && words[1].known && !isOption(words[1].text) && strings.Contains(words[1].text, "f")
		return len(files) == 0 && !bundledF || len(files) > 0 && files[0].text == "-" || bundledF && len(words) > 2 && words[2].text == "-"
	case "zip":
		return len(ops) > 0 && ops[0].text == "-"
	case "git":
		if len(ops) > 0 && ops[0].text == "archive" {
			return len(a.optionValues([]string{"-o", "--output"}, v)) == 0
		}
		return len(ops) > 2 && ops[0].text == "bundle" && ops[1].text == "create" && ops[2].text == "-"
	}
	return false
}

// recordDownloads notes the files a downloader saves, so that running one
// later in the program counts as running code from the network.
func (a *analyzer) recordDownloads(name string, words []word) {
	spec, ok := downloadOutputs.lookup(name)
	if !ok {
		return
	}
	v, ops := a.view(name, words[1:], true)
	var files []string
	for _, w := range a.optionValues(spec.options, v) {
		if w.known && w.text != "-" {
			files = append(files, w.text)
		}
	}
	if len(files) == 0 && (spec.byDefault || v.has(spec.remote...)) {
		for _, op := range ops {
			if u, err := url.Parse(op.text); op.known && err == nil && u.Host != "" {
				if base := path.Base(u.Path); base != "." && base != "/" {
					files = append(files, base)
				}
			}
		}
	}
	for _, f := range files {
		if abs := a.resolve(f); abs != "" {
			if a.downloaded == nil {
				a.downloaded = map[string]bool{}
			}
			a.downloaded[abs] = true
		}
	}
}

// runsDownload flags running a file that an earlier downloader in the
// same program saved: curl -o x.sh URL && sh x.sh is curl URL | sh.
func (a *analyzer) runsDownload(seg *Segment, w word) {
	if len(a.downloaded) == 0 || !w.known {
		return
	}
	if abs := a.resolve(w.text); abs != "" && a.downloaded[abs] {
		seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("runs %s, which an earlier command downloaded: code from the network", quoteWord(w.text)), Rule: "runs-download",
			Alternative: "download, read the file, then run it as a separate step"})
	}
}

// withoutKeys drops the options that name a login key, and their values,
// from args.
func withoutKeys(args []word, keyOpts []string) []word {
	if len(keyOpts) == 0 {
		return args
	}
	out := make([]word, 0, len(args))
	for i := 0; i < len(args); i++ {
		if m := matchingSpec(keyOpts, args[i].text); m != "" && args[i].known {
			if args[i].text == m && !strings.HasPrefix(m, "--") {
				i++ // -i KEY: the value is the next word
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// networkUse reports whether this use of a network program talks to the
// network: some programs (openssl) do so only in some subcommands.
func (a *analyzer) networkUse(name string, words []word) bool {
	if info := a.r.Programs.get(name); info.RemoteOperands {
		return a.namesRemoteHost(info, words[1:])
	}
	subs, ok := a.r.NetworkSubcommands.lookup(name)
	if !ok {
		return true
	}
	for _, w := range words[1:] {
		if !w.known {
			return true
		}
		if !isOption(w.text) {
			return contains(subs, w.text)
		}
	}
	return false
}

// environNote explains a /proc/*/environ read.
func environNote(p string) string {
	if strings.HasSuffix(p, "/environ") {
		return ": a process environment, which holds secrets"
	}
	return ""
}

// redirects classifies a statement's redirections by target.
func (a *analyzer) redirects(seg *Segment, s *syntax.Stmt, f frame) {
	for _, r := range s.Redirs {
		if name := redirectVarName(s, r, f.src); name != "" {
			// The shell stores the new descriptor's number in NAME:
			// {PATH}>f makes PATH a number, and the next command is
			// looked up in the workspace's directory of that name.
			target := a.nameref(name)
			a.assigned(target, true)
			a.checkVar(seg, target)
		}
		var target word
		if r.Word != nil {
			target = evalWord(r.Word)
			a.expansions(seg, target, f)
		}
		if r.Hdoc != nil {
			a.expansions(seg, evalWord(r.Hdoc), f)
		}
		a.ciInput(seg, r, target)
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.AppAll,
			syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
			a.writeTarget(seg, target, r.Op.String())
		case syntax.DplOut, syntax.DplIn:
			if target.known && !isFD(target.text) {
				a.writeTarget(seg, target, r.Op.String())
			}
		case syntax.RdrIn:
			if seg.flags.sendsStdin && !a.pathIn("harmless", a.normPath(target.text)) {
				seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("sends the file %s to the network (upload)", target.text), Rule: "uploads-file"})
			}
			if target.known && a.pathIn("network-devices", target.text) {
				seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("reads from a network connection (%s)", target.text), Rule: "dev-tcp"})
			} else if c := a.credentialArg("", []word{target}); c != "" {
				seg.flags.readsCreds = true
				if seg.flags.sendsStdin {
					seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("sends the credential file %s to the network", c), Rule: "credentials-to-network"})
				} else {
					seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("reads credentials (%s)", c), Rule: "reads-credentials"})
				}
			} else if why := a.unprovenRead("", &safeSpec{}, []word{target}); why != "" {
				seg.add(Reason{Risk: NeedsReview, Text: "redirect < " + why, Rule: "reads-private"})
			}
		}
	}
}

// redirectVarName is the variable a {NAME}> or {NAME[SUB]}> redirection
// assigns, "" for none. A subscript with an expansion in it
// ({a[$(cmd)]}>f) the parser reads as a word of the command ending where
// the operator starts; bash still assigns it.
func redirectVarName(s *syntax.Stmt, r *syntax.Redirect, src string) string {
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") && strings.HasSuffix(r.N.Value, "}") {
		name, _, _ := strings.Cut(r.N.Value[1:len(r.N.Value)-1], "[")
		return name
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || r.N != nil {
		return ""
	}
	for _, w := range call.Args {
		if w.End().Offset() != r.OpPos.Offset() {
			continue
		}
		if m := redirectArrayVar.get().FindStringSubmatch(nodeText(src, w)); m != nil {
			return m[1]
		}
	}
	return ""
}

// redirectArrayVar matches bash's {NAME[SUB]} before a redirection.
var redirectArrayVar = &lazyRegexp{expr: `^\{([A-Za-z_][A-Za-z0-9_]*)\[.*\]\}$`}

// what names the writer in a reason: a redirection operator or a program.
func what(op string) string {
	if strings.ContainsAny(op, "<>") {
		return "redirect " + op
	}
	return op
}

// isFD reports whether s is a file descriptor number or "-" (close).
func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// writeTarget classifies a write to target. A write is coverable by a
// wildcard allowlist pattern only inside the workspace (or the temporary
// directories), to a path the analysis can resolve, and not to a file that
// runs code later (a git hook, .envrc, a CI workflow …).
func (a *analyzer) writeTarget(seg *Segment, target word, op string) {
	if why := a.ciControlWrite(target); why != "" {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s %s", what(op), why), Rule: "ci-control-file"})
	}
	if !target.pathKnown() {
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s writes to a dynamic file name, only known at run time: %s", what(op), quoteWord(target.shown())), Rule: "dynamic-redirect"})
		seg.LossUnknown = seg.LossUnknown || lossRedirect(op)
		return
	}
	if lossRedirect(op) && !target.brace {
		a.noteLoss(seg, target, false)
	}
	if target.glob {
		a.globWrite(seg, target, op)
		return
	}
	if target.brace {
		// {~/.bashrc,} names ~/.bashrc: judge every field.
		fields, ok := []word(nil), false
		if target.node != nil {
			fields, ok = braceWords(target.node)
		}
		if !ok {
			seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s writes to a file named by the brace expansion %s (unknown)", what(op), target.text), Rule: "glob-write"})
			return
		}
		for _, fw := range fields {
			if fw.text != "" {
				a.writeTarget(seg, fw, op)
			}
		}
		return
	}
	if why, bad := a.protectedPath(target.text); bad {
		seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("%s %s (%s %s)", what(op), why, op, target.text), Rule: "protected-write"})
		return
	}
	n := a.normPath(target.text)
	if a.pathIn("harmless", n) {
		return
	}
	r := a.lookup(target.text)
	abs := r.Path
	if abs != "" {
		if a.written == nil {
			a.written = map[string]bool{}
		}
		a.written[abs] = true
		seg.Writes = append(seg.Writes, abs)
		if strings.ContainsAny(op, "<>") {
			seg.Redirected = append(seg.Redirected, abs)
		}
	}
	shown := target.text
	if r.ViaLink && abs != "" {
		shown = fmt.Sprintf("%s (a link to %s)", target.text, a.homeForm(abs))
	}
	switch {
	case abs == "":
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s writes to %s, which execgate cannot resolve: %s (unknown)", what(op), target.text, r.Why), Rule: "unknown-directory-write"})
	case a.pathInAny("code-loading", target.text) || a.pathIn("code-loading", abs):
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s writes %s, a file that runs code later (code-loading)", what(op), shown), Rule: "code-loading-write"})
	case !a.insideWorkspace(abs) && !a.scratch(abs):
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s writes to %s, outside the workspace%s", what(op), shown, a.placeNote(abs)), Rule: "outside-workspace-write"})
	default:
		seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s writes to %s", what(op), shown), Rule: "writes-file", Coverable: true})
	}
}

// globWrite classifies a write to a file named by a pattern: bash writes
// to the file the pattern matches (to the pattern as written when none
// does), so every file it expands to is judged, and the write is as bad
// as the worst protected file the pattern could name by bash's rules.
func (a *analyzer) globWrite(seg *Segment, target word, op string) {
	if p, ok := a.globCouldName(target, target.text, "persistence", "self", "credentials", "credential-samples"); ok {
		seg.add(Reason{Risk: Dangerous, Text: fmt.Sprintf("%s writes to the pattern %s, which can name %s: it changes a start-up, login or credential file", what(op), target.text, p), Rule: "protected-write"})
		return
	}
	if fields, exact := a.wordPaths(target, target.text); exact {
		for _, f := range fields {
			a.writeTarget(seg, word{text: f, known: true}, op)
		}
		return
	}
	seg.add(Reason{Risk: NeedsReview, Text: fmt.Sprintf("%s writes to a file named by the pattern %s (unknown)", what(op), target.text), Rule: "glob-write"})
}

// recursiveReader reports whether program reads the files under the
// directories it is given (grep -r, rg, tar c, cp -r, zip -r).
func recursiveReader(program string, args []word) bool {
	has := func(opts ...string) bool {
		for _, w := range args {
			if w.known && matchesAny(opts, w.text) {
				return true
			}
		}
		return false
	}
	switch program {
	case "rg", "ag", "ack", "tar", "rsync":
		return true // recursive by default (tar c, rsync DIR)
	case "grep", "egrep", "fgrep", "zgrep":
		return has("-r", "-R", "--recursive", "--dereference-recursive", "--directories=recurse")
	case "cp", "scp", "zip", "chmod", "chown", "diff", "git":
		return has("-r", "-R", "-a", "--recursive", "--archive")
	}
	return false
}

// kubeNameOutputs are the kubectl output formats that show an object's
// name and a few columns, never its data (kubectl get: the default, -o
// wide, -o name). Every other format — yaml, json, jsonpath,
// go-template, custom-columns and any added later — can print a
// Secret's values.
var kubeNameOutputs = nameSet{
	"",
	"name",
	"wide",
}

// namesSecretType reports whether a kubectl resource operand names the
// Secret type in any spelling: secret, Secrets, secrets.v1, secret/NAME,
// or one element of a list (all,secrets).
func namesSecretType(text string) bool {
	for part := range strings.SplitSeq(strings.ToLower(text), ",") {
		typ, _, _ := strings.Cut(part, "/")
		typ, _, _ = strings.Cut(typ, ".")
		if typ == "secret" || typ == "secrets" {
			return true
		}
	}
	return false
}

// stdinNames are the operands by which a copy program reads its standard
// input instead of a file.
var stdinNames = nameSet{
	"-",
	"/dev/fd/0",
	"/dev/stdin",
	"/proc/self/fd/0",
}

// credentialSource reports whether w, a file or directory that a program
// sends elsewhere, is a credential file, a glob that reaches one, or a
// directory that holds one (aws s3 sync ~ s3://b). A relative name after
// a cd the analysis could not follow is left to the program's other
// reasons: taking every such name for the home directory would refuse
// ordinary uploads.
func (a *analyzer) credentialSource(w word) bool {
	if !w.pathKnown() || stdinNames.has(w.text) || strings.HasPrefix(w.text, "~") && !w.tilde && w.known {
		return false
	}
	n := a.normPath(w.text)
	if a.pathIn("credentials", n) || w.glob && a.globReaches(n) {
		return true
	}
	if a.cwd == "" && !strings.HasPrefix(n, "/") && !strings.HasPrefix(n, "~") {
		return false
	}
	return a.holdsCredentials(w.text)
}

// holdsCredentials reports whether the directory p contains one of the
// typical credential files (p is ~, /, /root, ~/.config …).
func (a *analyzer) holdsCredentials(p string) bool {
	n := strings.TrimSuffix(a.normPath(p), "/")
	abs := a.resolve(p)
	if abs == "" {
		return true // relative to a directory the analysis cannot follow: it may be ~
	}
	if abs == "/" || a.home != "" && strings.HasPrefix(a.home, abs+"/") {
		return true // / and every directory above the home: /home, /Users
	}
	switch abs {
	case "/home", "/Users", "/root":
		return true // every home
	}
	for _, sample := range a.r.Paths.get("credential-samples") {
		if strings.HasPrefix(sample, n+"/") || strings.HasPrefix(sample, abs+"/") {
			return true
		}
	}
	return false
}

// publicParams are parameters whose values are no secret.
var publicParams = nameSet{
	"*",
	"-",
	"0",
	"@",
	"BASH_VERSION",
	"EUID",
	"HOME",
	"HOSTNAME",
	"HOSTTYPE",
	"LOGNAME",
	"MACHTYPE",
	"OLDPWD",
	"OSTYPE",
	"PATH",
	"PWD",
	"SHELL",
	"UID",
	"USER",
	"_",
}

// environmentValue reports whether the parameter p comes from the
// environment (the program never assigned it) and may hold a secret.
func (a *analyzer) environmentValue(p string) bool {
	if numericParams.has(p) || publicParams.has(p) || harmlessVar(p) || isDigits(p) {
		return false
	}
	return !a.vars.numeric[p] && !a.vars.poisoned[p]
}

// onlyAllows reports whether the option word arg is made only of options
// in only: a cluster passes when every letter in it is allowed on its own
// (git tag -ld is -l and -d, and -d deletes; set -ek is -e and -k).
func onlyAllows(only []string, arg string) bool {
	if !matchesAny(only, arg) {
		return false
	}
	if strings.HasPrefix(arg, "--") || len(arg) < 3 || arg[0] != '-' && arg[0] != '+' {
		return true
	}
	for _, o := range only {
		if o == arg || strings.HasPrefix(arg, o+"=") {
			return true
		}
		if p, ok := strings.CutSuffix(o, "*"); ok && len(p) == 2 && strings.HasPrefix(arg, p) && isDigits(arg[2:]) {
			return true // -n5
		}
	}
	letters := clusterLetters(arg)
	if len(letters)+1 != len(arg) {
		return false // a value attached to a letter: which letter takes it is not known here
	}
	for i := 0; i < len(letters); i++ {
		if !contains(only, string(arg[0])+letters[i:i+1]) {
			return false
		}
	}
	return true
}

// harmlessSetFlags are the single letters of the harmless set -o options:
// -e -u -x -v -f -C -n -E -T, and -m and -b (job control, notification).
const harmlessSetFlags = "euxvfCnETmb"

// harmlessSetOption are the set -o options that only make the shell stop
// on errors, trace, or refuse to clobber files.
var harmlessSetOption = nameSet{
	"errexit",
	"errtrace",
	"functrace",
	"noclobber",
	"noexec",
	"noglob",
	"nounset",
	"pipefail",
	"verbose",
	"xtrace",
}

// awsUnsafe checks the words of an aws command the model calls read-only
// for what its documentation says can read local files or write one: a
// value file://… or fileb://… (a parameter read from a local file, and sent
// to the service), and an operand that is not the value of the option
// before it, which is how the streaming commands name the file they write
// (aws s3api get-object … OUTFILE). Every other aws parameter is an option
// with its value.
func awsUnsafe(v argView) string {
	afterOption := false
	for i, w := range v.words {
		if !w.known {
			return fmt.Sprintf("is given %s, only known at run time", w.text)
		}
		t := w.text
		if strings.Contains(t, "file://") || strings.Contains(t, "fileb://") {
			return fmt.Sprintf("reads a local file as a parameter (%s)", t)
		}
		if isOption(t) {
			afterOption = !strings.Contains(t, "=")
			continue
		}
		if !afterOption && slices.Contains(v.positional, i) {
			return fmt.Sprintf("takes an operand %s that is not an option's value (an output file)", t)
		}
		afterOption = false
	}
	return ""
}

// inspectTemplateSafe matches the Go templates docker inspect --format
// may print without showing a container's environment: field paths only,
// none through .Config (where Env lives), and no bare "." or "$" that
// would print the whole object.
var inspectTemplateSafe = &lazyRegexp{expr: `^([^{}]|\{\{\s*(json\s+)?(\.[A-Za-z][A-Za-z0-9_]*)+\s*\}\})*$`}

// dockerInspectUnsafe says why docker inspect may print secrets: without a
// --format it prints every field, a container's environment (Config.Env,
// where passwords are commonly passed) included.
func dockerInspectUnsafe(v argView) string {
	i := v.find("-f", "--format")
	if i < 0 {
		return "prints every field, the container's environment variables included, which often hold passwords (give --format '{{.State.Status}}')"
	}
	tmpl, ok := optionSpecValue(v.words, i, matchingSpec([]string{"-f", "--format"}, v.words[i].text))
	if !ok || !tmpl.known || !inspectTemplateSafe.get().MatchString(tmpl.text) || strings.Contains(tmpl.text, ".Config") || strings.Contains(tmpl.text, ".Env") {
		return fmt.Sprintf("--format %s may print the container's environment variables, which often hold passwords", tmpl.text)
	}
	return ""
}

// mayBeOptionValue reports whether the operand at args[idx], taken for a
// subcommand, directly follows an option that might take it as its value:
// one written without "=" that the program's table lists neither as a flag
// nor as taking a value (whose values viewArgs already skipped).
func (a *analyzer) mayBeOptionValue(program string, args []word, idx int) (string, bool) {
	if idx == 0 {
		return "", false
	}
	prev := args[idx-1]
	if !prev.known || !isOption(prev.text) || prev.text == "--" || strings.Contains(prev.text, "=") {
		return "", false
	}
	info := a.r.Programs.get(program)
	if matchesAny(info.Flags, prev.text) || takesValue(prev.text, info.OptionsWithValue) {
		return "", false
	}
	return prev.text, true
}

// namesRemoteHost reports whether a copy program (rsync, scp) is given a
// remote location: an operand HOST:PATH or USER@HOST:PATH (a colon before
// any slash), HOST::MODULE or a URL, or the daemon mode that listens. A
// word only known at run time may be any of these.
func (a *analyzer) namesRemoteHost(info programInfo, args []word) bool {
	v := viewArgs(args, info.OptionsWithValue)
	if v.has("--daemon") {
		return true
	}
	for _, o := range v.operands() {
		if !o.known {
			return true
		}
		t := o.text
		colon := strings.IndexByte(t, ':')
		if colon > 0 && !strings.Contains(t[:colon], "/") {
			return true // host:path, host::module, rsync://host/, [user@]host:
		}
	}
	return false
}

// releaseTrackOnly reports whether the words a model has consumed after the
// program are at most a release track (gcloud beta …), which leaves the
// next word in first position.
func releaseTrackOnly(consumed string) bool {
	switch strings.TrimSpace(consumed) {
	case "", "alpha", "beta", "preview":
		return true
	}
	return false
}
