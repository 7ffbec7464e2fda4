package policy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The rule table is only as good as the tests that would notice a change
// to it. Each rule carries its own match examples (TestRuleExamples), but
// those move with the rule: delete the rule and its examples go too. The
// repository corpus (testdata/corpus/*.tsv) stays. TestRuleTableCoverage
// removes one entry of the table at a time (a "mutant") and requires that
// some corpus line which passes with the real table fails with the
// mutant: that line is the test that covers the entry.

// tableMutant is one entry of the table, and how to take it out of a copy.
type tableMutant struct {
	id    string
	apply func(rf *ruleFile)
}

// coveredFields are the fields of ruleFile that tableMutants walks. Every
// field must be listed either here or in uncoveredFields, so that a new
// kind of entry added to the table cannot go unmutated unnoticed.
var coveredFields = []string{
	"Wrappers", "Shells", "Interpreters", "Safe", "Rules", "Code",
	"Assignments", "Paths", "Network", "NetworkSubcommands", "Decoders", "EnvPrinters",
}

// uncoveredFields are the fields deliberately not mutated, with why.
var uncoveredFields = map[string]string{
	// Option syntax: removing "-C takes a value" from git mostly changes
	// nothing a corpus line can see, and is tested by the matcher tests.
	"Programs": "option syntax, not a verdict",
	// Suggest only shapes "allow always" patterns, never a risk.
	"Suggest": "suggestions, not a verdict",
}

// redundantEntries are entries that no corpus line can need as the table
// stands, with why. They are reported in the log, not as failures; an
// entry that a line starts to need must be taken off this list.
var redundantEntries = map[string]string{
	// Issue 14's two sides each wrote these down; kept twice on purpose,
	// so that neither the rule nor the model alone carries the class.
	"safe.aws ssm get-*.deny[--with-decryption]": "the aws-ssm-decrypt rule makes the same command dangerous",
	"safe.find.deny[-execdir]":                   "find's -execdir commands are judged as segments of their own, which is what decides a line",
	// The LD_ and DYLD_ prefixes cover every one of these names.
	"assignments.names[LD_PRELOAD]":            "covered by the LD_ prefix",
	"assignments.names[LD_LIBRARY_PATH]":       "covered by the LD_ prefix",
	"assignments.names[LD_AUDIT]":              "covered by the LD_ prefix",
	"assignments.names[DYLD_INSERT_LIBRARIES]": "covered by the DYLD_ prefix",
	"assignments.names[DYLD_LIBRARY_PATH]":     "covered by the DYLD_ prefix",
	"paths.credentials[~/.ssh]":                "covered by **/.ssh",
	"paths.credentials[~/.gnupg/**]":           "listed twice in the credentials set",
	"paths.credentials[~/.netrc]":              "covered by **/.netrc",
	"paths.credentials[~/.kube/config]":        "covered by **/.kube/config",
	"paths.credentials[~/.npmrc]":              "covered by **/.npmrc",
	// Relative globs only match when the working directory is unknown;
	// the corpus always runs with one.
	"paths.credentials[.env]":   "relative: only without a working directory",
	"paths.credentials[.env.*]": "relative: only without a working directory",
	// /dev/** in the same set covers every named device.
	"paths.devices[/dev/sd*]":       "covered by /dev/**",
	"paths.devices[/dev/hd*]":       "covered by /dev/**",
	"paths.devices[/dev/nvme*]":     "covered by /dev/**",
	"paths.devices[/dev/vd*]":       "covered by /dev/**",
	"paths.devices[/dev/xvd*]":      "covered by /dev/**",
	"paths.devices[/dev/mmcblk*]":   "covered by /dev/**",
	"paths.devices[/dev/disk*]":     "covered by /dev/**",
	"paths.devices[/dev/rdisk*]":    "covered by /dev/**",
	"paths.devices[/dev/mapper/**]": "covered by /dev/**",
	"paths.devices[/dev/dm-*]":      "covered by /dev/**",
	"paths.devices[/dev/md*]":       "covered by /dev/**",
	"paths.devices[/dev/loop*]":     "covered by /dev/**",
	"paths.devices[/dev/mem]":       "covered by /dev/**",
	"paths.devices[/dev/kmem]":      "covered by /dev/**",
	"paths.devices[/dev/port]":      "covered by /dev/**",
	// The persistence set lists the same globs, and protectedPath is asked
	// before the code-loading case of writeTarget; the only other use,
	// workspaceFile, sets Coverable, which no risk line can see.
	"paths.code-loading[**/.git/hooks/**]": "shadowed by the same glob in the persistence set",
	"paths.code-loading[**/.git/config]":   "shadowed by the same glob in the persistence set",
	// A glob, so globWrite never lists it, and ~/.claude/** in the same
	// set matches every path it matches.
	"paths.persistence[~/.claude/settings*.json]": "covered by ~/.claude/**",
	// normPath (homeForm) writes /root/… as ~/…, so no normalised path or
	// pattern ever starts with /root/; ~/.ssh/id_rsa is the sample used.
	"paths.credential-samples[/root/.ssh/id_rsa]": "normPath turns /root/ into ~/, so ~/.ssh/id_rsa covers it",
	// Known classifier bug (see the BUG: lines in rule_entries.tsv): bare
	// export, declare and typeset are declaration clauses, which never
	// reach the env-printer check, so these entries are dead.
	"envPrinters[export]":  "dead: declaration clauses skip the env-printer check",
	"envPrinters[declare]": "dead: declaration clauses skip the env-printer check",
	"envPrinters[typeset]": "dead: declaration clauses skip the env-printer check",
}

