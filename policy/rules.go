package policy

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/gobwas/glob"
)

// The rule table lives in rules.json: wrappers, safe binaries, dangerous
// and review patterns, paths and inline-code rules, each with examples.
// rules_gen.go is its compiled-in copy (see TestGeneratedRules), so that no
// process pays for decoding it; patterns are compiled on first use.

// ruleFile is the shape of rules.json.
type ruleFile struct {
	// Programs holds per-program facts the matchers need, such as which
	// options take a value (so that `git -C dir push` finds "push").
	Programs table[programInfo] `json:"programs"`
	// Wrappers run another command given in their arguments.
	Wrappers table[*wrapperSpec] `json:"wrappers"`
	// Shells run a script given with -c, in a file or on stdin.
	Shells []string `json:"shells"`
	// Interpreters run code given inline, in a file or on stdin.
	Interpreters table[*interpSpec] `json:"interpreters"`
	// Safe lists read-only programs and the arguments that stop them
	// being read-only.
	Safe table[*safeSpec] `json:"safe"`
	// Rules are the needs-review and dangerous patterns.
	Rules []*rule `json:"rules"`
	// Code rules map inline interpreter code to the shell command it is
	// equivalent to, which is then classified.
	Code []*codeRule `json:"code"`
	// Assignments flags environment variables that change what programs
	// load or run.
	Assignments assignmentRules `json:"assignments"`
	// Paths are the named path sets the rules refer to as @name.
	Paths table[[]string] `json:"paths"`
	// Network programs talk to other hosts; Decoders turn data into
	// something else (often code).
	Network []string `json:"network"`
	// NetworkSubcommands limits a network program's network use to
	// these subcommands (openssl s_client, not openssl x509).
	NetworkSubcommands table[[]string] `json:"networkSubcommands"`
	Decoders           []*rule         `json:"decoders"`
	// Suggest drives "allow always" patterns: tools whose first operand
	// is a subcommand (with the subcommands that name something to run
	// as their own first operand), and runners like npx.
	Suggest suggestRules `json:"suggest"`
	// EnvPrinters print the environment.
	EnvPrinters []string `json:"envPrinters"`
}

// assignmentRules name the variables that change what programs load or
// run, exactly or by prefix.
type assignmentRules struct {
	Names    []string `json:"names"`
	Prefixes []string `json:"prefixes"`
}

// suggestRules are the data behind Engine.Suggest.
type suggestRules struct {
	Subcommands table[[]string] `json:"subcommands"`
	Runners     []string        `json:"runners"`
	// Targets are programs ("rm") and subcommands ("npm install") whose
	// operands name what they act on: the files they delete or create, the
	// hosts they reach, the packages they install, the processes they
	// signal, the images they run. A wildcard over those operands would
	// reach what the approved command did not, so "allow always" offers
	// them only the exact command.
	Targets []string `json:"targets"`
	// OptionsFirst are programs whose own options come before their
	// subcommand (git -c, git -C): a rule of theirs that names no
	// subcommand is about those, which a `PROGRAM SUB **` pattern cannot
	// reach. Every other program's options may follow its operands.
	OptionsFirst []string `json:"optionsFirst"`
}

// programInfo describes a program's option syntax.
type programInfo struct {
	// OptionsWithValue take the next word as their value (unless written
	// --opt=value or, for a single letter, -ovalue).
	OptionsWithValue []string `json:"optionsWithValue"`
	// PatternOptions take a pattern, not a file (find -name, grep -e):
	// their values are not paths read.
	PatternOptions []string `json:"patternOptions"`
	// PatternOperand: the first operand is a pattern, not a file (grep
	// PATTERN FILE…), unless a pattern or pattern file is given by an
	// option (-e, -f).
	PatternOperand bool `json:"patternOperand"`
	// KeyOptions take a key or identity the program uses to log in (ssh
	// -i): read, never sent, so not an upload of the file.
	KeyOptions []string `json:"keyOptions"`
	// Flags are options known to take no value. A read-only model takes
	// the word after an option for a subcommand only when the option is
	// one of these (or of OptionsWithValue, whose value it skips): after
	// any other option the word may be that option's value, and the
	// subcommand something else (gcloud --project list … delete).
	Flags []string `json:"flags"`
	// RemoteOperands marks a network program that talks to the network
	// only when an operand names a remote host (rsync HOST:PATH, scp
	// USER@HOST:PATH, rsync://HOST/): copies between local paths do not.
	RemoteOperands bool `json:"remoteOperands"`
}

