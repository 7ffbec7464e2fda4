package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// modulePathVars put directories first on an interpreter's module search
// path (dangerous vars all: PYTHONPATH=/tmp/evil makes python load a
// planted json.py). Sorted.
var modulePathVars = nameSet{"NODE_PATH", "PERL5LIB", "PERLLIB", "PYTHONPATH", "RUBYLIB"}

// workspaceModulePath reports whether as sets a module search path to
// directories of the workspace and nothing else (PYTHONPATH=src,
// PYTHONPATH=.:tests, NODE_PATH=$WS/src:$NODE_PATH keeping what the
// environment had after them), each as it resolves on disk, and returns
// the value as written. The modules it loads first are then the
// workspace's own code, which a confined command runs anyway.
func (a *analyzer) workspaceModulePath(name string, as *syntax.Assign) (string, bool) {
	if !modulePathVars.has(name) || as.Value == nil || as.Append || as.Index != nil || as.Array != nil {
		return "", false
	}
	var sb strings.Builder
	if err := syntax.NewPrinter().Print(&sb, as.Value); err != nil {
		return "", false
	}
	text := sb.String()
	if unq, ok := strings.CutPrefix(text, `"`); ok {
		if text, ok = strings.CutSuffix(unq, `"`); !ok {
			return "", false
		}
	}
	for _, tail := range []string{":$" + name, ":${" + name + "}"} {
		if dirs, ok := strings.CutSuffix(text, tail); ok {
			text = dirs
			break
		}
	}
	if text == "" {
		return "", false
	}
	for _, dir := range strings.Split(text, ":") {
		// An empty entry is the current directory to Python; a quote,
		// an expansion, a glob or a tilde is not a literal directory.
		if dir == "" || strings.ContainsFunc(dir, notPathChar) || !a.insideWorkspace(dir) {
			return "", false
		}
	}
	return text, true
}

// notPathChar reports whether r is outside the characters a literal
// directory name is written with here.
func notPathChar(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return false
	}
	return !strings.ContainsRune("._/+-", r)
}
