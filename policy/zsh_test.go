package policy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/vectors"
	"github.com/execgate/execgate/pattern"
	"github.com/execgate/execgate/policy/shparse"
)

// loadZshCorpus reads testdata/corpus/zsh/zsh_*.tsv: commands as zsh reads
// them, in the corpus's format.
func loadZshCorpus(t testing.TB) []corpusCase {
	t.Helper()
	return loadCorpusFiles(t, "../testdata/corpus/zsh/zsh_*.tsv")
}

func analyzeZsh(e *Engine, command string) Result {
	return e.Analyze(Request{Command: command, Cwd: testWorkspace, Home: testHome, Dialect: DialectZsh})
}

// TestZshCorpus checks the zsh soundness corpus: every zsh construct the
// bash analysis does not model is needs-review, with a reason that says so,
// and plain commands stay safe.
func TestZshCorpus(t *testing.T) {
	e := testEngine(t)
	for _, c := range loadZshCorpus(t) {
		res := analyzeZsh(e, c.command)
		if res.Risk != c.risk {
			t.Errorf("%s:%d: %q: risk %s, want %s (%s)\n\treasons: %s", c.file, c.line, c.command, res.Risk, c.risk, c.note, strings.Join(res.Reasons, " | "))
			continue
		}
		if c.keyword != "-" && c.keyword != "" && c.risk != Safe {
			joined := strings.ToLower(strings.Join(res.Reasons, " | "))
			if !strings.Contains(joined, strings.ToLower(c.keyword)) {
				t.Errorf("%s:%d: %q: reasons lack %q: %s", c.file, c.line, c.command, c.keyword, joined)
			}
		}
	}
}

// TestZshDialectIsAParameter: the same text is judged by the dialect the
// request names, in one engine, so that a bash shim and a zsh shim may
// share it.
func TestZshDialectIsAParameter(t *testing.T) {
	e := testEngine(t)
	const cmd = "ls *.go(.)"
	require.Equal(t, Safe, e.Analyze(Request{Command: "ls *.go", Cwd: testWorkspace, Home: testHome, Dialect: DialectZsh}).Risk)
	require.Equal(t, NeedsReview, analyzeZsh(e, cmd).Risk)
	// Bash reads the same text as a syntax error (an unquoted paren).
	require.NotEqual(t, Safe, analyzeForTest(e, cmd).Risk)
	require.Equal(t, "zsh", DialectZsh.String())
	require.Equal(t, "bash", Dialect(0).String())
}

// TestZshTooDeep: deeply nested zsh-only forms meet the same nesting guard
// as bash text before the parser sees them (a stack overflow is a fatal
// error, not a panic), and are needs-review unparsed.
func TestZshTooDeep(t *testing.T) {
	e := testEngine(t)
	const n = 100000
	for name, src := range map[string]string{
		"nested parameters":     strings.Repeat("${", n) + "x" + strings.Repeat("}", n),
		"flags":                 strings.Repeat("${(e)", n) + "x" + strings.Repeat("}", n),
		"=( )":                  "cat " + strings.Repeat("=(", n) + "ls" + strings.Repeat(")", n),
		"subscripts":            "echo $x" + strings.Repeat("[$x", n) + strings.Repeat("]", n),
		"glob qualifier parens": "ls *" + strings.Repeat("(", n),
	} {
		res := analyzeZsh(e, src)
		require.Equal(t, NeedsReview, res.Risk, name)
		require.Contains(t, strings.Join(res.Reasons, " "), "too deeply nested", name)
	}
}

// zshOnly reports whether the zsh parse of src holds a construct bash does
// not have: it is written apart from zsh.go, from the syntax package's
// documentation of the fields that only LangZsh sets, as the fuzz oracle.
func zshOnly(src string) bool {
	if shparse.CheckNesting(src) != nil {
		return false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangZsh)).Parse(strings.NewReader(src), "")
	if err != nil {
		return false
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			found = found || n.Disown
		case *syntax.ParamExp:
			found = found || n.Flags != nil || n.IsSet || n.NestedParam != nil || len(n.Modifiers) > 0 ||
				n.Split != syntax.OptUnset || n.GlobSubst != syntax.OptUnset || n.RcExpand != syntax.OptUnset
		case *syntax.ProcSubst:
			found = found || n.Op == syntax.CmdInTemp
		case *syntax.FlagsArithm:
			found = true
		case *syntax.FuncDecl:
			found = found || n.Name == nil
		case *syntax.Redirect:
			found = found || n.Op == syntax.AppClob || n.Op == syntax.RdrAllClob || n.Op == syntax.AppAllClob
		case *syntax.Word:
			for _, p := range n.Parts {
				if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "()") {
					found = true // a glob qualifier is an unquoted literal with parens
				}
			}
		}
		return !found
	})
	return found
}

