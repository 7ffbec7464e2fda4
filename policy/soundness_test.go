package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// sharedCorpus finds shared/corpora/NAME by walking up from the package
// directory, so that the test finds the shared data from the main checkout
// and from any worktree beside it. It returns "" when there is none.
func sharedCorpus(name string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, "shared", "corpora", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// allCorpusCommands returns every command of the repository's corpora and,
// when present, of the peer corpora in ../shared/corpora.
func allCorpusCommands(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, c := range loadCorpus(t) {
		out = append(out, c.command)
	}
	for _, name := range []string{"dcg.tsv", "shellfirm.tsv", "gtfobins.tsv"} {
		p := sharedCorpus(name)
		if p == "" {
			t.Logf("peer corpus %s not present: measured on the repository's corpora only", name)
			continue
		}
		readTSV(t, p, func(line int, cols []string) {
			if len(cols) < 3 {
				return
			}
			var cmd string
			if json.Unmarshal([]byte(cols[2]), &cmd) == nil {
				out = append(out, cmd)
			}
		})
	}
	return out
}

// modelledPrograms lists every program the rule table knows by name.
func (r *rules) modelledPrograms() []string {
	set := map[string]bool{}
	add := func(names ...string) {
		for _, n := range names {
			if !strings.ContainsAny(n, "*?[") {
				set[n] = true
			}
		}
	}
	for k := range r.Safe.all() {
		add(k)
	}
	for k := range r.Wrappers.all() {
		add(k)
	}
	for k := range r.Interpreters.all() {
		add(k)
	}
	for k := range r.Programs.all() {
		add(k)
	}
	add(r.Shells...)
	add(r.Network...)
	add(r.EnvPrinters...)
	for _, ru := range r.Rules {
		add(ru.Programs...)
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// wildcardAllowlist is `NAME **` for every modelled program, and the
// allowlist the security review used.
func wildcardAllowlist(e *Engine) *pattern.Matcher {
	var pats []string
	for _, p := range e.rules.modelledPrograms() {
		pats = append(pats, p+" **")
	}
	pats = append(pats, "npm run **", "xargs grep **")
	return pattern.NewMatcher(entries(pats...), fakePath)
}

const payload = "rm -rf ~"

// mutants returns the programs made from src by putting $(rm -rf ~) in
// every position that bash expands, and 'a[$(rm -rf ~)]' in every
// position where bash evaluates a string as arithmetic.
func mutants(src string) []string {
	parse := func() *syntax.File {
		f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
		if err != nil {
			return nil
		}
		return f
	}
	f := parse()
	if f == nil {
		return nil
	}
	n := len(mutableWords(f))
	var out []string
	printer := syntax.NewPrinter()
	for i := range n {
		for _, kind := range []int{0, 1} {
			f := parse()
			words := mutableWords(f)
			if i >= len(words) {
				continue
			}
			w := words[i]
			if kind == 1 && !w.arith {
				continue
			}
			sub, err := syntax.NewParser().Parse(strings.NewReader("x $("+payload+")"), "")
			if err != nil {
				panic(err)
			}
			cs := sub.Stmts[0].Cmd.(*syntax.CallExpr).Args[1].Parts[0]
			if kind == 0 {
				w.w.Parts = append(w.w.Parts, cs)
			} else {
				w.w.Parts = []syntax.WordPart{&syntax.SglQuoted{Value: "a[$(" + payload + ")]"}}
			}
			var sb strings.Builder
			if printer.Print(&sb, f) == nil && keepsPayload(sb.String(), kind, src) {
				out = append(out, sb.String())
			}
		}
	}
	return out
}

// keepsPayload reports whether the printed mutant still holds the payload
// as code (kind 0: one more command substitution than the original) or as
// the quoted string (kind 1). The printer can lay out an odd input so that
// the new part lands in a comment; such a mutant tests the printer, not
// the analysis.
func keepsPayload(mutant string, kind int, src string) bool {
	count := func(text string) int {
		f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
		if err != nil {
			return -1
		}
		n := 0
		syntax.Walk(f, func(node syntax.Node) bool {
			if _, ok := node.(*syntax.CmdSubst); ok {
				n++
			}
			return true
		})
		return n
	}
	if kind == 1 {
		return count(mutant) >= 0 && strings.Contains(mutant, "'a[$("+payload+")]'")
	}
	before, after := count(src), count(mutant)
	return before >= 0 && after == before+1
}

type mutableWord struct {
	w     *syntax.Word
	arith bool // bash evaluates the word's value as arithmetic
}

// mutableWords lists the words bash expands when it runs f, in a stable
// order: not here-document delimiters, nor bodies of quoted ones.
func mutableWords(f *syntax.File) []mutableWord {
	var out []mutableWord
	skip := map[*syntax.Word]bool{}
	arith := map[*syntax.Word]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			if n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc {
				skip[n.Word] = true
				if n.Hdoc != nil {
					// The printer lays out here-document bodies from
					// their positions, which a new part lacks: the
					// bodies are mutated by the corpus lines instead.
					skip[n.Hdoc] = true
				}
			}
		case *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.LetClause, *syntax.CStyleLoop:
			markArith(n, arith)
		case *syntax.Assign:
			if n.Index != nil {
				markArith(n.Index, arith)
			}
		case *syntax.ParamExp:
			if n.Index != nil {
				markArith(n.Index, arith)
			}
			if n.Slice != nil {
				markArith(n.Slice.Offset, arith)
				markArith(n.Slice.Length, arith)
			}
		case *syntax.BinaryTest:
			if n.Op >= syntax.TsEql && n.Op <= syntax.TsGtr || n.Op == syntax.TsEql {
				markArith(n.X, arith)
				markArith(n.Y, arith)
			}
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
				markArith(n.X, arith)
			}
		case *syntax.Word:
			if !skip[n] {
				out = append(out, mutableWord{w: n})
			}
		}
		return true
	})
	for i := range out {
		out[i].arith = arith[out[i].w]
	}
	return out
}

