package policy

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// In CI, a printed workflow command or an append to the runner's files
// changes later steps: needs review there, under any wildcard.
func TestCIWorkflowCommands(t *testing.T) {
	w := newWorld(t)
	w.write(filepath.Join(w.ws, "notes.txt"), "hello\n##vso[task.prependpath]/tmp/evil\n")
	w.write(filepath.Join(w.ws, "clean.txt"), "hello\n")
	ci := []string{
		"echo '##vso[task.prependpath]/tmp/evil'",
		"echo '##vso[task.setvariable variable=X]y'",
		"echo '##VSO[TASK.SETVARIABLE variable=X]y'",
		"echo '::set-output name=x::y'",
		"echo '::set-env name=LD_PRELOAD::/tmp/x.so'",
		"echo '::add-path::/tmp/evil'",
		"printf '::%s::%s\\n' set-env 'name=X::y'",
		"printf '\\x23#vso[task.setvariable variable=X]y\\n'",
		"echo -e '\\x3a:add-path::/tmp/evil'",
		"echo \"$PR_TITLE\"",
		"cat notes.txt",
		"grep -h vso notes.txt",
		"tr a-z A-Z < clean.txt",
		"echo 'export X=1' >> \"$GITHUB_ENV\"",
		"echo /tmp/evil >> $GITHUB_PATH",
		"echo x=1 | tee -a \"$GITHUB_OUTPUT\"",
		"echo 'curl x | sh' >> $BASH_ENV",
		"cat <<'EOF'\n::set-output name=x::y\nEOF",
		"cat <<< '##vso[task.setvariable variable=X]y'",
		"cat <<EOF\n$PR_BODY\nEOF",
		// Printed onto a file, then printed from it; or onto stderr,
		// which the runner reads too.
		"echo \"$PR_TITLE\" > out.txt; cat out.txt",
		"cat > out.txt <<EOF\n$PR_BODY\nEOF\ngrep . out.txt",
		"echo \"$PR_TITLE\" >&2",
		"echo \"$PR_TITLE\" > /dev/stderr",
		"echo \"$PR_TITLE\" > out.txt 1>&2",
		"printf '%s\\n' \"$PR_TITLE\" &>/dev/stdout",
	}
	for _, env := range []map[string]string{{"GITHUB_ACTIONS": "true"}, {"TF_BUILD": "True"}, {"CI": "true"}} {
		w.env = env
		for _, cmd := range ci {
			res := w.evaluate(cmd, "echo **", "printf **", "cat **", "grep **", "tr **", "tee **")
			require.NotEqual(t, Safe, res.Risk, "%v %q", env, cmd)
			require.NotEqual(t, Allow, res.Decision, "%v %q: %v", env, cmd, res.Reasons)
		}
		for _, cmd := range []string{
			"echo '::add-mask::secret-value'",
			"echo '::group::Build'",
			"echo building",
			"cat clean.txt",
			"grep -n hello clean.txt",
			"printf '%s\\n' done",
			"cat <<'EOF'\nplain text\nEOF",
			"sed -n '10,20p' clean.txt",
		} {
			w.requireSafe(cmd)
		}
		// What goes to a file reaches no runner: an agent's own plumbing
		// writing its snapshot file is not a workflow command.
		for _, cmd := range []string{
			"echo \"$PR_TITLE\" > out.txt",
			"echo \"$PR_TITLE\" 1>&2 >> out.txt",
			"cat > out.txt <<EOF\n$PR_BODY\nEOF",
			"printf '%s' \"$PR_TITLE\" &> out.txt",
		} {
			res := w.evaluate(cmd, "echo **", "printf **", "cat **")
			require.Equal(t, Allow, res.Decision, "%v %q: %v", env, cmd, res.Reasons)
		}
	}
	// Outside CI, printing is printing.
	w.env = map[string]string{}
	w.requireSafe("cat notes.txt")
	w.requireSafe("echo \"$PR_TITLE\"")
	w.requireSafe("echo '##vso[task.prependpath]/tmp/evil'")
}

// The runner's file named by its path in the environment is the same
// file as the variable.
func TestCIControlFileByPath(t *testing.T) {
	w := newWorld(t)
	envFile := filepath.Join(w.root, "runner", "set_env_1")
	w.write(envFile, "")
	w.env = map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_ENV": envFile}
	res := w.evaluate("echo X=1 >> "+envFile, "echo **")
	require.NotEqual(t, Allow, res.Decision, "%v", res.Reasons)
	require.Contains(t, res.Reasons[0], "GITHUB_ENV")
}

// Writes into node_modules/**/bin and node_modules/.bin are code-loading
// everywhere: the next npm run runs them.
func TestNodeModulesBinIsCodeLoading(t *testing.T) {
	w := newWorld(t)
	for _, cmd := range []string{
		"echo 'curl x | sh' > node_modules/.bin/eslint",
		"echo x > node_modules/eslint/bin/eslint.js",
		"echo x > packages/a/node_modules/@scope/tool/bin/run",
		"cp evil node_modules/.bin/tsc",
	} {
		res := w.evaluate(cmd, "echo **", "cp **")
		require.NotEqual(t, Allow, res.Decision, "%q: %v", cmd, res.Reasons)
	}
	res := w.evaluate("echo x > node_modules/eslint/lib/x.js", "echo **")
	require.Equal(t, Allow, res.Decision, "%v", res.Reasons)
}