// FuzzZsh feeds arbitrary text to the analysis as zsh: it must never panic,
// a verdict must be one of the three, and any text with a zsh-only
// construct must never be safe (nor allowed without a person under the
// allowlist policy with safe programs auto-allowed).
func FuzzZsh(f *testing.F) {
	for _, c := range loadZshCorpus(f) {
		f.Add(c.command)
	}
	f.Add("echo ${(e)${(f)\"$(ls)\"}}")
	f.Add("() { ls } a")
	f.Add("ls *(e:'rm -rf ~':) &|")
	e := testEngine(f)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1, AutoAllowSafe: true}
	allow := pattern.NewMatcher(entries("git **", "ls **", "echo **"), fakePath)
	f.Fuzz(func(t *testing.T, command string) {
		res := e.Evaluate(Request{Command: command, Cwd: testWorkspace, Home: testHome, Policy: pol, Allow: allow, Dialect: DialectZsh})
		if res.Risk < Safe || res.Risk > Dangerous {
			t.Fatalf("risk %d out of range for %q", res.Risk, command)
		}
		if res.ParseError != "" && res.Risk == Safe {
			t.Fatalf("unparsable %q called safe", command)
		}
		if zshOnly(command) {
			if res.Risk == Safe {
				t.Fatalf("%q has a zsh-only construct and was called safe", command)
			}
			if res.Decision == Allow {
				t.Fatalf("%q has a zsh-only construct and was allowed by a wildcard pattern", command)
			}
		}
	})
}

// TestCapturedZshShapes: what Claude Code handed a zsh in the end-to-end
// tests unwraps exactly when the shell is a zsh, and the bash forms do not
// unwrap for a zsh (shopt is no zsh builtin: the prologue would not be the
// one recognised). Start-up commands likewise: a zsh runs only the zsh
// snapshot writer unasked.
func TestCapturedZshShapes(t *testing.T) {
	all, err := vectors.ReadAllCaptured()
	require.NoError(t, err)
	env, err := vectors.ReadEnvelopes()
	require.NoError(t, err)
	zshSeen, bashSeen := 0, 0
	for _, c := range all {
		agent := capturedAgents[c.Agent]
		if agent != AgentClaudeCode {
			continue
		}
		for _, shape := range c.Shapes {
			zsh := filepath.Base(shape.Argv[0]) == "zsh" // the recording zsh or the zsh shim
			t.Run(c.Agent+"@"+c.Version+"/"+shape.Seen, func(t *testing.T) {
				raw, params := splitArgv(t, shape.Argv)
				if !strings.Contains(raw, "{{CLAUDE}}") {
					w := newCapturedWorld(t)
					program := w.fill(t, raw, "")
					_, ok := w.trust().HarnessAs(program, params, agent, DialectZsh)
					// The env probe is the same text for either shell.
					assert.Equal(t, zsh || program == "env", ok, "start-up command for a zsh: %.200q", program)
					return
				}
				for _, p := range env.Payloads {
					w := newCapturedWorld(t)
					program := w.fill(t, raw, p.Command)
					e, ok := w.trust().UnwrapAs(program, params, DialectZsh)
					require.Equal(t, zsh, ok, "payload %q under a zsh: %q", p.Name, program)
					if zsh {
						zshSeen++
						assert.Equal(t, p.Command, e.Payload)
						for _, m := range nearMisses {
							if edited := m.edit(program); edited != program {
								_, ok := w.trust().UnwrapAs(edited, params, DialectZsh)
								assert.False(t, ok, "near miss %q recognised under a zsh", m.name)
							}
						}
					} else {
						bashSeen++
					}
				}
			})
		}
	}
	require.NotZero(t, zshSeen, "no zsh-route shapes captured")
	require.NotZero(t, bashSeen)
}

// BenchmarkAnalyzeZsh compares the zsh reading of typical commands with
// the bash one: the zsh look is one more walk over the tree.
func BenchmarkAnalyzeZsh(b *testing.B) {
	e := testEngine(b)
	for _, cmd := range []string{"git status", "cd src && grep -rn TODO . | head -20"} {
		for _, d := range []Dialect{DialectBash, DialectZsh} {
			b.Run(d.String()+"/"+cmd, func(b *testing.B) {
				req := Request{Command: cmd, Cwd: testWorkspace, Home: testHome, Dialect: d}
				b.ReportAllocs()
				for b.Loop() {
					e.Analyze(req)
				}
			})
		}
	}
}

// TestZshWildcardCoversNoEffect: a zsh builtin that assigns a variable
// named on its command line, or sets a zsh option, changes what later
// commands mean; a wildcard allowlist pattern for the builtin covers its
// words, never that effect. Each command ran code or another program than
// the one it names in real zsh (set +o noglobsubst runs a value's e glob
// qualifier; set -A PATH changes which git runs).
func TestZshWildcardCoversNoEffect(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	for _, tc := range []struct{ pattern, command string }{
		{"set **", `set +o noglobsubst; x="*(e:touch pwned:)"; echo $x`},
		{"set **", `set +o NO_GLOB_SUBST; x="*(e:touch pwned:)"; echo $x`},
		{"set **", "set -A PATH /tmp/evil; git status"},
		{"set **", "set -sA PATH /tmp/evil; git status"},
		{"set **", "set -G; ls"},
		{"zformat **", "zformat -f PATH /tmp/evil; git status"},
		{"zparseopts **", "zparseopts -A opts x:=PATH -- -x /tmp/evil; git status"},
		{"zregexparse **", "zregexparse PATH x /tmp/evil; git status"},
	} {
		res := e.Evaluate(Request{
			Command: tc.command, Cwd: testWorkspace, Home: testHome, Policy: pol, Dialect: DialectZsh,
			Allow: pattern.NewMatcher(entries(tc.pattern), fakePath),
		})
		assert.Equal(t, AskHuman, res.Decision, "%s under %q\n\t%s", tc.command, tc.pattern, explain(res))
	}
	// What a person plainly allows stays allowed.
	res := e.Evaluate(Request{Command: "set -e; set -o pipefail; git status", Cwd: testWorkspace, Home: testHome, Policy: pol, Dialect: DialectZsh})
	assert.Equal(t, Allow, res.Decision, explain(res))
}