// wrapperSpec describes a program that runs another program.
type wrapperSpec struct {
	Flags            []string `json:"flags"`            // options without a value
	OptionsWithValue []string `json:"optionsWithValue"` // options that take one
	// OptionalValue are GNU long options whose value is optional, and so
	// only ever attached (--block-signal[=SIG]): the next word is not
	// theirs (env --block-signal rm ls runs rm).
	OptionalValue []string `json:"optionalValue"`
	// ShellOptions take a shell script as their value (su -c, flock -c).
	ShellOptions []string `json:"shellOptions"`
	// SplitOptions take a string that is split into the command (env -S).
	SplitOptions []string `json:"splitOptions"`
	// NoCommandOptions mean there is no wrapped command (taskset -p).
	NoCommandOptions []string `json:"noCommandOptions"`
	Assignments      bool     `json:"assignments"` // NAME=value words before the command (env)
	Positionals      int      `json:"positionals"` // words before the command (timeout DURATION)
	Applet           bool     `json:"applet"`      // the next word names the program (busybox)
	StdinArgs        bool     `json:"stdinArgs"`   // arguments come from stdin (xargs)
	ReplaceOptions   []string `json:"replaceOptions"`
	// AttachedReplaceOptions take their value only attached (xargs -i{}).
	AttachedReplaceOptions []string `json:"attachedReplaceOptions"`
	DefaultCommand         []string `json:"defaultCommand"`
	JoinAsShell            bool     `json:"joinAsShell"`   // the words are joined and run by sh -c (watch)
	ExecOptions            []string `json:"execOptions"`   // options that turn JoinAsShell off (watch -x)
	OutputOptions          []string `json:"outputOptions"` // options whose value is a file written (strace -o)
	ReadOptions            []string `json:"readOptions"`   // options whose value is a file read (xargs -a)
	EnvOptions             []string `json:"envOptions"`    // options whose value names a variable set for the command (xargs --process-slot-var)
	Lookup                 []string `json:"lookup"`        // options that only look the command up (command -v)
	Risk                   string   `json:"risk"`          // risk of using the wrapper at all
	Reason                 string   `json:"reason"`
	// Sub makes the program a wrapper only in these subcommands (uv
	// run, poetry run): the words before one are the program's own
	// options, and any other use is the program itself, judged by its
	// rules and model. In a subcommand, the program's rules are applied
	// as well (uv run --with PKG fetches code).
	Sub []string `json:"sub"`
	// Runner marks a wrapper that runs its command in the workspace's own
	// environment, whose programs come first (uv run finds .venv/bin/NAME
	// before PATH): the workspace-runner class, beside the command's own
	// judgement (uv run rm -rf ~ stays as dangerous as rm -rf ~).
	Runner bool `json:"runner"`
	// DirOptions name the project a runner wrapper runs in (uv run
	// --directory DIR), or a path it takes code, settings or environment
	// from (the interpreter of --python, an editable package, a wheel
	// directory, an env file, a config file, a cache): one outside the
	// workspace is not the workspace's own code.
	DirOptions []string `json:"dirOptions"`
	// Bare is what the wrapper does without a command: "" (nothing),
	// "prints-env" or "shell" (an interactive shell).
	Bare     string   `json:"bare"`
	Match    []string `json:"match"`
	NotMatch []string `json:"notMatch"`
}

// interpSpec describes an interpreter.
type interpSpec struct {
	Language string `json:"language"`
	// Inline options take code as their value (python -c, node -e).
	Inline []string `json:"inline"`
	// InlineSub is a subcommand that takes code (deno eval).
	InlineSub        string   `json:"inlineSub"`
	OptionsWithValue []string `json:"optionsWithValue"`
	// ModuleOptions name a module or package to run (python -m pytest).
	ModuleOptions []string `json:"moduleOptions"`
	// ProgramArg is set for awk-like tools whose first operand is code.
	ProgramArg bool `json:"programArg"`
}

