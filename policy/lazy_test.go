package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLazyRegexps compiles every expression the package compiles on first
// use: a bad one must fail here, not in the middle of judging a command.
func TestLazyRegexps(t *testing.T) {
	all := map[string]*lazyRegexp{
		"arithNumber": arithNumber, "identifier": identifier, "conventionalPath": conventionalPath,
		"printfConversion": printfConversion, "awkRedirect": awkRedirect, "workspacePathText": workspacePathText,
		"firstLiteral": firstLiteral, "secretName": secretName, "inspectTemplateSafe": inspectTemplateSafe,
		"claudeEnvHookFile": claudeEnvHookFile, "claudeGuard": claudeGuard,
		"redirectArrayVar": redirectArrayVar,
		// paths (issue 22)
		"jqImport": jqImport, "sedSelect": sedSelect,
		"assignedName": assignedName, "neverPublic": neverPublic,
	}
	for name, re := range all {
		if re.get() == nil {
			t.Errorf("%s: no expression", name)
		}
	}

	// Every use of lazyRegexp must be in the list above.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	uses := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "lazy.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		uses += strings.Count(string(src), "&lazyRegexp{")
	}
	if uses != len(all) {
		t.Errorf("%d expressions are compiled on first use, %d listed here: add the new ones", uses, len(all))
	}
}
