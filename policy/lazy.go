package policy

import (
	"regexp"
	"sync"
)

// lazyRegexp returns expr compiled on first use. The shim runs as a new
// process for every command and pays all of package initialisation each
// time; compiling every expression of the package there cost more than
// judging a command, while most commands need none of them.
// TestLazyRegexps compiles them all, so a typo still fails the tests and
// never a user's command.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