// cloneRuleFile deep-copies rf through its JSON form, which is the whole
// of the table (the unexported fields are caches compiled on first use,
// and a copy must start without them).
func cloneRuleFile(t testing.TB, rf *ruleFile) *ruleFile {
	t.Helper()
	raw, err := json.Marshal(rf)
	require.NoError(t, err)
	var out ruleFile
	require.NoError(t, json.Unmarshal(raw, &out))
	return &out
}

// without returns list without its i-th element, in a new slice.
func without[T any](list []T, i int) []T {
	return slices.Delete(slices.Clone(list), i, i+1)
}

func tableKeys[V any](t table[V]) []string {
	keys := make([]string, 0, len(t))
	for k := range t.all() {
		keys = append(keys, k)
	}
	return keys
}

// tableMutants lists one mutant per entry of rf. It only reads rf; each
// mutant's apply edits the copy it is given.
func tableMutants(rf *ruleFile) []tableMutant {
	var ms []tableMutant
	add := func(id string, apply func(rf *ruleFile)) {
		ms = append(ms, tableMutant{id: id, apply: apply})
	}
	// Rules: each rule, and each rule's verdict (a dangerous rule that
	// only asks for review, a review rule that blocks).
	for i, ru := range rf.Rules {
		add(fmt.Sprintf("rules[%s]", ru.ID), func(rf *ruleFile) { rf.Rules = without(rf.Rules, i) })
		switch ru.Risk {
		case Dangerous:
			add(fmt.Sprintf("rules[%s].risk dangerous→needs-review", ru.ID), func(rf *ruleFile) { rf.Rules[i].Risk = NeedsReview })
		case NeedsReview:
			add(fmt.Sprintf("rules[%s].risk needs-review→dangerous", ru.ID), func(rf *ruleFile) { rf.Rules[i].Risk = Dangerous })
		}
	}
	for i, d := range rf.Decoders {
		add(fmt.Sprintf("decoders[%s]", d.ID), func(rf *ruleFile) { rf.Decoders = without(rf.Decoders, i) })
	}
	for i, c := range rf.Code {
		add(fmt.Sprintf("code[%s]", c.ID), func(rf *ruleFile) { rf.Code = without(rf.Code, i) })
	}
	for i, n := range rf.Assignments.Names {
		add(fmt.Sprintf("assignments.names[%s]", n), func(rf *ruleFile) { rf.Assignments.Names = without(rf.Assignments.Names, i) })
	}
	for i, p := range rf.Assignments.Prefixes {
		add(fmt.Sprintf("assignments.prefixes[%s]", p), func(rf *ruleFile) { rf.Assignments.Prefixes = without(rf.Assignments.Prefixes, i) })
	}
	for _, set := range tableKeys(rf.Paths) {
		for i, g := range rf.Paths.get(set) {
			add(fmt.Sprintf("paths.%s[%s]", set, g), func(rf *ruleFile) { rf.Paths.set(set, without(rf.Paths.get(set), i)) })
		}
	}
	// Deny options of safe programs, at every depth of subcommands.
	var walkSafe func(label string, get func(rf *ruleFile) *safeSpec, spec *safeSpec)
	walkSafe = func(label string, get func(rf *ruleFile) *safeSpec, spec *safeSpec) {
		for _, opt := range tableKeys(spec.Deny) {
			add(fmt.Sprintf("safe.%s.deny[%s]", label, opt), func(rf *ruleFile) { get(rf).Deny.del(opt) })
		}
		for _, sub := range tableKeys(spec.Sub) {
			walkSafe(label+" "+sub, func(rf *ruleFile) *safeSpec { return get(rf).Sub.get(sub) }, spec.Sub.get(sub))
		}
	}
	for _, name := range tableKeys(rf.Safe) {
		walkSafe(name, func(rf *ruleFile) *safeSpec { return rf.Safe.get(name) }, rf.Safe.get(name))
	}
	for i, s := range rf.Shells {
		add(fmt.Sprintf("shells[%s]", s), func(rf *ruleFile) { rf.Shells = without(rf.Shells, i) })
	}
	for _, w := range tableKeys(rf.Wrappers) {
		add(fmt.Sprintf("wrappers[%s]", w), func(rf *ruleFile) { rf.Wrappers.del(w) })
	}
	for _, p := range tableKeys(rf.Interpreters) {
		add(fmt.Sprintf("interpreters[%s]", p), func(rf *ruleFile) { rf.Interpreters.del(p) })
	}
	for i, n := range rf.Network {
		add(fmt.Sprintf("network[%s]", n), func(rf *ruleFile) { rf.Network = without(rf.Network, i) })
	}
	for _, name := range tableKeys(rf.Programs) {
		if len(rf.Programs.get(name).KeyOptions) == 0 {
			continue
		}
		add(fmt.Sprintf("programs[%s].keyOptions", name), func(rf *ruleFile) {
			pi := rf.Programs.get(name)
			pi.KeyOptions = nil
			rf.Programs.set(name, pi)
		})
	}
	for _, name := range tableKeys(rf.NetworkSubcommands) {
		add(fmt.Sprintf("networkSubcommands[%s]", name), func(rf *ruleFile) { rf.NetworkSubcommands.del(name) })
	}
	for i, n := range rf.EnvPrinters {
		add(fmt.Sprintf("envPrinters[%s]", n), func(rf *ruleFile) { rf.EnvPrinters = without(rf.EnvPrinters, i) })
	}
	return ms
}