// safeSpec says when a program is read-only.
type safeSpec struct {
	// Inert programs do nothing with their arguments that could matter:
	// unknown arguments do not make them unsafe.
	Inert bool `json:"inert"`
	// Data programs treat their arguments as text, never as files to
	// read (echo, printf): credential paths in them are harmless.
	Data bool `json:"data"`
	// Deny maps options that write, run code or reach outside to the
	// words that finish "PROGRAM OPTION …" in a reason. An option written
	// ^-x counts only before the subcommand.
	Deny table[string] `json:"deny"`
	// Only, when set, lists the only options allowed. On a model with
	// subcommands it lists the program's own options: those allowed
	// before the subcommand, and with every subcommand, whose model is
	// then allow-only too (with its own only list added). A program that
	// runs unconfined (docker, kubectl, systemctl) has one, because an
	// option its model does not list may name a host, a configuration or
	// a file to write, and safe is proven.
	Only []string `json:"only"`
	// Flags are options that take no value in this (sub)command though
	// the program's table says they take one elsewhere (kubectl logs -f
	// follows; kubectl get -f names a file): the word after one is then
	// judged, not skipped as its value.
	Flags []string `json:"flags"`
	// MaxPositionals caps the operands (uniq IN OUT writes OUT); -1 or
	// absent means no cap.
	MaxPositionals *int `json:"maxPositionals"`
	// Sub restricts the program to these subcommands, each a safeSpec.
	Sub table[*safeSpec] `json:"sub"`
	// DirOptions name a directory that must lie inside the workspace.
	DirOptions []string `json:"dirOptions"`
	// PositionalsWith lists options that allow operands when MaxPositionals
	// is 0 (git branch --list PATTERN).
	PositionalsWith []string `json:"positionalsWith"`
	// Check names a program-specific check (sed, awk).
	Check string `json:"check"`
	// Secret, when set, says this (sub)command prints secrets (a token,
	// a key, a password): it is never safe, and the reason is firm, so
	// that no wildcard allowlist entry such as `aws **` waives it. It
	// finishes "PROGRAM SUBCOMMAND …" in the reason.
	Secret string `json:"secret"`
	// Runner marks a (sub)command that runs the workspace's own code
	// (npm test, go test, make): not read-only, but a risk class of its
	// own that one switch of the policy (autoAllowWorkspaceRunners) lets
	// run.
	Runner bool `json:"runner"`
	// Groups are the command-group words a CLI nests its verbs under
	// (gcloud compute instances list): any run of them may come before a
	// subcommand of Sub. Words not listed here stop the model, so a leaf
	// command whose operand happens to be "list" (gcloud compute ssh
	// list) is never taken for a group. Only nouns belong here; a word
	// written ^run is a group only right after the program (gcloud run
	// services list), because elsewhere it is a leaf command (gcloud
	// dataflow jobs run NAME).
	Groups []string `json:"groups"`
	// PublicInputs are options whose file is read only for its public
	// part (openssl x509 -in reads a certificate and never prints a
	// private key): a credential-looking name there is not a secret read.
	PublicInputs []string `json:"publicInputs"`
	// Query marks a model of a network program (gh) whose read-only
	// subcommands only query the service the program is logged in to:
	// they reach the network but send no local data, so the generic
	// "talks to the network" reason is not given for them. The output is
	// still data from the network (gh pr view | sh is not safe).
	Query bool `json:"query"`
	// Source is the public documentation the model rests on.
	Source string `json:"source"`
}

// subSpec returns the model of subcommand sub: the exact entry, else the
// entries whose key is a glob (describe-*) that matches it. Among globs,
// one that prints secrets wins, so that no broad pattern can hide an
// exception; otherwise the lexically first key decides.
func (s *safeSpec) subSpec(sub string) *safeSpec {
	if spec, ok := s.Sub.lookup(sub); ok {
		return spec
	}
	var best *safeSpec
	bestKey := ""
	for key, spec := range s.Sub.all() {
		if !strings.ContainsAny(key, "*?[") {
			continue
		}
		if ok, _ := path.Match(key, sub); !ok || spec == nil {
			continue
		}
		switch {
		case best == nil, spec.Secret != "" && best.Secret == "":
			best, bestKey = spec, key
		case (spec.Secret != "") == (best.Secret != "") && key < bestKey:
			best, bestKey = spec, key
		}
	}
	return best
}

