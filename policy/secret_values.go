package policy

import "strings"

// carriesUserinfo reports whether v holds a URL with a user part
// (scheme://user:password@host, scheme://token@host): a database's URL,
// a Go proxy's or a package index's with its credentials, a Sentry DSN.
// The variable's name says nothing (DATABASE_URL, GOPROXY), its value
// does. v may list several URLs (GOPROXY's commas and pipes, an index's
// spaces).
func carriesUserinfo(v string) bool {
	for {
		_, rest, ok := strings.Cut(v, "://")
		if !ok {
			return false
		}
		end := strings.IndexAny(rest, "/?#,| \t\n")
		if end < 0 {
			end = len(rest)
		}
		if strings.Contains(rest[:end], "@") {
			return true
		}
		v = rest[end:]
	}
}