// corpusOutcome is what TestCorpus checks of one line: the risk, and
// whether the reasons hold the keyword.
type corpusOutcome struct {
	risk    Risk
	keyword bool
}

func outcomeOf(e *Engine, c corpusCase) corpusOutcome {
	res := analyzeForTest(e, c.command)
	o := corpusOutcome{risk: res.Risk, keyword: true}
	if c.keyword != "-" && c.keyword != "" && c.risk != Safe {
		o.keyword = strings.Contains(strings.ToLower(strings.Join(res.Reasons, " | ")), strings.ToLower(c.keyword))
	}
	return o
}

func (o corpusOutcome) passes(c corpusCase) bool { return o.risk == c.risk && o.keyword }

// TestRuleTableFieldsMutated makes sure that every field of the table is
// either mutated by tableMutants or knowingly left out.
func TestRuleTableFieldsMutated(t *testing.T) {
	typ := reflect.TypeFor[ruleFile]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		_, out := uncoveredFields[name]
		require.True(t, slices.Contains(coveredFields, name) || out,
			"ruleFile.%s is a new kind of entry: mutate it in tableMutants (rulecoverage_test.go) or list it in uncoveredFields with a reason", name)
	}
}

// TestRuleTableCoverage removes each entry of the rule table in turn and
// requires some corpus line to notice.
func TestRuleTableCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("mutates the whole rule table; skipped with -short")
	}
	if raceEnabled {
		// A quarter of an hour under the detector on two cores, past go
		// test's default timeout, for a test of the table, not of
		// concurrency: each mutant has an engine of its own, and the
		// goroutines share nothing but the corpus they read. The plain
		// `go test` in CI runs it.
		t.Skip("mutates the whole rule table; skipped under -race")
	}
	start := time.Now()
	cases := loadCorpus(t)
	base := testEngine(t)
	// Only lines that pass with the real table can notice a mutant;
	// TestCorpus reports the others.
	var passing []corpusCase
	for _, c := range cases {
		if outcomeOf(base, c).passes(c) {
			passing = append(passing, c)
		}
	}
	mutants := tableMutants(builtinRules)
	survivors := make([]bool, len(mutants))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				survivors[i] = !killed(t, mutants[i], passing)
			}
		}()
	}
	for i := range mutants {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	var untested, redundant []string
	for i, s := range survivors {
		id := mutants[i].id
		why, listed := redundantEntries[id]
		switch {
		case s && listed:
			redundant = append(redundant, id+": "+why)
		case s:
			untested = append(untested, id)
		case listed:
			t.Errorf("%s is now needed by a corpus line: take it off redundantEntries", id)
		}
	}
	t.Logf("%d table entries mutated against %d corpus lines in %s; %d untested, %d known redundant:\n\t%s",
		len(mutants), len(passing), time.Since(start).Round(time.Millisecond), len(untested), len(redundant), strings.Join(redundant, "\n\t"))
	if len(untested) > 0 {
		t.Errorf("no corpus line notices the removal of these %d rule-table entries; add lines to testdata/corpus that exercise them:\n\t%s",
			len(untested), strings.Join(untested, "\n\t"))
	}
}

// killed reports whether some passing corpus line fails under mutant m.
func killed(t testing.TB, m tableMutant, passing []corpusCase) (noticed bool) {
	defer func() {
		if recover() != nil {
			noticed = true // a panic fails TestCorpus too
		}
	}()
	rf := cloneRuleFile(t, builtinRules)
	m.apply(rf)
	r, err := loadRules(rf)
	if err != nil {
		// A table that no longer loads (a rule naming a removed path
		// set) is noticed by every test.
		return true
	}
	e := &Engine{rules: r}
	for _, c := range passing {
		if !outcomeOf(e, c).passes(c) {
			return true
		}
	}
	return false
}
