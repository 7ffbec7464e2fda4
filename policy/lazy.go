package policy

import (
	"regexp"
	"sync"
)

// A lazyRegexp is an expression compiled on first use. The shim runs as a
// new process for every command and pays all of package initialisation
// each time; compiling every expression of the package there cost more
// than judging a command, while most commands need none of them. Declared
// as a package-level &lazyRegexp{expr: …}, it is laid out by the linker:
// nothing runs, and nothing is written, when the process starts.
// TestLazyRegexps compiles them all, so a typo still fails the tests and
// never a user's command.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// get returns the compiled expression.
func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}
