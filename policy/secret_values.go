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

// publicPrefixes are the prefixes web frameworks give the variables they
// build into the pages they serve, so into every visitor's browser
// (Next.js's NEXT_PUBLIC_, Vite's VITE_, Create React App's REACT_APP_,
// Expo's EXPO_PUBLIC_, Nuxt's NUXT_PUBLIC_, Gatsby's GATSBY_, SvelteKit's
// PUBLIC_): an API key there is public by the framework's design, and a
// build needs it.
var publicPrefixes = [...]string{"EXPO_PUBLIC_", "GATSBY_", "NEXT_PUBLIC_", "NUXT_PUBLIC_", "PUBLIC_", "REACT_APP_", "VITE_"}

// neverPublic matches what no framework builds into a page by design: a
// password, a secret, a private key, a service role's key. A name with
// a public prefix that says so (PUBLIC_KEY_PASSWORD, VITE_CLIENT_SECRET)
// is a secret under a prefix that happens to match, or one put there by
// mistake, which the build would publish but the allowed hosts need not
// get first.
var neverPublic = &lazyRegexp{expr: `(?i)(SECRET|PASSW|PASSPHRASE|PRIVATE_?KEY|SERVICE_?ROLE|(^|_)PASS($|_)|(^|_)PWD$)`}

// publicByConvention reports whether name is one of those
// (publicPrefixes), and says nothing that is never public (neverPublic).
func publicByConvention(name string) bool {
	if neverPublic.get().MatchString(name) {
		return false
	}
	for _, p := range publicPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
