package replay

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/shim"
)

// fromArgv is the program an argv runs, as the shim would see it: for a
// shell given a command string (["bash", "-lc", "…"], read the way bash
// and zsh read their command lines) the string, in that shell's dialect;
// for any other argv, a script file given to a shell included, its words
// quoted as bash needs them, which is the command the shim would judge
// if the argv reached it through `bash -c`.
func fromArgv(argv []string) (text string, dialect policy.Dialect, err error) {
	if len(argv) == 0 {
		return "", 0, fmt.Errorf("empty argv")
	}
	switch path.Base(argv[0]) {
	case "bash", "sh":
		if cl := shim.ParseCommandLine(argv); cl.Source == shim.FromString {
			return cl.Command, policy.DialectBash, nil
		}
	case "zsh":
		if cl := shim.ParseZshCommandLine(argv); cl.Source == shim.FromString {
			return cl.Command, policy.DialectZsh, nil
		}
	}
	words := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return "", 0, fmt.Errorf("argv word %d cannot be written for bash: %w", i, err)
		}
		words[i] = q
	}
	return strings.Join(words, " "), policy.DialectBash, nil
}

// dialectOf is the dialect of the shell a transcript names ("/bin/zsh"):
// zsh's for zsh, bash's for anything else.
func dialectOf(shell string) policy.Dialect {
	if path.Base(shell) == "zsh" {
		return policy.DialectZsh
	}
	return policy.DialectBash
}

// Why a shell call is not counted as a command.
const skipApplyPatch = "Codex's apply_patch: Codex applies the patch itself, no shell runs it"

// isApplyPatch reports whether Codex applies the call itself instead of
// running it: apply_patch (or applypatch) given the patch as its one
// argument, or a program that is nothing but apply_patch reading a
// here-document, perhaps after `cd DIR &&` — the forms Codex intercepts
// (codex-rs/apply-patch, invocation.rs).
func isApplyPatch(argv []string, program string) bool {
	if len(argv) == 2 && isApplyPatchName(argv[0]) {
		return true
	}
	if program == "" || !strings.Contains(program, "apply") {
		return false
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(program), "")
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	st := f.Stmts[0]
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.AndStmt && len(st.Redirs) == 0 {
		if !isCd(b.X) {
			return false
		}
		st = b.Y
	}
	return isPatchCall(st)
}

func isApplyPatchName(w string) bool { return w == "apply_patch" || w == "applypatch" }

// isCd reports whether st is `cd DIR`, and nothing more.
func isCd(st *syntax.Stmt) bool {
	call, ok := st.Cmd.(*syntax.CallExpr)
	return ok && len(st.Redirs) == 0 && len(call.Assigns) == 0 && len(call.Args) == 2 && call.Args[0].Lit() == "cd"
}

// isPatchCall reports whether st is `apply_patch <<'EOF' … EOF`.
func isPatchCall(st *syntax.Stmt) bool {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || len(call.Assigns) != 0 || len(call.Args) != 1 || !isApplyPatchName(call.Args[0].Lit()) {
		return false
	}
	return len(st.Redirs) == 1 && (st.Redirs[0].Op == syntax.Hdoc || st.Redirs[0].Op == syntax.DashHdoc)
}
