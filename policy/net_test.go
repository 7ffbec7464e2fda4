package policy

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
)

// TestEveryNodeTypeHandled lists the node types of the mvdan.cc/sh syntax
// package this module builds with, from its source, and checks each is
// one the analysis handles (knownNodes) or flags (unsupportedNodes): a
// node type added by an upgrade fails here until the analysis handles it.
func TestEveryNodeTypeHandled(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "mvdan.cc/sh/v3/syntax").Output()
	if err != nil {
		t.Skipf("go list cannot locate the syntax package's source: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	fset := token.NewFileSet()
	pkgs, err := goparser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	require.NoError(t, err)
	structs := map[string]bool{}
	hasPos := map[string]bool{}
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			for _, decl := range file.Decls {
				switch d := decl.(type) {
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						if ts, ok := spec.(*ast.TypeSpec); ok {
							if _, ok := ts.Type.(*ast.StructType); ok {
								structs[ts.Name.Name] = true
							}
						}
					}
				case *ast.FuncDecl:
					if d.Recv == nil || d.Name.Name != "Pos" || len(d.Recv.List) != 1 {
						continue
					}
					if star, ok := d.Recv.List[0].Type.(*ast.StarExpr); ok {
						if id, ok := star.X.(*ast.Ident); ok {
							hasPos[id.Name] = true
						}
					}
				}
			}
		}
	}
	var nodes []string
	for name := range hasPos {
		if structs[name] && name != "Pos" {
			nodes = append(nodes, name)
		}
	}
	require.Greater(t, len(nodes), 30, "found too few node types in %s", dir)
	for _, name := range nodes {
		assert.True(t, knownNodes.has(name) || unsupportedNodes.has(name), "syntax.%s is a node type the analysis does not handle: handle it and add it to knownNodes", name)
	}
	for _, name := range knownNodes {
		assert.True(t, hasPos[name], "knownNodes lists %s, which the syntax package no longer has", name)
	}
	t.Logf("%d node types, %d handled, %d flagged", len(nodes), len(knownNodes), len(unsupportedNodes))
}

// TestUnknownNodeIsNeedsReview: a node type outside knownNodes, met in a
// nested zsh script, makes the command needs-review instead of vanishing.
func TestUnknownNodeIsNeedsReview(t *testing.T) {
	e := testEngine(t)
	res := analyzeForTest(e, `zsh -c 'echo ${a[(r)x]}'`)
	assert.NotEqual(t, Safe, res.Risk, "%v", res.Reasons)
}

// FuzzSoundness is the soundness property as a fuzz target: whatever the
// program, putting $(rm -rf ~) in any expanded position, or a subscript
// that runs it in any arithmetic position, is never safe and never
// allowed under a wildcard allowlist.
func FuzzSoundness(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.command)
	}
	e := testEngine(f)
	allow := wildcardAllowlist(e)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1, AutoAllowSafe: true}
	f.Fuzz(func(t *testing.T, command string) {
		if len(command) > 4096 {
			return
		}
		ms := mutants(command)
		if len(ms) > 64 {
			ms = ms[:64]
		}
		for _, m := range ms {
			res := e.Evaluate(Request{Command: m, Cwd: testWorkspace, Home: testHome, Policy: pol, Allow: allow})
			if res.Risk == Safe || res.Decision == Allow {
				t.Fatalf("%s, %s: %q (from %q)", res.Risk, res.Decision, m, command)
			}
		}
	})
}
