package interp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRunnerOptionsTables: the options the interpreter implements become
// runner options, those whose one state it always has are accepted in
// that state only, and every other option is a reason not to run it.
func TestRunnerOptionsTables(t *testing.T) {
	for _, tc := range []struct {
		set       string
		supported bool // becomes a runner option
		reason    bool // is refused
	}{
		{"-allexport", true, false}, {"+errexit", true, false}, {"-noexec", true, false},
		{"-noglob", true, false}, {"-nounset", true, false}, {"+xtrace", true, false}, {"-pipefail", true, false},
		{"-O:dotglob", true, false}, {"+O:expand_aliases", true, false}, {"-O:extglob", true, false},
		{"-O:globstar", true, false}, {"-O:nocaseglob", true, false}, {"-O:nullglob", true, false},
		{"-braceexpand", false, false}, {"+braceexpand", false, true},
		{"-hashall", false, false}, {"+hashall", false, true},
		{"+posix", false, false}, {"-posix", false, true},
		{"+monitor", false, false}, {"-monitor", false, true}, {"-noclobber", false, true},
		{"-O:lastpipe", false, true}, {"+O:nocasematch", false, true}, {"-O:", false, true},
		{"posix", false, true}, {"-", false, true},
	} {
		opts, reasons := runnerOptions([]string{tc.set})
		assert.Equal(t, tc.supported, len(opts) == 1, "%s: runner option", tc.set)
		assert.Equal(t, tc.reason, len(reasons) == 1, "%s: refused", tc.set)
	}
}

// TestEnvUnsupportedTable: each variable bash acts on by itself is a
// reason when set and not empty, once however often it appears; others,
// and empty values, are not.
func TestEnvUnsupportedTable(t *testing.T) {
	for _, name := range []string{"BASH_ENV", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "GLOBIGNORE", "CDPATH", "EXECIGNORE"} {
		got := envUnsupported([]string{name + "=x", name + "=y"})
		if assert.Len(t, got, 1, name) {
			assert.True(t, strings.HasPrefix(got[0], name+" is set: bash"), got[0])
		}
		assert.Empty(t, envUnsupported([]string{name + "="}), name)
	}
	assert.Empty(t, envUnsupported([]string{"PATH=/bin", "bash_env=x", "BASH_ENV_X=1", "HOME=/h"}))
	assert.Len(t, envUnsupported([]string{"BASH_FUNC_f%%=() { :; }"}), 1)
}