// optionsWithValue returns the program's options that take a value
// (withValue), less those that are flags in this (sub)command.
func (s *safeSpec) optionsWithValue(withValue []string) []string {
	if len(s.Flags) == 0 {
		return withValue
	}
	out := make([]string, 0, len(withValue))
	for _, o := range withValue {
		if !slices.Contains(s.Flags, o) {
			out = append(out, o)
		}
	}
	return out
}

// hasSecret reports whether some subcommand below s prints secrets: a
// subcommand only known at run time could then be one of them.
func (s *safeSpec) hasSecret() bool {
	if s == nil {
		return false
	}
	if s.Secret != "" {
		return true
	}
	for _, sub := range s.Sub.all() {
		if sub.hasSecret() {
			return true
		}
	}
	return false
}

// rule is one needs-review or dangerous pattern.
type rule struct {
	ID     string `json:"id"`
	Risk   Risk   `json:"risk"`
	Reason string `json:"reason"`
	// Programs are program names, or path.Match patterns (mkfs.*).
	Programs []string `json:"programs"`
	// Sub: the first positionals must be one of these ("stash drop"); a
	// part "*" stands for any word known statically (ssh HOST COMMAND), and
	// a part with glob characters or "|" is a set of path.Match patterns
	// ("delete-*|terminate-*").
	Sub []string `json:"sub"`
	// Options: every group must have one of its options present.
	Options [][]string `json:"options"`
	// NotOptions: none of these may be present.
	NotOptions []string `json:"notOptions"`
	// Args: some positional after Sub must match one of these: a glob,
	// or @set for a named path set or check.
	Args []string `json:"args"`
	// Targets: additionally, some operand must match one of these (chmod
	// 777 on a catastrophic target).
	Targets []string `json:"targets"`
	// ValueOf makes Args apply to the values of these options instead of
	// the operands (curl -o FILE, openssl -out FILE); an entry ending in
	// "=" takes the rest of any word starting with it (dd of=FILE).
	ValueOf []string `json:"valueOf"`
	// NotSub: the first operand must not be one of these (ufw status).
	NotSub []string `json:"notSub"`
	// LastArg restricts Args to the last operand (the target of cp, mv).
	LastArg bool `json:"lastArg"`
	// SourcesBefore, a regular expression, restricts Args to the operands
	// before the last operand it matches: the local sources of a copy
	// whose destination is remote (aws s3 cp SRC… s3://DEST). A command
	// with no such operand (a download, a copy between local paths) does
	// not match, unless an operand known only at run time could be one.
	SourcesBefore string `json:"sourcesBefore"`
	// SendsStdin marks a match as sending the program's standard input to
	// the network (aws s3 cp - s3://b/k): credentials piped or redirected
	// into it leave the machine, which the data-flow checks then refuse.
	SendsStdin bool `json:"sendsStdin"`
	// AnyArg: some word after the program (options included) must match.
	AnyArg []string `json:"anyArg"`
	// Text: a regular expression over the words after the program,
	// joined by spaces.
	Text string `json:"text"`
	// Bare matches only when there are no arguments at all.
	Bare bool `json:"bare"`
	// FoldCase compares words in lower case (git configuration keys).
	FoldCase bool `json:"foldCase"`
	// Firm rules give reasons no wildcard allowlist pattern waives; the
	// reasons of other needs-review rules are coverable (see Reason).
	Firm bool `json:"firm"`
	// Effect names what the matched option or subcommand makes the
	// program do beyond its ordinary work, for rules written because "a
	// wildcard covers words, not effects": an allowlist entry `curl **`
	// lets the agent use curl, not upload files with it. One of
	//
	//	code       runs a command, shell or code given in an option, a
	//	           config file or a subcommand (ssh -o ProxyCommand=…)
	//	library    loads a shared library, engine, plugin or module
	//	write      writes a file outside the workspace (curl -o ~/x)
	//	upload     sends local data or files to the network (scp, curl -T)
	//	download   fetches from the network into a file
	//	listen     serves or binds on the network (php -S, kubectl proxy)
	//	privilege  gains rights over the host (docker run --privileged)
	//	config     loads configuration or hooks that can run code
	//
	// Such rules are firm (or dangerous).
	Effect string `json:"effect"`
	// Alternative is a safer way to get the same work done, shown with the
	// reason by `execgate check` ("git push --force-with-lease").
	Alternative string `json:"alternative"`
	// Source names the public documentation the entry rests on, as an
	// https URL: the program's manual or a MITRE ATT&CK technique (never
	// GTFOBins, whose licence keeps its text out of this repository).
	Source string `json:"source"`
	// DynamicDangerous keeps a dangerous rule dangerous when it matches
	// only maybe because an operand is known at run time: for a recursive
	// delete, an unknown target is as bad as the worst one it could be.
	DynamicDangerous bool     `json:"dynamicDangerous"`
	Match            []string `json:"match"`
	NotMatch         []string `json:"notMatch"`

	// subSplit is Sub with each alternative split into its words, set by
	// loadRules and, for the built-in table, generated with it.
	subSplit    [][]string
	once        sync.Once
	compileErr  error
	text        *regexp.Regexp
	sourcesRE   *regexp.Regexp
	targetGlobs []*glob.Pattern
	targetSets  []string
	argGlobs    []*glob.Pattern
	argSets     []string
	anyGlobs    []*glob.Pattern
	anySets     []string
}

