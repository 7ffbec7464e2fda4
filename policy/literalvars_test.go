package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A variable the program sets to known text once, before reading it,
// prints known text in CI: an agent's own error message is not text from
// outside. Anything that may give it another value keeps it unknown.
func TestCILiteralVariables(t *testing.T) {
	w := newWorld(t)
	for _, env := range []map[string]string{{"CI": "true"}, {"GITHUB_ACTIONS": "true"}} {
		w.env = env
		for _, cmd := range []string{
			"snap=/tmp/snap.sh; echo \"Error: no file at $snap\" >&2",
			"snap=/tmp/snap.sh\nif [ ! -s \"$snap\" ]; then\n  echo \"Error: Snapshot file was not created at $snap\" >&2\n  exit 1\nfi",
			"snap=/tmp/snap.sh; echo \"at ${snap}\"",
			"m='hello there'; cat <<EOF\n$m\nEOF",
			"m=hello; printf 'file %s\\n' \"$m\"",
			"snap=/tmp/a; g=\"$snap\"; echo \"$snap\"",
		} {
			w.requireSafe(cmd)
		}
		for _, cmd := range []string{
			"echo \"$snap\" >&2; snap=/tmp/a",                          // read before it is set
			"snap=/tmp/a; snap=$(cat x); echo \"$snap\"",               // set again
			"snap=/tmp/a; read -r snap; echo \"$snap\"",                // read in
			"snap=/tmp/a; for snap in x; do :; done; echo \"$snap\"",   // a loop variable
			"snap=/tmp/a; : \"${snap:=x}\"; echo \"$snap\"",            // ${snap:=…}
			"snap=/tmp/a; printf -v snap %s \"$X\"; echo \"$snap\"",    // printf -v
			"snap=/tmp/a; declare snap=\"$X\"; echo \"$snap\"",         // declare
			"snap=/tmp/a; unset snap; echo \"$snap\"",                  // unset: the environment's
			"snap=/tmp/a; let snap=snap+1; echo \"$snap\"",             // let
			"snap=/tmp/a; ((snap=RANDOM)); echo \"$snap\"",             // arithmetic
			"snap=/tmp/a; g() { snap=\"$X\"; }; g; echo \"$snap\"",     // a function sets it
			"snap=/tmp/a; trap 'snap=$X' DEBUG; echo \"$snap\"",        // a trap sets it
			"snap=/tmp/a; eval 'snap=$X'; echo \"$snap\"",              // eval sets it
			"snap=/tmp/a; declare -n r=snap; r=\"$X\"; echo \"$snap\"", // a nameref
			"snap=/tmp/a; declare \"$n=$X\"; echo \"$snap\"",           // a name only known at run time
			"snap=/tmp/a; echo $snap",                                  // unquoted: split and globbed
			"if true; then snap=/tmp/a; fi; echo \"$snap\"",            // not a statement of its own
			"snap=/tmp/a cmd; echo \"$snap\"",                          // a command's environment
			"true && snap=/tmp/a; echo \"$snap\"",                      // behind a condition
			"(snap=/tmp/a); echo \"$snap\"",                            // in a subshell
			"snap=~; echo \"$snap\"",                                   // a tilde
			"snap='::set-env name=X::y'; echo \"$snap\"",               // known, and a workflow command
			"RANDOM=5; echo \"$RANDOM\"",                               // the shell sets it
			"REPLY=a; read; echo \"$REPLY\"",                           // read sets REPLY unnamed
			"OPTARG=a; getopts a: o; echo \"$OPTARG\"",                 // getopts sets OPTARG
			"snap=/tmp/a; cat <<EOF\n$snap $X\nEOF",                    // another variable beside it
		} {
			res := w.analyze(cmd)
			require.NotEqual(t, Safe, res.Risk, "%v %q", env, cmd)
			require.Contains(t, ruleIDs(res), "ci-workflow-command", "%v %q: %v", env, cmd, res.Reasons)
		}
	}
}

// In CI, output sent to a file a variable names, set to literal text, reaches
// no runner; the same variable set to a device, or also set otherwise, may.
func TestCILiteralFileTarget(t *testing.T) {
	w := newWorld(t)
	w.env = map[string]string{"CI": "true"}
	for _, cmd := range []string{
		"out=notes.txt; echo \"$PR_TITLE\" > \"$out\"",
		"out=notes.txt; cat >> \"$out\" <<EOF\n$PR_BODY\nEOF",
	} {
		require.NotContains(t, ruleIDs(w.analyze(cmd)), "ci-workflow-command", cmd)
	}
	for _, cmd := range []string{
		"out=/dev/stdout; echo \"$PR_TITLE\" > \"$out\"",
		"out=notes.txt; out=/dev/stderr; echo \"$PR_TITLE\" > \"$out\"",
		"out=notes.txt; read -r out; echo \"$PR_TITLE\" > \"$out\"",
		"echo \"$PR_TITLE\" > \"$out\"",
		"out=notes.txt; declare \"$n=/dev/stdout\"; echo \"$PR_TITLE\" > \"$out\"",
	} {
		require.Contains(t, ruleIDs(w.analyze(cmd)), "ci-workflow-command", cmd)
	}
	// Outside CI nothing of this is a finding.
	w.env = map[string]string{}
	require.NotContains(t, ruleIDs(w.analyze("out=notes.txt; declare \"$n=/dev/stdout\"; echo \"$PR_TITLE\" > \"$out\"")), "ci-workflow-command")
}

// ruleIDs are the rules of a result's reasons.
func ruleIDs(res Result) []string {
	var out []string
	for _, s := range res.Segments {
		for _, r := range s.Reasons {
			out = append(out, r.Rule)
		}
	}
	return out
}