func markArith(n syntax.Node, arith map[*syntax.Word]bool) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			arith[w] = true
		}
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		}
		return true
	})
}

// TestSoundnessProperty is the property that defines soundness: a command
// with $(rm -rf ~) in any expanded position, or a subscript that runs it
// in any arithmetic position, is never safe and never allowed under a
// wildcard allowlist.
func TestSoundnessProperty(t *testing.T) {
	e := testEngine(t)
	allow := wildcardAllowlist(e)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1, AutoAllowSafe: true}
	total, bad := 0, 0
	for _, cmd := range allCorpusCommands(t) {
		for _, m := range mutants(cmd) {
			total++
			res := e.Evaluate(Request{Command: m, Cwd: testWorkspace, Home: testHome, Policy: pol, Allow: allow})
			if res.Risk == Safe || res.Decision == Allow {
				bad++
				if bad <= 40 {
					t.Errorf("%s, %s: %q", res.Risk, res.Decision, m)
				}
			}
		}
	}
	t.Logf("%d mutants, %d unsound", total, bad)
	require.Greater(t, total, 1000)
}

// TestExactPatternsNameWords: an exact allowlist pattern stands for its
// words and nothing beside them. For every corpus command whose segments
// all have a bare exact pattern, the command itself with those patterns
// allowlisted may run, but the same command with a hijacking assignment,
// a redirection into a start-up file or sudo in front must still ask.
func TestExactPatternsNameWords(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1}
	decorations := []func(string) string{
		func(c string) string { return "LD_PRELOAD=/tmp/x.so " + c },
		func(c string) string { return "PATH=/tmp/evil:$PATH " + c },
		func(c string) string { return c + " >> ~/.bashrc" },
		func(c string) string { return "{ " + c + "\n} >> ~/.bashrc" },
		func(c string) string { return c + " > /etc/cron.d/x" },
		func(c string) string { return "sudo " + c },
	}
	checked := 0
	for _, cmd := range allCorpusCommands(t) {
		req := Request{Command: cmd, Cwd: testWorkspace, Home: testHome, Policy: pol}
		res := e.Evaluate(req)
		if len(res.Segments) != 1 || res.Opaque {
			continue
		}
		p := pattern.Literal(res.Segments[0].Argv)
		if p == "" || !res.Segments[0].exactCovers() {
			continue
		}
		req.Allow = pattern.NewMatcher([]pattern.Entry{{Pattern: p}}, nil)
		if e.Evaluate(req).Decision != Allow {
			continue // something else in it still asks
		}
		checked++
		for i, d := range decorations {
			if strings.Contains(cmd, "#") && (i == 2 || i == 4) {
				continue // a comment would swallow the redirection
			}
			m := d(cmd)
			req.Command = m
			if r := e.Evaluate(req); r.Decision == Allow {
				t.Errorf("%q allowed by the exact pattern %q", m, p)
			}
		}
	}
	t.Logf("%d commands, each with %d decorations", checked, len(decorations))
	require.Greater(t, checked, 200)
}