// subParts returns Sub with each alternative split into its words.
// Matching runs for every rule of a program on every command, so the
// split is made ahead of time (loadRules, rules_gen.go), not on first use:
// the built-in table is static data, and writing into it at run time
// would make the process copy each page of the table it touched.
func (ru *rule) subParts() [][]string {
	if ru.subSplit == nil && len(ru.Sub) > 0 {
		return splitSub(ru.Sub) // a rule loadRules did not see
	}
	return ru.subSplit
}

// splitSub splits each alternative of a rule's Sub into its words.
func splitSub(sub []string) [][]string {
	if len(sub) == 0 {
		return nil
	}
	out := make([][]string, len(sub))
	for i, alt := range sub {
		out[i] = strings.Fields(alt)
	}
	return out
}

// codeRule recognizes a call in inline code and the shell command it
// amounts to.
type codeRule struct {
	ID        string   `json:"id"`
	Languages []string `json:"languages"`
	// Pattern has one capture group: the string literal argument.
	Pattern string `json:"pattern"`
	// Shell is the equivalent command; {} is replaced by the quoted
	// argument, or the argument is the command itself when Shell is "{}".
	Shell  string `json:"shell"`
	Reason string `json:"reason"`
	// Risk, when set, is the risk of the call itself, whatever its
	// argument (file deletion from inline code).
	Risk Risk `json:"risk"`
	// Deletes marks a call whose captured argument is the path it
	// deletes: a plain path inside the workspace is then weighed as the
	// equivalent rm instead (rmSync('dist', {recursive: true})). Only
	// these rules: a host name or code in the argument says nothing of
	// where the call reaches.
	Deletes bool `json:"deletes"`
	// Source names the public documentation the entry rests on.
	Source   string   `json:"source"`
	Match    []string `json:"match"`
	NotMatch []string `json:"notMatch"`

	once sync.Once
	re   *regexp.Regexp
	err  error
}

// regexp returns the compiled pattern, compiling it on first use.
func (c *codeRule) regexp() (*regexp.Regexp, error) {
	c.once.Do(func() { c.re, c.err = regexp.Compile(c.Pattern) })
	return c.re, c.err
}

// effects are the values of rule.Effect.
var effects = nameSet{
	"code", "config",
	"credentials", // reads or prints secrets
	"download", "library", "listen", "privilege", "upload", "write",
}

