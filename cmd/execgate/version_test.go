package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionAndUnknownCommand(t *testing.T) {
	for _, args := range [][]string{{"execgate", "--version"}, {"execgate", "version"}} {
		var out, errb strings.Builder
		code := run(args, strings.NewReader(""), &out, &errb)
		assert.Equal(t, exitOK, code, errb.String())
		assert.Equal(t, "execgate "+version()+"\n", out.String())
		assert.Contains(t, out.String(), runtime.Version())
	}
	var out, errb strings.Builder
	code := run([]string{"execgate", "chek", "ls"}, strings.NewReader(""), &out, &errb)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "execgate: unknown command \"chek\" (execgate --help lists them)\n", errb.String())
	assert.Empty(t, out.String())
}
