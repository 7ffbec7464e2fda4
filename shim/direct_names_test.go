package shim

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanDirectNames: a command named like a bash builtin or reserved
// word never runs directly, save the do-nothing builtins, which need no
// process at all; an environment variable bash treats specially at
// start-up leaves the command to bash. A program file of the same name
// on PATH changes neither.
func TestPlanDirectNames(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, name := range []string{"prog", "echo", "cd", "readarray", "time", "[[", "true", "false", ":", "%prog"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755))
	}
	env := []string{"PATH=" + dir, "PWD=" + dir, "SHLVL=1"}
	cl := CommandLine{Source: FromString, Plain: true}
	for _, tc := range []struct {
		name    string
		env     []string
		direct  bool
		builtin bool
		status  int
	}{
		{name: "prog", direct: true},
		{name: "true", direct: true, builtin: true, status: 0},
		{name: ":", direct: true, builtin: true, status: 0},
		{name: "false", direct: true, builtin: true, status: 1},
		{name: "echo"}, {name: "cd"}, {name: "readarray"}, {name: "time"}, {name: "[["},
		{name: "missing"},
		{name: "%prog"}, // a job spec to bash: `fg %prog`
		{name: "prog", env: []string{"IFS=:"}}, {name: "prog", env: []string{"BASH=/bin/bash"}},
		{name: "prog", env: []string{"SRANDOM=1"}}, {name: "prog", env: []string{"ENV=/x"}},
		{name: "prog", env: []string{"BASH_ENV=/x"}},
		{name: "prog", env: []string{"IFSX=:", "ENVY=1"}, direct: true},
	} {
		run, ok := planDirect(cl, []string{tc.name}, append(slices.Clone(env), tc.env...), dir)
		assert.Equal(t, tc.direct, ok, "%s %v", tc.name, tc.env)
		assert.Equal(t, tc.builtin, run.builtin, "%s %v", tc.name, tc.env)
		assert.Equal(t, tc.status, run.status, "%s %v", tc.name, tc.env)
		if ok && !run.builtin {
			assert.Equal(t, filepath.Join(dir, tc.name), run.path, tc.name)
		}
	}
}