// rules is the rule table with its indexes.
type rules struct {
	*ruleFile
	byProgram   table[[]*rule]
	byPattern   []*rule // rules whose program names are patterns
	shells      nameSet
	network     nameSet
	envPrinters nameSet
	dangerVars  nameSet
	pathSets    table[*pathSet]
	byIDOnce    sync.Once
	byID        map[string]*rule
}

// pathSet is a named list of path globs, compiled on first use.
type pathSet struct {
	patterns []string
	// required holds, for each pattern, a piece of text that every path it
	// matches contains (see requiredText). Most words are nowhere near
	// any credential or system path, and checking these pieces first
	// spares compiling the set for them, which was most of the cost of
	// judging a plain `git status`.
	required     []string
	requiredOnce sync.Once
	once         sync.Once
	globs        []*glob.Pattern
	err          error
}

// mayMatch reports whether some pattern could match p; false is certain.
func (p *pathSet) mayMatch(path string) bool {
	p.requiredOnce.Do(func() {
		p.required = make([]string, len(p.patterns))
		for i, pat := range p.patterns {
			p.required[i] = requiredText(pat)
		}
	})
	for _, r := range p.required {
		if strings.Contains(path, r) {
			return true
		}
	}
	return false
}

// requiredText returns the longest run of plain characters in a glob before
// any character class: every path the glob matches contains it. It is ""
// (which every path contains) for a glob that starts with a class or uses
// braces or escapes, whose text is not read here.
func requiredText(pat string) string {
	if strings.ContainsAny(pat, "{}\\") {
		return ""
	}
	if i := strings.IndexByte(pat, '['); i >= 0 {
		pat = pat[:i]
	}
	var best string
	for pat != "" {
		i := strings.IndexAny(pat, "*?")
		if i < 0 {
			i = len(pat)
		}
		if i > len(best) {
			best = pat[:i]
		}
		pat = pat[min(i+1, len(pat)):]
	}
	return best
}

func (p *pathSet) compiled() ([]*glob.Pattern, error) {
	p.once.Do(func() {
		for _, pat := range p.patterns {
			g, err := glob.Compile(pat, '/')
			if err != nil {
				p.err = fmt.Errorf("pattern %q: %w", pat, err)
				return
			}
			p.globs = append(p.globs, g)
		}
	})
	return p.globs, p.err
}

// loadRules indexes a rule table. Patterns are compiled when first used;
// compileAll compiles them all (the tests do).
func loadRules(rf *ruleFile) (*rules, error) {
	r := &rules{
		ruleFile:    rf,
		shells:      setOf(rf.Shells),
		network:     setOf(rf.Network),
		envPrinters: setOf(rf.EnvPrinters),
		dangerVars:  setOf(rf.Assignments.Names),
	}
	pathSets := make(map[string]*pathSet, len(rf.Paths))
	for name, pats := range rf.Paths.all() {
		pathSets[name] = &pathSet{patterns: pats}
	}
	r.pathSets = tableOf(pathSets)
	for _, ru := range append(append([]*rule(nil), rf.Rules...), rf.Decoders...) {
		if ru.ID == "" || ru.Reason == "" {
			return nil, fmt.Errorf("rules: a rule for %v lacks an id or a reason", ru.Programs)
		}
		if ru.Effect != "" && !effects.has(ru.Effect) {
			return nil, fmt.Errorf("rules: rule %s: unknown effect %q", ru.ID, ru.Effect)
		}
		if ru.Effect != "" && !ru.Firm && ru.Risk != Dangerous {
			return nil, fmt.Errorf("rules: rule %s has an effect but is neither firm nor dangerous", ru.ID)
		}
		if ru.subSplit == nil { // the generated table has it already
			ru.subSplit = splitSub(ru.Sub)
		}
	}
	byProgram := map[string][]*rule{}
	for _, ru := range rf.Rules {
		for _, p := range ru.Programs {
			if strings.ContainsAny(p, "*?[") {
				r.byPattern = append(r.byPattern, ru)
				break
			}
			byProgram[p] = append(byProgram[p], ru)
		}
	}
	r.byProgram = tableOf(byProgram)
	return r, nil
}

