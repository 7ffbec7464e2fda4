package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// inertGoFlags are the go command's build and test flags that choose how
// it builds and tests the packages it was given — never another program
// (-toolexec, -exec, -vettool), another file to read as the build
// (-overlay, -modfile, -pgo), flags for the compiler or linker (-gcflags,
// -ldflags: -extld runs a program) or a place to write (-o, -pkgdir,
// -coverprofile). Sorted. https://pkg.go.dev/cmd/go#hdr-Build_flags and
// #hdr-Testing_flags.
var inertGoFlags = nameSet{
	"a", "asan", "buildmode", "buildvcs", "count", "cover", "covermode", "coverpkg", "failfast",
	"json", "mod", "modcacherw", "msan", "n", "p", "race", "short", "tags", "timeout", "trimpath", "v", "vet", "work", "x",
}

// inertGoflags reports whether as sets GOFLAGS to inert flags only
// (GOFLAGS=-count=1, GOFLAGS="-mod=vendor -tags=integration"), a literal
// value, and returns it as written.
func inertGoflags(name string, as *syntax.Assign) (string, bool) {
	if name != "GOFLAGS" || as.Value == nil || as.Append || as.Index != nil || as.Array != nil {
		return "", false
	}
	v := evalWord(as.Value)
	if !v.known || len(v.subst) > 0 || strings.TrimSpace(v.text) == "" {
		return "", false
	}
	for _, flag := range strings.Fields(v.text) {
		// go reads each field as one flag, -name or -name=value (a value
		// cannot be a separate field in GOFLAGS).
		if !strings.HasPrefix(flag, "-") {
			return "", false
		}
		flagName, value, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(flag, "-"), "-"), "=")
		if !inertGoFlags.has(flagName) || strings.ContainsFunc(value, notFlagValueChar) {
			return "", false
		}
	}
	return v.text, true
}

// notFlagValueChar reports whether r is outside what an inert flag's
// value is written with: words, numbers, durations, comma lists.
func notFlagValueChar(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return false
	}
	return !strings.ContainsRune(",._-", r)
}