// compileAll compiles every pattern in the table and reports the first
// error.
func (r *rules) compileAll() error {
	var errs []error
	for _, ru := range append(append([]*rule(nil), r.Rules...), r.Decoders...) {
		errs = append(errs, r.compileRule(ru))
	}
	for _, c := range r.Code {
		_, err := c.regexp()
		errs = append(errs, err)
	}
	for name, ps := range r.pathSets.all() {
		if _, err := ps.compiled(); err != nil {
			errs = append(errs, fmt.Errorf("rules: path set %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// compileRule compiles a rule's patterns once.
func (r *rules) compileRule(ru *rule) error {
	ru.once.Do(func() {
		if ru.Text != "" {
			re, err := regexp.Compile(ru.Text)
			if err != nil {
				ru.compileErr = fmt.Errorf("rules: rule %s: %w", ru.ID, err)
				return
			}
			ru.text = re
		}
		if ru.SourcesBefore != "" {
			re, err := regexp.Compile(ru.SourcesBefore)
			if err != nil {
				ru.compileErr = fmt.Errorf("rules: rule %s: sourcesBefore: %w", ru.ID, err)
				return
			}
			ru.sourcesRE = re
		}
		var err error
		if ru.argGlobs, ru.argSets, err = r.compileArgs(ru.ID, ru.Args); err != nil {
			ru.compileErr = err
			return
		}
		if ru.anyGlobs, ru.anySets, err = r.compileArgs(ru.ID, ru.AnyArg); err != nil {
			ru.compileErr = err
			return
		}
		if ru.targetGlobs, ru.targetSets, err = r.compileArgs(ru.ID, ru.Targets); err != nil {
			ru.compileErr = err
		}
	})
	return ru.compileErr
}

func (r *rules) compileArgs(id string, pats []string) ([]*glob.Pattern, []string, error) {
	var globs []*glob.Pattern
	var sets []string
	for _, a := range pats {
		if set, ok := strings.CutPrefix(a, "@"); ok {
			if _, known := r.Paths.lookup(set); !known && !builtinSet(set) {
				return nil, nil, fmt.Errorf("rules: rule %s: unknown set @%s", id, set)
			}
			sets = append(sets, set)
			continue
		}
		g, err := glob.Compile(a)
		if err != nil {
			return nil, nil, fmt.Errorf("rules: rule %s: pattern %q: %w", id, a, err)
		}
		globs = append(globs, g)
	}
	return globs, sets, nil
}

// ruleByID returns the rule (or decoder) with that id, or nil. The index is
// built on first use: only explanations need it.
func (r *rules) ruleByID(id string) *rule {
	r.byIDOnce.Do(func() {
		r.byID = make(map[string]*rule, len(r.Rules)+len(r.Decoders))
		for _, ru := range append(append([]*rule(nil), r.Rules...), r.Decoders...) {
			r.byID[ru.ID] = ru
		}
	})
	return r.byID[id]
}

// rulesFor returns the rules that name program.
func (r *rules) rulesFor(program string) []*rule {
	out := r.byProgram.get(program)
	for _, ru := range r.byPattern {
		for _, p := range ru.Programs {
			if ok, _ := path.Match(p, program); ok {
				out = append(out[:len(out):len(out)], ru)
				break
			}
		}
	}
	return out
}

// optionsWithValue returns the options of program that take a value.
func (r *rules) optionsWithValue(program string) []string {
	return r.Programs.get(program).OptionsWithValue
}

// isGroup reports whether word is one of the spec's command groups at this
// position: first says it comes right after the program.
func (s *safeSpec) isGroup(word string, first bool) bool {
	for _, g := range s.Groups {
		if g == word || first && g == "^"+word {
			return true
		}
	}
	return false
}

// knows reports whether execgate models the program name: the safe table,
// the program table, the interpreters, the wrappers, the shells, or a rule
// naming it outright (a program matched only by a rule's pattern is not
// known by that).
func (r *rules) knows(name string) bool {
	_, program := r.Programs.lookup(name)
	_, interp := r.Interpreters.lookup(name)
	_, wrapper := r.Wrappers.lookup(name)
	return r.Safe.get(name) != nil || program || interp || wrapper || r.shells.has(name) || len(r.byProgram.get(name)) > 0
}
